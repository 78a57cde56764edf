"""Chapter 2's numbers and the quantities its claims turn on: each flips
with the data behind it."""

import pandas as pd
import pytest

from helpers.measuring import recorded
from helpers.workbook.ch02_fusion import numbers
from helpers.workbook.ch02_fusion import verdicts as fusion_verdicts

from made_up import fusion_sweep as recording


def test_rows_are_read_by_device_time_against_their_own_ceiling():
    data = recording({("a @ b", "float32", 25): 2.0}, copy_gbps=2000.0)
    rows = fusion_verdicts.table(data)
    assert set(rows["clock"]) == {"device"}
    assert (rows["ms"] == rows["device ms"]).all()
    assert rows.attrs["copy_gbps"] == 2000.0
    at = rows[(rows["K"] == 25) & (rows["dtype"] == "float32")]
    moved = fusion_verdicts.reductions.bytes_moved(10**6, 25, 4)
    assert at["achieved"].iloc[0] == pytest.approx(
        moved / 2e-3 / 1e9 / 2000.0)


def test_the_reference_sweep_shows_no_cliff():
    rows = fusion_verdicts.table(recorded.load("02_fusion/sweep")["data"])
    assert max(numbers.cliff(rows).values()) <= fusion_verdicts.CLIFF


@pytest.mark.parametrize("slow32, slow64", [(1.0, 1.0), (5.0, 3.0),
                                            (5.0, 1.0)])
def test_the_cliff_is_decided_by_the_data(slow32, slow64):
    rows = fusion_verdicts.table(recording({("a @ b", "float32", 25): slow32,
                                            ("a @ b", "float64", 25): slow64}))
    assert numbers.cliff(rows) == {"float32": slow32, "float64": slow64}


def test_the_autotuners_choices_are_counted_from_the_run():
    rows = fusion_verdicts.table(recorded.load("02_fusion/sweep")["data"])
    assert numbers.emitters(rows) == {"triton": 22, "cases": 30,
                                      "rule_agrees": 30}
    kept = fusion_verdicts.table(recording({}, fusions="kLoop reduce"))
    assert numbers.emitters(kept)["triton"] == 0


def test_the_goal_is_met_or_not_by_device_time():
    versions = ("a @ b", "pad K")
    # bytes of (1e6, 3, K) @ (1e6, K, 1) at 90% of 3 TB/s
    met = {("pad K", d, k): fusion_verdicts.reductions.bytes_moved(
        10**6, k, 8 if d == "float64" else 4) / 0.9 / 3e12 * 1e3
        for d in ("float32", "float64") for k in (10, 25, 35, 50)}
    goal = numbers.goal(fusion_verdicts.table(recording(met, versions)))
    assert goal["met"] and goal["float32_best"] == "pad K"
    assert goal["float32_pad"] > goal["float32_default"]  # padding paid
    slow = numbers.goal(fusion_verdicts.table(recording({}, versions)))
    assert not slow["met"]
    assert slow["float64_pad"] <= slow["float64_default"]


def autotuner_recording(on25, off25):
    rows = {c: [] for c in ("K", "dtype", "setting", "device ms")}
    for dtype in ("float32", "float64"):
        for setting, at25 in (("autotuner on", on25), ("autotuner off",
                                                       off25)):
            for k, ms in ((25, at25), (35, 1.0)):
                for column, value in (("K", k), ("dtype", dtype),
                                      ("setting", setting),
                                      ("device ms", ms)):
                    rows[column].append(value)
    return {"rows": rows}


@pytest.mark.parametrize("on25, off25", [(1.0, 3.0), (3.0, 3.0),
                                        (3.0, 1.0), (1.0, 1.0)])
def test_the_autotuners_part_is_read_from_the_data(on25, off25):
    ratios = numbers.autotuner(autotuner_recording(on25, off25))
    assert ratios == {"float32_on": on25, "float32_off": off25,
                      "float64_on": on25, "float64_off": off25}


def test_the_autotuners_part_needs_both_ks():
    data = autotuner_recording(1.0, 1.0)
    keep = [i for i, k in enumerate(data["rows"]["K"]) if k != 35]
    data["rows"] = {c: [v[i] for i in keep]
                    for c, v in data["rows"].items()}
    with pytest.raises(ValueError, match="K = 25 or 35"):
        numbers.autotuner(data)


def test_the_emitters_summary_counts_every_case_once():
    # the rule names kLoop for K = 10 and 20, kInput for K = 16
    rows = pd.DataFrame({
        "version": ["a @ b"] * 6, "K": [10, 20, 16] * 2,
        "dtype": ["float32"] * 3 + ["float64"] * 3,
        "fusions": ["kCustom (named kLoop) reduce", "kLoop reduce",
                    "kInput reduce", "kCustom (named kLoop) reduce",
                    "kCustom (named kLoop) reduce", "kLoop reduce"]})
    summary = fusion_verdicts.emitters_summary(rows)
    assert summary.to_dict("index") == {
        "kInput": {"K": "16", "GPU ran, float32": "Triton 0, XLA's own 1",
                   "GPU ran, float64": "Triton 0, XLA's own 1",
                   "agree": "1 of 2"},
        "kLoop": {"K": "10, 20", "GPU ran, float32": "Triton 1, XLA's own 1",
                  "GPU ran, float64": "Triton 2, XLA's own 0",
                  "agree": "4 of 4"}}


def test_a_point_above_the_copy_ceiling_is_counted_with_its_reads():
    at = {("a @ b", d, k): fusion_verdicts.reductions.bytes_moved(
        10**6, k, 8 if d == "float64" else 4) / 1.02 / 3e12 * 1e3
        for d in ("float32", "float64") for k in (10, 25, 35, 50)}
    over = numbers.above_copy(fusion_verdicts.table(recording(
        {**at, ("a @ b", "float64", 50): 1.0})))
    assert over["count"] == 7 and over["ks"] == "10, 25, 35 and 50"
    assert over["versions"] == "a @ b"
    assert over["highest"] == pytest.approx(1.02)
    assert over["reads_per_write"] == pytest.approx(40 / 3)
    assert numbers.above_copy(fusion_verdicts.table(recording({})))[
        "count"] == 0
