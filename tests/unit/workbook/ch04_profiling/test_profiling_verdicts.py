"""Chapter 4's numbers and the verdicts its claims turn on: each flips
with the data behind it."""

import numpy as np
import pandas as pd
import pytest

from helpers.measuring import recorded
from helpers.workbook.ch04_profiling import attention, verdicts

GPU = "NVIDIA H100 80GB HBM3"


def calls(einsum_us, matmul_us, in_graph=1.0, n=40):
    """Alternating calls with a little noise around each version's time."""
    noise = np.random.default_rng(0).normal(0, 0.3, 2 * n)
    versions = ["einsum", "matmul"] * n
    span = [(einsum_us if v == "einsum" else matmul_us) + e
            for v, e in zip(versions, noise)]
    return pd.DataFrame({"version": versions, "call": np.arange(2 * n) // 2,
                         "kernels": 10, "kernel_us": span, "span_us": span,
                         "in_graph": in_graph})


def walls(einsum_us, matmul_us, n=40):
    noise = np.random.default_rng(1).normal(0, 5, n)
    return {"wall": {v: {"times": list((t + noise) * 1e-6)}
                     for v, t in (("einsum", einsum_us),
                                  ("matmul", matmul_us))}}


def test_the_reference_recording_is_decided_by_its_recorded_calls():
    data = recorded.load("04_profiling/gpu")["data"]
    ran = verdicts.call_numbers(data, verdicts.device_calls(data), None)
    assert ran["device_verdict"] == "matmul faster"
    assert ran["wall_verdict"] == verdicts.NO_CLEAR
    assert ran["graph_share"] > 0.99
    # the kept profile holds the same calls: 400, of 10 kernels each
    kept = attention.fixture_calls(attention.fixture_folder())
    assert len(kept) == len(verdicts.device_calls(data)) == 400
    assert set(kept["kernels"]) == {10}


def test_the_recorded_calls_are_read():
    data = {"calls_alternating": calls(120, 125).to_dict("list"),
            **walls(240, 245)}
    chosen = verdicts.device_calls(data)
    assert verdicts.call_numbers(data, chosen, None)["device_verdict"] == \
        "einsum faster"


def test_the_whole_call_verdict_flips_with_the_device_times():
    data = walls(240, 240)
    assert verdicts.call_numbers(data, calls(110, 125), None)[
        "device_verdict"] == "einsum faster"
    assert verdicts.call_numbers(data, calls(125, 110), None)[
        "device_verdict"] == "matmul faster"
    assert verdicts.call_numbers(data, calls(120, 120), None)[
        "device_verdict"] == "no detectable difference"
    # an interval holding 1 names no winner
    assert "faster" not in verdicts.call_numbers(
        data, calls(120, 120.02), None)["device_verdict"]


def test_the_devices_share_of_a_call():
    assert verdicts.call_numbers(walls(121, 121), calls(120, 120), None)[
        "device_share"] > 0.9
    assert verdicts.call_numbers(walls(240, 240), calls(120, 120), None)[
        "device_share"] == pytest.approx(0.5, abs=0.02)


def test_the_execution_mode_is_read_from_the_profile():
    def share(in_graph):
        return verdicts.call_numbers(walls(240, 240),
                                     calls(1, 1, in_graph=in_graph),
                                     None)["graph_share"]
    assert share(0.0) == 0.0 and share(0.5) == 0.5


def comparison(verdict, ratio_ci, p_value=0.01, ratio=1.01):
    """A `stats.compare` result with the fields a verdict reads."""
    from helpers.measuring import stats
    return stats.Comparison(
        n_a=50, n_b=50, median_a=1.0, median_b=1.0, ratio=ratio,
        ratio_ci=ratio_ci, shift=0.0, shift_ci=(0.0, 0.0), p_value=p_value,
        prob_a_faster=0.5, alpha=0.05, verdict=verdict)


def test_a_version_is_named_faster_only_when_its_interval_agrees():
    from helpers.measuring import stats
    V = stats.Verdict
    assert verdicts.named_verdict(
        comparison(V.B_FASTER, (1.005, 1.02))) == "matmul faster"
    assert verdicts.named_verdict(
        comparison(V.A_FASTER, (0.95, 0.99))) == "einsum faster"
    assert verdicts.named_verdict(
        comparison(V.B_FASTER, (0.999, 1.008))) == verdicts.NO_CLEAR
    assert verdicts.named_verdict(
        comparison(V.A_FASTER, (0.98, 1.001))) == verdicts.NO_CLEAR
    assert verdicts.named_verdict(comparison(
        V.NO_DIFFERENCE, (0.99, 1.01), p_value=0.4)) == \
        "no detectable difference"
    assert verdicts.named_verdict(comparison(V.A_FASTER, (0.9, 0.95)),
                                  "old", "new") == "old faster"


def test_a_p_value_reads_plainly():
    assert verdicts.p_text(0.0) == "< 0.001"
    assert verdicts.p_text(6e-64) == "< 0.001"
    assert verdicts.p_text(0.3616) == "0.362"
    assert verdicts.p_text(0.001) == "0.001"


def scoped(einsum_us, matmul_us, n=20):
    """Per-kernel rows of both scopes: each call's one kernel a scope."""
    rows = [{"version": v, "call": c, "scope": s, "name": "k",
             "dur_us": t[s]}
            for c in range(n)
            for v, t in (("einsum", einsum_us), ("matmul", matmul_us))
            for s in ("attn_q_k", "attn_att_v")]
    return pd.DataFrame(rows)


def test_the_products_are_set_against_their_floor():
    near = verdicts.product_numbers(scoped(
        {"attn_q_k": 16.2, "attn_att_v": 12.4},
        {"attn_q_k": 15.5, "attn_att_v": 12.6}), 12.5, 108.0)
    assert near["q_k_einsum_over_floor"] == pytest.approx(16.2 / 12.5)
    assert near["under_floor"] == 1.0  # 12.4 µs: under its floor
    assert near["left_us"] == pytest.approx(3.7 + 0.0)
    assert near["left_share"] == pytest.approx(3.7 / 108)
    far = verdicts.product_numbers(scoped(
        {"attn_q_k": 40.0, "attn_att_v": 30.0},
        {"attn_q_k": 40.0, "attn_att_v": 30.0}), 12.5, 108.0)
    assert far["under_floor"] == 0.0 and far["left_share"] > 0.1
    at = verdicts.product_numbers(scoped(
        {"attn_q_k": 12.0, "attn_att_v": 12.0},
        {"attn_q_k": 12.4, "attn_att_v": 12.1}), 12.5, 108.0)
    assert at["left_us"] == 0.0


def test_memsets_are_told_from_kernels_by_op():
    events = pd.DataFrame({"name": ["Memset 3", "sm90_gemm", "softmax_2"],
                           "hlo_op": ["cublas.0", "cublas.0", "softmax.2"]})
    assert verdicts.memsets_by_op(events) == {"cublas.0": 0.5,
                                              "softmax.2": 0.0}


def test_a_calls_device_events_are_split_into_kernels_and_memsets():
    def split(share):
        ran = verdicts.call_numbers(walls(240, 240), calls(1, 1), share)
        return ran["events"], ran["kernels"], ran["memsets"]
    assert split(0.1) == (10, 9, 1)
    assert split(None) == (10, 10, 0)
    assert split(0.2) == (10, 8, 2)
