"""Chapter 4's workbook: the attention block, its profile, the A/A and
power calibrations of helpers.measuring.stats, and Exercise 4.1."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats as scipy_stats

from helpers.measuring import stats
from helpers.profiler import xprof_tables
from helpers.workbook.ch04_profiling import (attention, exercises, noise,
                                             verdicts)
from helpers.xla import crosscompile

SMALL = dict(batch=2, seq=16, n_embd=32, n_head=4)


@pytest.mark.slow
def test_einsum_and_matmul_blocks_agree_and_are_causal():
    params, x = attention.init(jax.random.key(0), **SMALL)
    fns = attention.versions(SMALL["n_head"])
    y = fns["einsum"](params, x)
    np.testing.assert_allclose(y, fns["matmul"](params, x), rtol=1e-5,
                               atol=1e-5)
    later_changed = x.at[:, 10:].set(0.0)
    np.testing.assert_allclose(fns["einsum"](params, later_changed)[:, :10],
                               y[:, :10], rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_profile_calls_labels_each_kernel_with_its_call_and_scope(tmp_path):
    params, x = attention.init(jax.random.key(0), **SMALL)
    kernels = attention.profile_calls(attention.versions(SMALL["n_head"]),
                                      params, x, calls=6, folder=tmp_path)
    assert set(kernels["scope"]) == set(attention.SCOPES)
    calls = attention.per_call(kernels)
    counts = calls.groupby(["version", "scope"]).size()
    assert (counts == 6).all() and len(counts) == 4
    assert (calls["dur_us"] > 0).all()
    table = attention.compare_scopes(kernels)
    assert list(table["scope"]) == list(attention.SCOPES)
    assert set(table["verdict"]) <= {"einsum faster", "matmul faster",
                                     "no detectable difference",
                                     verdicts.NO_CLEAR}


@pytest.mark.slow
def test_aa_trials_on_real_timings_keep_false_positives_at_alpha():
    """The same function against itself, runs shuffled, 200 times: a
    'difference' may be found in about 5% of trials, not more."""
    f = jax.jit(lambda x: jnp.sin(x) @ x)
    trials = noise.aa_trials(f, jnp.ones((32, 32)), trials=200)
    false_positives = int((trials["verdict"] != stats.VERDICTS[2]).sum())
    test = scipy_stats.binomtest(false_positives, len(trials), 0.05,
                                 alternative="greater")
    assert test.pvalue > 0.01, false_positives / len(trials)


@pytest.mark.slow
@pytest.mark.parametrize("spread", [0.02, 0.05, 0.10])
def test_required_samples_finds_a_3_percent_difference_90_percent(spread):
    n = stats.required_samples(0.03, spread)
    power = noise.synthetic_power(0.03, spread, n, trials=400)
    test = scipy_stats.binomtest(round(power * 400), 400, 0.90,
                                 alternative="less")
    assert test.pvalue > 0.01, (n, power)


def test_familywise_error_of_nine_tests():
    p_values = np.random.default_rng(0).uniform(size=9 * 2000)
    rates = noise.familywise(p_values, tests=9)
    assert rates["families"] == 2000
    assert rates["any_p_below_alpha"] == pytest.approx(1 - 0.95 ** 9,
                                                       abs=0.03)
    assert rates["bonferroni"] <= 0.06
    with pytest.raises(ValueError, match="at least 9 p-values"):
        noise.familywise(p_values[:3])


@pytest.mark.slow
def test_verdict_stability_grows_with_the_sample_size():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.03, 400), rng.normal(1.03, 0.03, 400)
    table = noise.verdict_stability(a, b, [5, 100], draws=100)
    fractions = table[list(stats.VERDICTS)].sum(axis=1)
    np.testing.assert_allclose(fractions, 1.0)
    assert table["a faster"].iloc[1] > table["a faster"].iloc[0]
    assert table["a faster"].iloc[1] > 0.95
    with pytest.raises(ValueError, match="exceeds the pools"):
        noise.verdict_stability(a, b, [500])
    named = noise.verdict_stability(a, b, [5], draws=10,
                                    names=("einsum", "matmul"))
    assert list(named.columns) == ["n", "einsum faster", "matmul faster",
                                   "no detectable difference"]


@pytest.mark.slow
def test_exercise_4_1_grades_starter_and_solution():
    assert not exercises.which_is_faster.check(exercises.starter).passed
    assert exercises.which_is_faster.check(exercises.solution).passed


@pytest.mark.slow
def test_blocked_measurement_fails_exercise_4_1_even_with_many_runs():
    def blocked(run):
        for _ in range(5):
            run("a"), run("b")
        a = [run("a") for _ in range(150)]
        b = [run("b") for _ in range(150)]
        return stats.compare(a, b)

    report = exercises.which_is_faster.check(blocked)
    assert not report.passed
    assert any("mix the runs" in hint for hint in report.failed_hints())


def _too_few_runs(run):
    """Warm, alternating, but 20 runs a side: too few to see 3%."""
    for _ in range(8):
        run("a"), run("b")
    a, b = [], []
    for _ in range(20):
        a.append(run("a"))
        b.append(run("b"))
    return stats.compare(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("design, correct", [
    (exercises.solution, True), (exercises.starter, False),
    (_too_few_runs, False)])
def test_exercise_4_1_grading_errs_less_than_once_in_a_hundred(design,
                                                               correct):
    # Each case's chance of a right trial, measured on 100 fresh seeds
    # (not the grading's own); then the binomial chance that grading
    # reaches the wrong conclusion about the whole exercise.
    from scipy import stats as scipy_stats
    p_right = [np.mean([exercises.trial(design, i, 500_000 + 1000 * i + s)[0]
                        for s in range(100)])
               for i in range(len(exercises.CASES))]
    passes_case = [scipy_stats.binom.sf(exercises.PASS_TRIALS - 1,
                                        exercises.TRIALS, p) for p in p_right]
    if correct:  # it fails if any case fails
        assert 1 - np.prod(passes_case) < 0.01, p_right
    else:        # it passes only if every case passes
        assert np.prod(passes_case) < 0.01, p_right


def test_a_learner_function_that_breaks_is_reported_not_raised():
    report = exercises.which_is_faster.check(lambda run: run("c"))
    assert not report.passed
    assert "takes 'a' or 'b'" in report.outcomes[0].detail
    report = exercises.which_is_faster.check(lambda run: 0.5)
    assert "returned a float" in report.outcomes[0].detail


def test_simulated_machine_errors():
    machine = exercises.SimulatedMachine(1.0, 1.0, seed=0)
    with pytest.raises(ValueError, match="takes 'a' or 'b'"):
        machine("c")
    with pytest.raises(exercises.BudgetExceeded, match="more than"):
        for _ in range(exercises.BUDGET + 1):
            machine("a")


@pytest.mark.slow
def test_measure_on_gpu_runs_here_and_is_json_ready(monkeypatch):
    import json

    monkeypatch.setattr(attention, "shape", lambda: SMALL)
    result = attention.measure_on_gpu(calls=3, trials=2)
    json.dumps(result)
    assert set(result) == {"shape", "program_diff", "kernels_blocked",
                           "kernels_alternating", "calls_blocked",
                           "calls_alternating", "xprof_graphs", "xprof",
                           "wall", "aa", "fused"}
    assert set(result["fused"]["against_einsum"]) == {"xla", "pallas"}
    # every call of both versions has its own whole-call device time
    for order in ("blocked", "alternating"):
        calls = result[f"calls_{order}"]
        assert sorted(set(calls["version"])) == ["einsum", "matmul"]
        assert len(calls["call"]) == 2 * 3
        assert all(k > 0 for k in calls["kernels"])
    # XProf's device tables are empty on a CPU: each says why
    for views in (result["xprof_graphs"], result["xprof"]):
        assert all(isinstance(v, str) for v in views.values())
    assert len(result["aa"]["random"]["verdict"]) == 2
    assert result["wall"]["einsum"]["times"]


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason="needs JAX's CUDA plugin (make cross)")
def test_command_buffers_off_launch_each_kernel_on_its_own():
    """Compiled for an H100, the block runs as one command buffer (CUDA
    graph) holding its kernels; with NO_COMMAND_BUFFERS, as the same
    kernels launched one by one: what chapter 4's per-op profile needs."""
    graph = crosscompile.run(attention.launches_for_gpu, None)  # as chapter 4
    one_by_one = crosscompile.run(attention.launches_for_gpu,
                                  xprof_tables.NO_COMMAND_BUFFERS)
    assert graph[0] == "kCommandBuffer"
    inside = [step.strip() for step in graph[1:]]
    assert all(step.startswith(" ") for step in graph[1:]) and inside
    assert not any("kCommandBuffer" in step for step in one_by_one)
    assert sorted(one_by_one) == sorted(inside)


def test_exercise_4_2_accepts_holm_and_rejects_looser_or_stricter_rules():
    def bonferroni(p_values, alpha=0.05):
        return [p < alpha / len(p_values) for p in p_values]

    assert exercises.nine_tests.check(exercises.holm_solution).passed
    assert not exercises.nine_tests.check(exercises.holm_starter).passed
    report = exercises.nine_tests.check(bonferroni)
    assert not report.passed  # safe, but finds less than Holm
    assert report.outcomes[0].status == "pass"


def _module(scope):
    return f"""HloModule m
ENTRY %main (p: f32[4]) -> f32[4] {{
  %p = f32[4]{{0}} parameter(0)
  ROOT %fusion.1 = f32[4]{{0}} negate(%p), metadata={{op_name="jit(f)/{scope}/neg"}}
}}
"""


def test_each_version_s_kernels_get_scopes_from_its_own_program():
    """One instruction name, two programs, two different scopes."""
    import pandas as pd

    rows = [("a#0", 0.0, 10.0), ("fusion.1", 1.0, 2.0),
            ("b#0", 20.0, 10.0), ("fusion.1", 21.0, 3.0)]
    events = pd.DataFrame({
        "name": [r[0] for r in rows], "process": "/host:CPU",
        "thread": "t", "start_us": [r[1] for r in rows],
        "dur_us": [r[2] for r in rows], "hlo_op": "", "scope": "",
        "args": [{}] * 4})
    kernels = attention._label(events, {"a": _module("attn_q_k"),
                                        "b": _module("attn_att_v")})
    assert kernels[["version", "scope", "dur_us"]].values.tolist() == [
        ["a", "attn_q_k", 2.0], ["b", "attn_att_v", 3.0]]


@pytest.mark.slow
def test_power_and_coverage_on_resampled_timings():
    rng = np.random.default_rng(3)
    pool = rng.normal(1.0, 0.05 / 1.349, 3000)  # bell-shaped, spread 5%
    n = stats.required_samples(0.03, 0.05)
    # on the formula's own model, resampling reaches the promised power
    assert noise.resampled_power(pool, 0.03, n, trials=200) >= 0.8
    assert noise.resampled_power(pool, 0.03, 5, trials=200) < 0.5
    coverage = noise.interval_coverage(pool, [30], trials=100)
    assert 0.88 <= coverage["coverage"].iloc[0] <= 1.0


def test_each_product_is_a_share_of_the_block_s_counts():
    """The scores and the weighted values do the same work; their flops
    are the block's less its projections, and their bytes include the
    scores, which the block's floor keeps on the chip."""
    shape = dict(batch=8, seq=256, n_embd=768, n_head=12)
    flops, moved = attention.product_counts(**shape)
    block_flops, block_moved = attention.floor_counts(**shape)
    projections = 2 * 8 * 256 * 768 * (3 * 768 + 768)
    assert 2 * flops == block_flops - projections
    assert moved - 4 * 8 * 12 * 256 * 256 == 4 * 2 * 8 * 256 * 768


def test_the_floor_counts_agree_with_xla_on_the_flops():
    """The hand count of the block's products is XLA's count less the few
    operations per element of softmax and the biases (within 3%)."""
    from helpers.measuring import roofline

    shape = dict(batch=2, seq=64, n_embd=128, n_head=4)
    params, x = attention.init(jax.random.key(0), **shape)
    xla = roofline.cost(attention.versions(4)["einsum"], params, x)
    flops, moved = attention.floor_counts(**shape)
    assert flops <= xla.flops <= 1.03 * flops
    inputs_and_output = 4 * (2 * x.size + sum(p.size
                                             for p in params.values()))
    assert moved == inputs_and_output
