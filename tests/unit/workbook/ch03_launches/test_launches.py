"""Chapter 3's program: the variants compute the same thing, the launch
counts read from HLO move the way the chapter says, and the measuring
functions return the rows it plots."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.pallas.mosaic import chains
from helpers.workbook.ch03_launches import (exercises, for_h100, on_gpu,
                                            variants)
from helpers.xla import crosscompile

WEIGHTS = variants.init_weights(jax.random.key(0))
KEY = jax.random.key(1)
STEPS = 64


def run(name, steps=STEPS):
    variant = variants.VARIANTS[name]
    return np.asarray(variant(WEIGHTS, KEY,
                              variants.steps_argument(variant, steps)))


@pytest.mark.slow
@pytest.mark.parametrize("group", variants.SAME_NOISE)
def test_variants_with_the_same_noise_agree(group):
    first = run(group[0])
    for name in group[1:]:
        np.testing.assert_allclose(run(name), first, rtol=1e-5,
                                   err_msg=name)


@pytest.mark.slow
def test_float64_weights_give_a_float64_state():
    with jax.enable_x64(True):
        weights = variants.init_weights(KEY, dtype=jnp.float64)
        assert variants.scan_hoisted(weights, KEY, 8).dtype == jnp.float64


def test_launch_counts_follow_the_fixes():
    per_step = {name: variants.launches_per_step(
        variant, WEIGHTS, KEY, variants.steps_argument(variant, STEPS))
        for name, variant in variants.VARIANTS.items()}
    # the unknown trip count adds the condition to every step
    assert per_step["while, traced bound"] == \
        per_step["while, static bound"] + 1
    # the random numbers leave the loop
    assert per_step["scan, noise outside"] < per_step["scan, split per step"]


def test_unrolling_divides_launches_per_step():
    one = variants.launches_per_step(variants.scan_hoisted, WEIGHTS, KEY,
                                     STEPS)
    eight = variants.launches_per_step(variants.scan_hoisted, WEIGHTS, KEY,
                                       STEPS, unroll=8)
    assert eight < one


def test_measure_returns_a_row_per_variant_and_dtype():
    rows = variants.measure(["scan, softplus hoisted"], steps=STEPS,
                            repeat=2)
    assert [(r["variant"], r["dtype"]) for r in rows] == [
        ("scan, softplus hoisted", "float32"),
        ("scan, softplus hoisted", "float64")]
    assert all(r["us_per_step"] > 0 for r in rows)


@pytest.mark.slow
def test_grid_covers_every_setting():
    rows = variants.measure_grid([16, 32], [1, 4], [12], repeat=1)
    assert {(r["steps"], r["unroll"]) for r in rows} == {
        (16, 1), (16, 4), (32, 1), (32, 4)}


@pytest.mark.slow
def test_goals_are_measured_in_one_run():
    goals = on_gpu.measure_goals(steps=16, chains=3, repeat=1)
    assert set(goals["one_chain_s"]) == {
        "gpu fused_scan", "gpu fused_scan, triton",
        "gpu latency kernel, triton", "gpu while, traced bound",
        "cpu scan, softplus hoisted", "cpu while, traced bound"}
    # here the latency kernel's exact stand-in for tanh follows the scan
    assert goals["latency_kernel_error"] < 1e-5
    times = dict(goals["many_chains_s"])
    mosaic = times.pop("gpu fused, one chain per thread")
    if chains.interpreter_missing():  # a failure is recorded, not raised
        assert mosaic.startswith("failed: NotImplementedError")
    else:
        assert mosaic > 0
    assert all(t > 0 for t in times.values())


@pytest.mark.slow
def test_each_command_buffer_setting_compiles_in_this_process():
    rows = on_gpu.measure_command_buffers(
        "FUSION,CONDITIONAL", ["while, static bound"], steps=16, repeat=1)
    assert set(rows) == {"graphs off", "default", "default + WHILE",
                         "smallest graphs"}
    assert all({r["variant"] for r in table} == {"while, static bound"}
               for table in rows.values())


def test_a_compiler_option_xla_does_not_know_is_refused():
    weights, key = variants.init_weights(jax.random.key(0)), \
        jax.random.key(1)
    with pytest.raises(Exception, match="not_a_flag"):
        variants.compiled(variants.scan_hoisted, weights, key, 16,
                          compiler_options={"xla_not_a_flag": 1})


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_kernels_per_step_as_xla_gpu_compiles_them_for_an_h100():
    # The chapter's own call (8000 steps): a test run compiles it once.
    rows = {r["variant"]: r for r in crosscompile.run(
        for_h100.launches_for_gpu, variants.STEPS)}
    per_step = {name: r["launches per step"] for name, r in rows.items()}
    # the unknown trip count adds the condition's kernel to every step
    assert per_step["while, traced bound"] == (
        per_step["while, static bound"] + 1)
    assert per_step["scan, noise outside"] < per_step["scan, split per step"]
    # the whole loop is one Mosaic GPU kernel on Hopper
    # (helpers.pallas.mosaic.chains)
    fused = rows["fused_scan (one kernel)"]
    assert fused["custom calls"] == ["mosaic_gpu_v2"]
    assert fused["launches per step"] < 0.1


@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_exercise_3_1_allows_the_kernels_that_draw_the_noise_once():
    # On an H100 the noise fuses into the MLP's kernels either way, and
    # the solution adds a few kernels before its loop (the GPU visit of
    # 2026-11-25 failed it for that): those pass, one more a step fails.
    counts = crosscompile.run(exercises.kernels_for_gpu)
    steps = exercises.EXERCISE_STEPS
    starter, solution = counts["starter"] / steps, counts["solution"] / steps
    assert solution > starter
    assert exercises.launches_within(solution, starter) is True
    verdict = exercises.launches_within(starter + 1, starter)
    assert "kernels per step; the starter launches" in verdict


def test_xprof_counts_the_recorded_profiles_kernels_without_copies():
    # A GPU profile kept by the H100 visit, read here: XProf's kernel table
    # holds every device event of the trace except its memory copies.
    from helpers.measuring import recorded
    from helpers.profiler import trace
    folder = recorded.profile_folder(
        on_gpu.kept_profile("scan, noise outside"))
    if not folder.exists():
        pytest.skip(f"no kept profile at {folder}")
    events = trace.device_events(trace.load(str(folder)))
    kernels = events[~events["name"].str.startswith(("Memcpy", "Memset"))]
    assert len(kernels) < len(events)
    assert on_gpu.xprof_launches(folder, 1) == len(kernels)
