"""Chapter 1's numbers and the quantities its claims turn on: each
claim's test gets data with both outcomes.

Recordings by the device's clock are made up (`made_up`) with the
outcome each test needs; the reference recordings in ``recorded/`` are
read as they are.
"""

import copy

import pandas as pd
import pytest

from helpers.measuring import recorded, results, roofline
from helpers.workbook.ch01_measuring import recording, verdicts

from made_up import device_recording, timing


def every_recording():
    """The reference GPU's chapter 1 recording and every other GPU's."""
    return [results.reference("01_measuring/summary").data,
            *(r.data for r in results.other_gpus("01_measuring/summary"))]


def test_the_copy_ceiling_is_read_by_both_clocks():
    rates = recording.copy_rates(device_recording())
    moved = 2**31
    assert rates.device == pytest.approx(moved / 700e-6 / 1e9)
    assert rates.wall == pytest.approx(moved / 900e-6 / 1e9)
    assert rates.overhead_us == pytest.approx(200.0)
    for data in every_recording():
        rates = recording.copy_rates(data)
        assert rates.wall < rates.device and rates.overhead_us > 0


def test_no_fraction_above_one_is_ever_shown():
    for data in (device_recording(), *every_recording()):
        shown = recording.floors_table(data)["achieved"]
        numbers = [v for v in shown if not isinstance(v, str)]
        assert all(v <= 1 for v in numbers)


def test_the_wall_clock_hides_bandwidth_or_agrees():
    hiding = verdicts.ceiling_numbers(device_recording())
    assert hiding["hidden"] == pytest.approx(2 / 9)
    assert hiding["hidden"] > verdicts.AGREEMENT
    assert hiding["tf32_over_highest"] == pytest.approx(380 / 51)
    agreeing = device_recording()
    agreeing["ceilings"]["timings"]["copy"] = timing(700e-6, 710e-6)
    assert verdicts.ceiling_numbers(agreeing)["hidden"] <= \
        verdicts.AGREEMENT


def test_dispatch_below_its_floor_or_not():
    queued = verdicts.dispatch_numbers(device_recording())
    assert queued["floor_over_enqueue"] == pytest.approx(2890 / 50)
    assert queued["host_ms"] == pytest.approx(0.3)
    waited = device_recording(dispatch={
        "enqueue_us": 3000.0, "blocked_ms": 3.2, "device_ms": 2.9,
        "floor_ms": 2.89})
    assert verdicts.dispatch_numbers(waited)["floor_over_enqueue"] < 1


def test_a_first_call_that_searched_for_kernels_or_not():
    # compile (900 ms) close to the first call: no search to explain
    plain = verdicts.compile_numbers(device_recording())
    assert plain["first_over_steady"] == pytest.approx(1400 / 3)
    assert plain["first_over_staged"] < verdicts.SEARCH
    searched = verdicts.compile_numbers(device_recording(compile={
        "first_call_ms": 1400.0, "steady_ms": 3.0, "trace_lower_ms": 2.5,
        "compile_ms": 56.0, "retrace_ms": 1150.0}))
    assert searched["first_over_staged"] == pytest.approx(1400 / 58.5)
    assert searched["retrace_over_staged"] > verdicts.SEARCH


def test_back_to_back_agrees_with_device_time_or_not():
    data = device_recording()
    numbers = verdicts.wall_device_numbers(data)
    assert numbers["agreement"] == pytest.approx(712 / 705)
    assert abs(numbers["agreement"] - 1) <= verdicts.AGREEMENT
    assert numbers["xprof_apart"] == pytest.approx(1 / 705)
    slow = device_recording()
    slow["profile"]["back_to_back_us"] = [20.0, 800.0]
    assert abs(verdicts.wall_device_numbers(slow)["agreement"] - 1) > \
        verdicts.AGREEMENT


def test_a_cache_effect_or_none():
    none = verdicts.cache_numbers(device_recording())  # 1.06 at most
    assert none["same_over_rotated"] <= verdicts.CACHE_EFFECT
    assert none["rotated_over"] == [] and none["top_gbps"] is None
    strong = device_recording()
    strong["cache"]["same device GB/s"] = [2000.0, 1500.0, 3000.0]
    numbers = verdicts.cache_numbers(strong)
    assert numbers["same_over_rotated"] > verdicts.CACHE_EFFECT
    assert numbers["at_mib"] == 1.0


@pytest.mark.parametrize("change, cause", [
    ({"device ms": [0.5, 3.1]}, "no known cause"),
    ({"device ms": [0.5, 3.1], "bytes (XLA)": [2**30, 2**29]},
     "fewer bytes than the hand count"),
])
def test_a_device_time_below_its_floor_is_an_error_with_a_cause(change,
                                                                cause):
    data = device_recording()
    data["floors"].update(copy.deepcopy(change))
    table = recording.floors_table(data)
    assert table.loc["2x + 1", "achieved"] == roofline.ABOVE_CEILING
    assert cause in table.loc["2x + 1", "note"]
    assert verdicts.floor_numbers(data)["2x + 1"]["error"]


def test_a_time_over_its_floor_within_its_spread_is_at_the_ceiling():
    data = device_recording()
    data["floors"].update({"device ms": [0.69, 3.1],
                           "device spread": [0.02, 0.01]})
    table = recording.floors_table(data)
    assert table.loc["2x + 1", "achieved"] == 1.0
    affine = verdicts.floor_numbers(data)["2x + 1"]
    assert 0 <= affine["over"] <= affine["spread"] and not affine["error"]


def test_a_kernel_that_only_reads_may_beat_the_copy_ceiling():
    # As on the H100: the row sum streams 5% faster than the copy,
    # beyond its spread. A read ceiling, not an error.
    data = device_recording()
    n = data["floors"]["bytes (hand)"][0] // 8  # the square's elements
    data["floors"] = {key: [*values, extra] for (key, values), extra in zip(
        data["floors"].items(),
        ["row sum", 4 * n + 4 * int(n ** 0.5), 4 * n + 4 * int(n ** 0.5),
         n, n, "memory", 0.35, 0.33, 0.005, 0.4])}
    table = recording.floors_table(data)
    assert table.loc["row sum", "achieved"] == recording.READS_ONLY
    row_sum = verdicts.floor_numbers(data)["row sum"]
    assert row_sum["over"] > 0 and not row_sum["error"]
    assert row_sum["written_kb"] == pytest.approx(4 * n ** 0.5 / 1e3)
    # the same time on a kernel that writes what it reads stays an error
    data["floors"]["device ms"][0] = 0.5
    assert "no known cause" in recording.floors_table(data).loc[
        "2x + 1", "note"]


def test_floors_within_their_ceilings_are_fractions():
    numbers = verdicts.floor_numbers(device_recording())
    assert numbers["2x + 1"]["achieved"] == pytest.approx(0.7 / 0.74)
    assert numbers["matmul"]["achieved"] == pytest.approx(2.89 / 3.1)
    assert numbers["2x + 1"]["over"] < 0  # below its floor: no claim


def test_the_reference_recording_reads_its_floors_by_the_device_clock():
    data = recorded.load("01_measuring/summary")["data"]
    assert data["clock"] == recording.DEVICE_CLOCK
    table = recording.floors_table(data)
    assert set(table["clock"]) == {recording.DEVICE_CLOCK}
    assert not table["error"].any()
    assert table.loc["row sum", "achieved"] == recording.READS_ONLY
    agreement = verdicts.wall_device_numbers(data)["agreement"]
    assert abs(agreement - 1) <= verdicts.AGREEMENT


def test_the_profile_table_reads_in_words_without_empty_columns():
    rows = pd.DataFrame([{"elements": 1024, "wall_us": 9.0,
                          "back_to_back_us": 5.0, "span_us": 2.0,
                          "kernel_us": 1.5, "xprof_kernel_us": None}])
    table = recording.profile_table(rows)
    assert list(table.columns) == ["wall µs", "back to back µs",
                                   "device span µs", "kernels µs"]
    assert table.index.name == "elements"
    rows["xprof_kernel_us"] = 1.4
    assert "XProf kernels µs" in recording.profile_table(rows)


def test_a_rotation_above_the_copy_ceiling_is_found():
    data = device_recording()
    copy_gbps = recording.copy_rates(data).device
    assert verdicts.cache_numbers(data)["rotated_over"] == []
    data["cache"]["rotated device GB/s"][1] = copy_gbps * 1.15
    data["cache"]["same device GB/s"][1] = copy_gbps * 1.2
    numbers = verdicts.cache_numbers(data)
    assert numbers["rotated_over"] == [4.0]
    assert numbers["top_over_copy"] == pytest.approx(1.15)
