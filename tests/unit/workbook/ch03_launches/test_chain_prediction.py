"""Chapter 3's one-chain prediction: budget, floor and estimate."""

import pandas as pd
import pytest

from helpers.workbook.ch03_launches import predictions

BODY = pd.Series({"arith.addf": 5, "arith.addi": 4, "arith.mulf": 2,
                  "tt.reduce": 2, "tt.extern_elementwise": 2,
                  "arith.divf": 2, "arith.sitofp": 2, "tt.load": 1})


def goals(**extra):
    """A goals recording: the one-multiply-add loop took 80 µs by device
    time (10 ns a step), the CPU's scan 1.6 ms (200 ns a step)."""
    data = {"steps": 8000, "trivial_fused_s": 240e-6,
            "one_chain_s": {"cpu scan, softplus hoisted": 1.6e-3},
            "device_s": {"trivial fused": 80e-6}}
    return {**data, **extra}


def test_float_operations_counts_float_arithmetic_sums_and_exponentials():
    # addf 5 + mulf 2 + reduce 2 + extern 2 + divf 2; not addi or sitofp
    assert predictions.float_operations(BODY) == 13
    with pytest.raises(ValueError, match="no operations given"):
        predictions.float_operations(pd.Series(dtype=int))


def test_the_floor_is_the_one_multiply_add_loop_by_device_time():
    guess = predictions.one_chain(goals(), 13)
    # the budget is the goal's share of the CPU's step: 0.8 x 200 ns
    assert guess.budget.value == pytest.approx(160e-9)
    assert guess.per_operation.value == pytest.approx(10e-9)
    assert guess.estimate.value == pytest.approx(130e-9)
    assert guess.ratio == pytest.approx(130 / 160)
    text = guess.worked_lines()
    assert text.count("$$") == 6
    assert "should" not in text  # the page says what the lines predict


def test_a_slower_floor_predicts_a_miss():
    guess = predictions.one_chain(
        goals(device_s={"trivial fused": 400e-6}), 13)
    assert guess.per_operation.value == pytest.approx(50e-9)
    assert guess.ratio == pytest.approx(650 / 160)  # a miss


def test_no_prediction_without_the_numbers_it_needs():
    # the one-multiply-add loop failed: no device time for the floor
    assert predictions.one_chain(goals(device_s={}), 13) is None
    assert predictions.one_chain(goals(one_chain_s={}), 13) is None
    with pytest.raises(ValueError, match="at least one floating-point"):
        predictions.one_chain(goals(), 0)


def test_unroll_launch_model_holds_until_launches_get_cheaper():
    rows = pd.DataFrame({"unroll": [1, 2, 4, 8],
                         "launches_per_step": [3.0, 1.5, 1.0, 0.75],
                         "us_per_step": [15.0, 7.7, 5.8, 0.94]})
    assert predictions.unroll_by_launches(rows).tolist() == \
        pytest.approx([15.0, 7.5, 5.0, 3.75])
    assert predictions.unroll_worked(rows).value == pytest.approx(3.75e-6)
    said = predictions.unroll_numbers(rows, 5)
    assert said["held"] == "2 and 4"
    assert (said["cheaper_k"], said["cheaper_us"],
            said["cheaper_predicted_us"]) == (8, 0.94, 3.75)
    assert said["last_ratio"] == pytest.approx(0.94 / 3.75)
    # the largest gain, 4 to 8, took the body from 4 to 6 kernels: past
    # a minimum graph size of 5, not past one of 8
    assert (said["gain_from"], said["gain_to"]) == (4, 8)
    assert (said["body_before"], said["body_after"]) == (4.0, 6.0)
    assert said["crossed_graph"] is True
    assert predictions.unroll_numbers(rows, 8)["crossed_graph"] is False
    assert predictions.unroll_numbers(rows, None)["crossed_graph"] is False
    steady = rows.assign(us_per_step=[15.0, 7.5, 5.0, 3.7])
    said = predictions.unroll_numbers(steady, 5)
    assert said["held"] == "2, 4 and 8" and said["cheaper_k"] is None


def test_the_latency_kernel_is_predicted_from_the_padded_kernels_path():
    # the padded kernel: 1.6 ms for 8000 steps, 200 ns a step over a path
    # of 40 instructions, 5 ns each; the latency kernel's path of 10
    data = goals(device_s={predictions.PADDED_KERNEL: 1.6e-3})
    guess = predictions.latency_kernel(data, padded_path=40,
                                       latency_path=10)
    assert guess.per_operation.value == pytest.approx(5e-9)
    assert guess.estimate.value == pytest.approx(50e-9)
    assert guess.budget.value == pytest.approx(160e-9)
    assert guess.ratio == pytest.approx(50 / 160)
    # a path as long as the padded kernel's predicts its own step: a miss
    assert predictions.latency_kernel(data, 40, 40).ratio > 1
    assert guess.worked_lines().count("$$") == 6


def test_no_latency_prediction_without_the_padded_kernels_time():
    assert predictions.latency_kernel(goals(), 40, 10) is None
    failed = goals(device_s={predictions.PADDED_KERNEL: "failed: oom"})
    assert predictions.latency_kernel(failed, 40, 10) is None
    with pytest.raises(ValueError, match="at least one instruction"):
        predictions.latency_kernel(goals(), 40, 0)
