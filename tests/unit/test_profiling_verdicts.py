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
