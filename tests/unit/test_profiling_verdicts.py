"""Chapter 4's computed sentences: each flips with the data behind it."""

import numpy as np
import pandas as pd

import first_visit
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


def test_the_first_recording_is_decided_by_its_kept_profile():
    data = first_visit.load("04_profiling/gpu")["data"]
    fixture = attention.fixture_calls(attention.fixture_folder())
    assert len(fixture) == 400 and set(fixture["kernels"]) == {10}
    text = verdicts.whole_call(data, verdicts.device_calls(data, fixture),
                               GPU)
    assert "matmul is faster" in text
    assert "wall clock" in text and "no detectable difference" in text
    assert "the device's is the one of record" in text
    assert "every kernel ran inside a CUDA graph" in \
        verdicts.execution_mode(fixture, GPU)


def test_recorded_calls_outrank_the_fixture():
    data = {"calls_alternating": calls(120, 125).to_dict("list"),
            **walls(240, 245)}
    chosen = verdicts.device_calls(data, fixture=None)
    text = verdicts.whole_call(data, chosen, GPU)
    assert "einsum is faster" in text
    assert verdicts.device_calls({}, None) is None
    assert verdicts.whole_call({}, None, GPU) is None


def test_the_whole_call_verdict_flips_with_the_device_times():
    data = walls(240, 240)
    assert "einsum is faster" in verdicts.whole_call(
        data, calls(110, 125), GPU)
    assert "matmul is faster" in verdicts.whole_call(
        data, calls(125, 110), GPU)
    same = verdicts.whole_call(data, calls(120, 120), GPU)
    assert "no detectable difference (ratio" in same


def test_a_call_that_is_mostly_device_time_needs_no_caveat():
    text = verdicts.whole_call(walls(121, 121), calls(120, 120), GPU)
    assert "dilutes" not in text


def test_the_execution_mode_is_read_from_the_profile():
    assert "launched on its own" in verdicts.execution_mode(
        calls(1, 1, in_graph=0.0), GPU)
    assert "50% of the kernels" in verdicts.execution_mode(
        calls(1, 1, in_graph=0.5), GPU)


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


def test_the_whole_call_here_is_said_with_its_interval():
    from helpers.measuring import stats
    V = stats.Verdict
    clear = verdicts.whole_call_here(comparison(V.B_FASTER, (1.005, 1.02)))
    assert "matmul is faster" in clear and "leaves out 1" in clear
    assert "p = 0.010" in clear
    unclear = verdicts.whole_call_here(
        comparison(V.B_FASTER, (0.999, 1.008), ratio=1.005))
    assert "neither version is clearly faster" in unclear
    assert "runs of matmul tend to win" in unclear
    assert "holds 1" in unclear and "is faster" not in unclear
    none = verdicts.whole_call_here(
        comparison(V.NO_DIFFERENCE, (0.99, 1.01), p_value=0.0))
    assert "finds no difference (p < 0.001)" in none


def test_an_interval_holding_1_keeps_the_gpu_sentence_from_a_winner():
    data = walls(240, 240)
    text = verdicts.whole_call(data, calls(120, 120.02), GPU)
    assert "is faster" not in text.split("By the wall clock")[0]


def test_what_bounds_a_product_is_read_from_its_two_floors():
    memory = verdicts.product_bound(compute_s=2e-6, memory_s=12e-6)
    assert "bound by memory" in memory and "6.0 times" in memory
    compute = verdicts.product_bound(compute_s=15e-6, memory_s=12.5e-6)
    assert "bound by its arithmetic" in compute


def scoped(einsum_us, matmul_us, n=20):
    """Per-kernel rows of both scopes: each call's one kernel a scope."""
    rows = [{"version": v, "call": c, "scope": s, "name": "k",
             "dur_us": t[s]}
            for c in range(n)
            for v, t in (("einsum", einsum_us), ("matmul", matmul_us))
            for s in ("attn_q_k", "attn_att_v")]
    return pd.DataFrame(rows)


def test_the_products_are_set_against_their_floor():
    near = verdicts.products_against_floor(scoped(
        {"attn_q_k": 16.2, "attn_att_v": 12.4},
        {"attn_q_k": 15.5, "attn_att_v": 12.6}), 12.5, 108.0, GPU)
    assert "16.2 µs a call written with einsum (1.30 times the floor)" \
        in near
    assert "12.4 µs" in near and "under the floor" in near
    assert "at the floor" in near and "L2 cache" in near
    assert "at most 3.7 µs a call" in near and "3.4% of the 108 µs" in near
    assert "cannot move the whole call" in near
    far = verdicts.products_against_floor(scoped(
        {"attn_q_k": 40.0, "attn_att_v": 30.0},
        {"attn_q_k": 40.0, "attn_att_v": 30.0}), 12.5, 108.0, GPU)
    assert "L2 cache" not in far and "would show in the whole call" in far
    assert "at most 45 µs" in far
    at = verdicts.products_against_floor(scoped(
        {"attn_q_k": 12.0, "attn_att_v": 12.0},
        {"attn_q_k": 12.4, "attn_att_v": 12.1}), 12.5, 108.0, GPU)
    assert "no way of writing them can make them faster" in at


def test_memsets_are_told_from_kernels_by_op():
    events = pd.DataFrame({"name": ["Memset 3", "sm90_gemm", "softmax_2"],
                           "hlo_op": ["cublas.0", "cublas.0", "softmax.2"]})
    assert verdicts.memsets_by_op(events) == {"cublas.0": 0.5,
                                              "softmax.2": 0.0}


def test_a_calls_device_events_are_split_into_kernels_and_memsets():
    with_memset = verdicts.execution_mode(calls(1, 1), GPU, 0.1)
    assert "each call ran 10 device events, 9 kernels and 1 memset" \
        in with_memset
    assert "each call ran 10 kernels," in verdicts.execution_mode(
        calls(1, 1), GPU)
    assert "8 kernels and 2 memsets" in verdicts.execution_mode(
        calls(1, 1), GPU, 0.2)
