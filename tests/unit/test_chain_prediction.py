"""Chapter 3's one-chain prediction: budget, floor and estimate."""

import pandas as pd
import pytest

from helpers.workbook.ch03_launches import predictions

BODY = pd.Series({"arith.addf": 5, "arith.addi": 4, "arith.mulf": 2,
                  "tt.reduce": 2, "tt.extern_elementwise": 2,
                  "arith.divf": 2, "arith.sitofp": 2, "tt.load": 1})


def goals(**extra):
    data = {"steps": 8000, "trivial_fused_s": 240e-6,
            "one_chain_s": {"cpu scan, softplus hoisted": 1.6e-3}}
    return {**data, **extra}


def test_float_operations_counts_float_arithmetic_sums_and_exponentials():
    # addf 5 + mulf 2 + reduce 2 + extern 2 + divf 2; not addi or sitofp
    assert predictions.float_operations(BODY) == 13
    with pytest.raises(ValueError, match="no operations given"):
        predictions.float_operations(pd.Series(dtype=int))


def test_wall_clock_floor_takes_the_host_part_off():
    guess = predictions.one_chain(goals(), 160.0, 13)
    assert guess.budget.value == pytest.approx(200e-9)
    assert guess.floor.value == pytest.approx(10e-9)
    assert guess.estimate.value == pytest.approx(130e-9)
    text = guess.markdown()
    assert "0.65 times the budget" in text and "should meet" in text
    assert text.count("$$") == 6


def test_a_device_time_floor_is_used_when_recorded():
    guess = predictions.one_chain(
        goals(device_s={"trivial fused": 400e-6}), 160.0, 13)
    assert guess.floor.value == pytest.approx(50e-9)
    assert "should miss" in guess.markdown()
    assert "narrowly" not in guess.markdown()  # 3.25 times the budget


def test_no_prediction_without_the_numbers_it_needs():
    assert predictions.one_chain(goals(), None, 13) is None
    assert predictions.one_chain(goals(one_chain_s={}), 160.0, 13) is None
    # a host part larger than the call leaves no floor to read
    assert predictions.one_chain(goals(), 300.0, 13) is None
    with pytest.raises(ValueError, match="at least one floating-point"):
        predictions.one_chain(goals(), 160.0, 0)


def test_unroll_launch_model_holds_until_launches_get_cheaper():
    rows = pd.DataFrame({"unroll": [1, 2, 4, 8],
                         "launches_per_step": [3.0, 1.5, 1.0, 0.75],
                         "us_per_step": [15.0, 7.7, 5.8, 0.94]})
    assert predictions.unroll_by_launches(rows).tolist() == \
        pytest.approx([15.0, 7.5, 5.0, 3.75])
    assert predictions.unroll_worked(rows).value == pytest.approx(3.75e-6)
    said = predictions.unroll_verdict(rows)
    assert "within 25% at unroll 2 and 4" in said
    assert "From unroll 8 on" in said and "0.94 against 3.75" in said
    assert said.startswith("At unroll 8 a step took 0.94 µs, 0.25 times "
                           "the predicted 3.75 µs: the prediction missed.")
    steady = rows.assign(us_per_step=[15.0, 7.5, 5.0, 3.7])
    said = predictions.unroll_verdict(steady)
    assert said.endswith("unroll 2, 4 and 8.")
    assert "0.99 times the predicted 3.75 µs: the prediction held." in said


def test_the_one_chain_prediction_is_checked_against_the_kernel():
    guess = predictions.one_chain(goals(), 160.0, 13)  # 130 of 200 ns
    met = guess.held(150e-9)
    assert "estimated 130 ns a step; the kernel took 150 ns, 1.15 times " \
           "the estimate" in met
    assert met.endswith("would meet its goal, held.")
    assert guess.held(250e-9).endswith("would meet its goal, did not hold.")
    slow = predictions.one_chain(goals(), 160.0, 30)  # 300 of 200 ns
    assert slow.held(250e-9).endswith("would miss its goal, held.")
    assert slow.held(180e-9).endswith("did not hold.")
