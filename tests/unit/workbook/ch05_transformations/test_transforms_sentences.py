"""Chapter 5's sentences on the GPU's numbers and on this machine's clocks:
each is computed from the data, so when the data flips, the sentence
does."""

import copy

import pandas as pd
import pytest

from helpers.measuring.results import Result
from helpers.workbook.ch05_transformations import (claims, clocks,
                                                   precision, predictions,
                                                   reference)

LOOP, INSIDE = claims.LOOP, claims.INSIDE


def _data():
    """A recording of `claims.measure`'s shape, with round numbers."""
    return {
        "sizes": claims.GPU_SIZES,
        "retraces": list(claims.EXPECTED_RETRACES),
        "compile_vs_run": {"first call s": 1.3, "later calls s": 1e-4},
        "donation": {"kept": {"aliased outputs": 0, "live MB": 268.4,
                              "old params deleted": False},
                     "donated": {"aliased outputs": 2, "live MB": 134.2,
                                 "old params deleted": True}},
        "vmap": {"batch": [256] * 3, "version": [LOOP, INSIDE, "vmap"],
                 "kernels": [1536, 1036, 6], "ms": [20.0, 2.0, 0.1],
                 "device ms": [30.0, 1.5, 0.01],
                 "kernel ms": [4.0, 1.6, 0.01]},
        "scan": {"length": [64, 64, 256, 256],
                 "version": ["scan", "unrolled"] * 2,
                 "compile ms": [100.0, 300.0, 100.0, 1000.0],
                 "run ms": [1.0, 0.3, 4.0, 1.0],
                 "run device ms": [1.0, 0.3, 4.0, 1.0],
                 "run kernel ms": [0.3, 0.3, 1.0, 1.0]},
        "remat": {"remat": [False, True], "temp MB": [1000.0, 400.0],
                  "ms": [5.0, 6.0], "device ms": [5.0, 6.0],
                  "kernel ms": [5.0, 6.0], "dots": [35, 41]},
        "forward": {"version": ["value_and_grad(has_aux=True), one jit",
                                "loss and grad, two jitted calls",
                                "loss and grad separately, one jit"],
                    "dots": [5, 7, 5], "ms": [0.2, 0.3, 0.25],
                    "device ms": [0.1, 0.2, 0.1],
                    "kernel ms": [0.1, 0.15, 0.1]},
        "precision": {"n": [8192] * 3,
                      "precision": [claims.HIGHEST, claims.DEFAULT,
                                    claims.BFLOAT16],
                      "rel error": [8e-7, 3e-4, 2.9e-3],
                      "ms": [22.0, 3.0, 2.0], "device ms": [21.0, 3.0, 2.0],
                      "kernel ms": [21.0, 3.0, 2.0],
                      "TFLOP/s": [50.0, 380.0, 550.0]}}


def test_times_reads_as_prose():
    assert [claims.times(r) for r in (0.386, 3.74, 197.5, 12962.0)] == [
        "0.39", "3.74", "198", "12,962"]


def test_the_jit_finding_is_words_and_flips_with_the_retraces():
    data = _data()
    found = claims.findings(data)[claims.JIT]
    assert found == ("retraced on exactly the 4 expected calls; the first "
                     "call, which compiles, 13,000 times as long as a "
                     "later one", "holds")
    data["retraces"][1] = True  # new values retraced: a broken cache
    found = claims.findings(data)[claims.JIT]
    assert found.verdict == "does not hold"
    assert found.summary.startswith("retraced on 5 of 7 calls")


def test_vmap_numbers_read_the_largest_batch_by_the_wall_clock():
    got = reference.vmap_numbers(_data())
    assert got["batch"] == 256 and got["vmap_ms"] == 0.1
    assert got["inside"] == pytest.approx(20.0)
    assert got["loop"] == pytest.approx(200.0)
    assert got["busy"] == pytest.approx(0.2)  # 4 ms of kernels in 20
    data = _data()
    data["vmap"]["ms"] = [20.0, 0.05, 0.1]  # the loop inside jit wins
    assert reference.vmap_numbers(data)["inside"] == pytest.approx(0.5)
    assert claims.findings(data)[claims.VMAP].verdict == "holds in part"


def test_scan_numbers_take_the_host_part_off_each_step():
    got = reference.scan_numbers(_data(), 60e-6)
    assert got["compile"] == pytest.approx(10.0)
    assert got["run"] == pytest.approx(0.25)
    assert (got["scan_ms"], got["unrolled_ms"]) == (4.0, 1.0)
    assert got["scan_step_us"] == pytest.approx((4e-3 - 60e-6) / 256 * 1e6)
    assert "scan_step_us" not in reference.scan_numbers(_data())


def test_remat_and_forward_numbers():
    remat = claims.remat_numbers(_data())
    assert (remat["memory"], remat["extra"]) == (pytest.approx(0.4), 6)
    forward = reference.forward_numbers(_data())
    assert (forward["dots"], forward["two_calls_dots"],
            forward["one_jit_dots"]) == (5, 7, 5)
    assert forward["wall"] == pytest.approx(1.5)
    assert forward["kernels"] == pytest.approx(1.5)


def _compiled(temp=(889.0, 319.0)):
    return pd.DataFrame({"remat": [False, True], "temp MB": list(temp),
                         "dots": [35, 41], "bytes per example":
                         [233472.0, 49152.0]}).set_index("remat")


def _reference(data, jaxlib="0.11.2"):
    return Result("05_transformations/claims", "recorded", data,
                  {"device": "H100", "jaxlib": jaxlib})


def test_remat_plan_numbers_read_xla_gpus_plan_against_the_predictions():
    memory = predictions.remat_bytes(1024, 4096, 6)
    got = reference.remat_plan_numbers(_compiled(), memory)
    assert (got["plain_dots"], got["remat_dots"]) == (35, 41)
    assert got["batch_ratio"] == pytest.approx(233472 / 49152)
    assert got["memory"] == pytest.approx(319 / 889)
    assert got["plain_share"] == pytest.approx(233472 / memory[0].value)


def test_precision_numbers_read_the_largest_n():
    data = _data()
    got = precision.precision_numbers(data)
    assert got["clock"] == "device ms" and got["n"] == 8192
    assert got["default"] == pytest.approx(1.5)
    assert got["highest"] == pytest.approx(10.5)
    assert got["error"] == pytest.approx(2.9e-3)
    # Float32's own two precisions: TF32 7 times as fast, 375 times the
    # error
    assert got["f32_speedup"] == pytest.approx(7.0)
    assert (got["default_ms"], got["highest_ms"]) == (3.0, 21.0)
    assert got["f32_error_ratio"] == pytest.approx(375.0)
    data["precision"]["device ms"] = [21.0, 3.0, 1.4]
    assert precision.precision_numbers(data)["default"] == pytest.approx(
        3.0 / 1.4)


def test_differences_name_the_claims_whose_verdicts_differ():
    gpu, here = _data(), _data()
    assert claims.differences(here, gpu).empty
    here["remat"]["dots"] = [35, 35]
    here["precision"]["device ms"] = [1.0, 1.0, 2.0]
    table = claims.differences(here, gpu)
    assert list(table.index) == ["remat trades compute for memory",
                                 "bf16 matmuls are fast, and accurate enough"]
    assert list(table.columns) == ["H100", "here", "measured here"]
    assert set(table["here"]) == {"does not hold"}
    assert (table["H100"] != table["here"]).all()
    assert table.loc["remat trades compute for memory", "measured here"] == (
        "the compiler merged the recomputation away; temporary memory 0.40 "
        "times")


def test_shown_tables_have_words_not_reprs():
    table = pd.DataFrame(_data()["remat"]).set_index("remat")
    shown = claims.shown(table)
    assert list(shown.index) == ["no", "yes"]
    assert "wall ms" in shown and "matrix products" in shown
    precision = claims.shown(_data()["precision"])
    assert precision["relative error"].tolist() == [
        "0.8 millionths", "300 millionths", "0.29%"]
    donation = claims.shown(_data()["donation"])
    assert donation.loc["old params deleted"].tolist() == ["no", "yes"]


def _on_cpu(bf16_ms, default_ms=2.0, highest_ms=1.6, same_error=True):
    """`_data` as a CPU measures it: the profiler's span flatters bf16
    (as on the page's CPU run), the wall clock says ``bf16_ms``."""
    data = _data()
    data["platform"] = "cpu"
    data["precision"].update({
        "n": [512] * 3,
        "ms": [highest_ms, default_ms, bf16_ms],
        "device ms": [1.5, 2.5, 1.7],
        "rel error": [4e-7, 4e-7 if same_error else 3e-4, 2.4e-3]})
    return data


def test_bf16_here_reads_the_wall_clock_on_a_cpu_and_flips_with_it():
    slow = _on_cpu(bf16_ms=3.0)
    assert claims.bf16_clock(slow) == "ms"
    assert claims.bf16_clock(_data()) == "device ms"  # a GPU's recording
    found = claims.findings(slow)[claims.BF16]
    # The span (2.5 against 1.7 ms) would have said 1.47 times as fast.
    assert found == ("1.50 times as long as default float32 by the wall "
                     "clock, relative error 0.24%", "does not hold")
    assert precision.precision_numbers(slow)["default"] == pytest.approx(
        2 / 3)
    fast = _on_cpu(bf16_ms=1.0)
    assert claims.findings(fast)[claims.BF16].verdict == "holds"
    # the same arithmetic at both float32 precisions: the same error
    same = precision.precision_numbers(fast)
    assert same["f32_error_ratio"] == pytest.approx(1.0)
    assert same["f32_speedup"] == pytest.approx(1.6 / 2.0)


def test_clock_numbers_count_spans_over_the_wall_time():
    data = _data()
    got = clocks.clock_numbers(data)
    # the vmap table's loop of calls: a span of 30 ms against 20 by the
    # wall; its loop inside jit: kernels of 1.6 ms in a 1.5 ms span
    assert got == {"rows": 15, "over wall": 1, "over span": 1,
                   "worst": pytest.approx(1.5), "sections": ["vmap"]}
    calm = copy.deepcopy(data)
    calm["vmap"]["device ms"] = [3.0, 1.6, 0.01]
    assert clocks.clock_numbers(calm)["over wall"] == 0


def test_the_claims_table_is_labelled_by_transformation_and_device():
    table = claims.claims_table(_data(), "on the H100")
    assert list(table.index) == ["jit", "donate_argnums", "vmap", "scan",
                                 "remat", "value_and_grad", "bf16"]
    assert table.loc["bf16", "claim"] == ("matmuls are fast, and accurate "
                                          "enough")
    assert "measured on the H100" in table
    # Row labels do not wrap on the page: each is one short word.
    assert max(len(label) for label in table.index) <= 16
