"""Chapter 6's predictions: worked from other chapters' recordings where
they have the numbers, held against a run; each outcome flips with the
data, and a run that cannot judge says nothing."""

import copy

import pytest

from helpers.measuring import results
from helpers.workbook.ch06_xla_flags import flag_runs, predictions

GPU = "NVIDIA H100 80GB HBM3"
P = predictions


def run(ratios, again=1.002):
    """A recording of both programs: the default twice (0.2% apart), and
    each setting at ``ratios[flag]`` times the default's time (1 ms), all
    with the same module digest."""
    rows = []
    for program, flags in flag_runs.GPU_SETTINGS.items():
        rows += [{"program": program, "flags": "(none)", "median s": 1e-3,
                  "kernels": 302, "module": "m"},
                 {"program": program, "flags": flag_runs.AGAIN,
                  "median s": again * 1e-3, "module": "m"}]
        rows += [{"program": program, "flags": flag, "median s":
                  ratios.get(flag, 1.0) * 1e-3, "module": "m"}
                 for flag in flags if flag]
    return {"rows": rows}


def graphs(off_us, on_us=6.0, launches=5.0):
    """Chapter 3's command-buffer recording, the graph loop only."""
    def entry(us):
        return [{"variant": P.GRAPH_LOOP, "dtype": "float32",
                 "launches_per_step": launches, "us_per_step": us}]
    return {"graphs off": entry(off_us), "default": entry(on_us)}


CLAIMS = {"precision": {"n": [4096, 8192], "precision": ["bfloat16 inputs"]
                        * 2, "ms": [0.5, 2.0],
                        # 2 x 8192^3 flop in it: 1000 TFLOP/s
                        "device ms": [0.3, 2 * 8192 ** 3 / 1e15 * 1e3]}}
BODY = {"body operations": 3, "body is a CUDA graph": False,
        "fewest in a graph": 5}


def guesses(data, body=BODY, off_us=16.0):
    return [P.gemm_any({"default": "a", "false": "a"}),
            P.autotune_off(CLAIMS, 4096),
            P.graphs_off(graphs(off_us), data, body), P.scheduler()]


AS_PREDICTED = {P.AUTOTUNE_OFF: 40.0}


def test_the_graph_saving_is_worked_from_chapter_3():
    made = P.graphs_off(graphs(16.0), run({}), BODY)
    saving, added, share = (w.markdown() for w in made.worked)
    # (16 - 6) / 5 = 2 µs a kernel
    assert r"\frac{16\,\mu\text{s} - 6\,\mu\text{s}}{5} \approx 2\," in saving
    # the body is below a graph's minimum: no kernel loses a graph
    assert made.expected == "the same" and made.estimate.seconds == 0
    assert made.basis == {"compiled": True, "kernels": 302,
                          "compiled_kernels": 0, "body_in_graph": False}


def test_a_body_that_is_a_graph_predicts_the_time_it_loses():
    body = {**BODY, "body is a CUDA graph": True}
    made = P.graphs_off(graphs(16.0), run({}), body)
    assert made.expected == "slower"
    assert abs(made.estimate.seconds - 100 * 3 * 2e-6) < 1e-12
    # 300 kernels at 2 µs: 600 µs, 60% of the 1 ms call
    assert r"\approx 60\,\%" in made.worked[2].markdown()
    small = P.graphs_off(graphs(6.05), run({}), body)  # 0.01 µs a kernel
    assert small.expected == "the same"


def test_without_the_compiler_the_recorded_kernels_bound_it():
    made = P.graphs_off(graphs(16.0), run({}), None)
    # 302 kernels at 2 µs: 604 µs at most
    assert made.expected == "slower" and made.basis["compiled"] is False
    assert r"302 \times 2\,\mu\text{s} \approx 604\,\mu\text{s}" in \
        made.worked[1].markdown()
    assert P.graphs_off(graphs(6.01), run({}), None).expected == "the same"
    bare = P.graphs_off(None, run({}), BODY)
    assert bare.expected == "slower" and bare.worked == ()


def test_a_tuned_kernel_is_estimated_from_chapter_5s_rate():
    made = P.autotune_off(CLAIMS, 4096)
    # 2 x 4096^3 flop at 1000 TFLOP/s: 137 µs
    assert r"\approx 137\,\mu\text{s}" in made.worked[0].markdown()
    assert made.expected == "slower" and made.basis == {"bf16_n": 8192}
    assert P.autotune_off(None, 4096).estimate is None


def test_the_gemm_prediction_follows_the_digests():
    assert P.gemm_any({"a": "x", "b": "x"}).expected == "the same"
    assert P.gemm_any({"a": "x", "b": "y"}).expected is None
    assert P.gemm_any(None).expected is None


def test_a_run_as_predicted_holds_them_all():
    data = run(AS_PREDICTED)
    got = P.held_numbers(data, guesses(data))
    assert got["made"] == 4 and got["missed"] == []
    graphs = got["estimates"][P.GRAPHS_OFF]
    assert (graphs["predicted"], graphs["added"]) == (0, 0)
    assert graphs["noise"] == pytest.approx(2e-6)
    # 137 µs estimated; the default took 1 ms, 7.28 times it
    tuned = got["estimates"][P.AUTOTUNE_OFF]
    assert tuned["default"] == pytest.approx(7.28, abs=0.01)
    assert tuned["setting"] == pytest.approx(291, abs=1)
    assert tuned["tflops"] == pytest.approx(3.44, abs=0.01)
    assert P.GEMM_ANY not in got["estimates"]  # nothing worked out


def test_a_setting_that_moved_otherwise_is_named():
    data = run({P.GRAPHS_OFF: 1.3, P.GEMM_ANY: 1.5})
    got = P.held_numbers(data, guesses(data))
    assert got["estimates"][P.GRAPHS_OFF]["added"] == pytest.approx(300e-6)
    assert got["missed"] == [P.GEMM_ANY, P.AUTOTUNE_OFF, P.GRAPHS_OFF]


def test_within_the_noise_is_the_same_and_without_it_nothing_is_judged():
    data = run({**AS_PREDICTED, P.AUTOTUNE_OFF: 1.001})
    assert P.outcome(data, "matmul_epilogue", P.AUTOTUNE_OFF) == "the same"
    once = copy.deepcopy(data)
    once["rows"] = [r for r in once["rows"] if r["flags"] != flag_runs.AGAIN]
    assert P.held_numbers(once, guesses(once))["seen"] == {}


def test_no_prediction_is_judged_but_not_counted():
    data = run(AS_PREDICTED)
    got = P.held_numbers(data, [P.gemm_any(None), P.scheduler()])
    assert got["made"] == 1 and got["missed"] == []
    assert set(got["seen"]) == {P.GEMM_ANY, P.SCHEDULER}


def test_the_table_column_gets_each_call():
    made = guesses(run({}))
    calls = P.expected(made)
    assert calls[("matmul_epilogue", P.AUTOTUNE_OFF)] == "slower"
    assert calls[("small_kernels", P.SCHEDULER)] == "the same"
    assert P.expected([P.gemm_any(None)]) == {
        ("matmul_epilogue", P.GEMM_ANY): None}


def test_every_prediction_names_a_setting_the_chapter_runs():
    for p in guesses(run({})):
        assert p.flag in flag_runs.GPU_SETTINGS[p.program]
        assert p.expected in ("slower", "faster", "the same", None)
    worked = [w for p in guesses(run({})) for w in p.worked]
    assert len(worked) == 4 and all("$$" in w.markdown() for w in worked)


def test_the_reference_recordings_give_every_worked_number():
    def data(name):
        return results.reference(name).data
    effects = data("06_xla_flags/effects")
    made = [P.gemm_any({"a": "x", "b": "x"}),
            P.autotune_off(data("05_transformations/claims"), 4096),
            P.graphs_off(data("03_launches/command_buffers"), effects,
                         BODY), P.scheduler()]
    assert all(p.estimate for p in made[1:3])
    got = P.held_numbers(effects, made)
    assert set(got["estimates"]) == {P.AUTOTUNE_OFF, P.GRAPHS_OFF}
    assert got["made"] >= 3
