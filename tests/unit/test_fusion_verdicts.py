"""Chapter 2's computed sentences: each flips with the data behind it."""

import pandas as pd
import pytest

import first_visit
from helpers.workbook.ch01_measuring import recording as measuring_recording
from helpers.workbook.ch02_fusion import verdicts as fusion_verdicts

GPU = "NVIDIA H100 80GB HBM3"


def first_copy_gbps():
    return measuring_recording.copy_rates(
        first_visit.load("01_measuring/summary")["data"]).device


def recording(times, versions=("a @ b",), fusions="kInput reduce",
              ks=(10, 25, 35, 50), copy_gbps=3000.0):
    """A device-clock sweep: ``times[(version, dtype, k)]`` in ms, or 1 ms.
    """
    rows = {c: [] for c in ("K", "dtype", "version", "device ms",
                            "wall ms", "spread", "GB/s", "achieved",
                            "fusions")}
    for dtype in ("float32", "float64"):
        for k in ks:
            for version in versions:
                ms = times.get((version, dtype, k), 1.0)
                for column, value in (
                        ("K", k), ("dtype", dtype), ("version", version),
                        ("device ms", ms), ("wall ms", ms + 0.2),
                        ("spread", 0.01), ("GB/s", 0.0), ("achieved", 0.0),
                        ("fusions", fusions)):
                    rows[column].append(value)
    return {"copy_gbps": copy_gbps, "batch": [1000, 1000], "rows": rows}


def test_the_first_recording_shows_no_cliff_by_the_wall_clock():
    rows = fusion_verdicts.table(first_visit.load("02_fusion/sweep")["data"],
                          first_copy_gbps())
    text = fusion_verdicts.cliff(rows, GPU)
    assert "the wall clock" in text and "no cliff" in text
    assert "0.87 times as long" in text


def test_a_wall_clock_recording_needs_the_device_time_ceiling():
    with pytest.raises(ValueError, match="copy_gbps"):
        fusion_verdicts.table(first_visit.load("02_fusion/sweep")["data"])


@pytest.mark.parametrize("slow32, slow64, says", [
    (1.0, 1.0, "no cliff"),
    (5.0, 3.0, "a cliff in both precisions"),
    (5.0, 1.0, "a cliff in float32 only"),
])
def test_the_cliff_is_decided_by_the_data(slow32, slow64, says):
    rows = fusion_verdicts.table(recording({("a @ b", "float32", 25): slow32,
                                     ("a @ b", "float64", 25): slow64}))
    text = fusion_verdicts.cliff(rows, GPU)
    assert says in text and "(device time)" in text


def test_the_autotuners_choices_are_counted_from_the_run():
    rows = fusion_verdicts.table(first_visit.load("02_fusion/sweep")["data"],
                          first_copy_gbps())
    text = fusion_verdicts.autotuned(rows, GPU)
    assert "for 22 of its 30" in text and "in 8 of 30" in text
    kept = fusion_verdicts.table(recording({}, fusions="kLoop reduce"))
    text = fusion_verdicts.autotuned(kept, GPU)
    assert "kept every heuristic choice" in text


def test_the_goal_is_met_or_not_by_device_time():
    versions = ("a @ b", "pad K")
    fast = {("pad K", d, k): 0.0001 for d in ("float32", "float64")
            for k in (10, 25, 35, 50)}
    # pad K at 1e-4 ms is far over the ceiling: said so, never a pass
    over = fusion_verdicts.table(recording(fast, versions, copy_gbps=3000.0))
    assert fusion_verdicts.ABOVE_COPY in fusion_verdicts.goal(over, GPU)
    # bytes of (1e6, 3, 50) @ (1e6, 50, 1) in float32 over 0.25 ms
    met = {("pad K", d, k): fusion_verdicts.reductions.bytes_moved(
        10**6, k, 8 if d == "float64" else 4) / 0.9 / 3e12 * 1e3
        for d in ("float32", "float64") for k in (10, 25, 35, 50)}
    rows = fusion_verdicts.table(recording(met, versions))
    assert "goal is met" in fusion_verdicts.goal(rows, GPU)
    assert "*pad K*" in fusion_verdicts.goal(rows, GPU)
    rows = fusion_verdicts.table(recording({}, versions))  # 1 ms everywhere
    assert "goal is not met" in fusion_verdicts.goal(rows, GPU)


def test_a_wall_clock_goal_waits_for_device_time():
    rows = fusion_verdicts.table(first_visit.load("02_fusion/fixes")["data"],
                          first_copy_gbps())
    text = fusion_verdicts.goal(rows, GPU, host_part_us=155)
    assert "lower bounds" in text and "155 µs" in text
    assert "goal is met" not in text and "goal is not met" not in text


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


@pytest.mark.parametrize("on25, off25, says", [
    (1.0, 3.0, "the autotuner's choice removes it"),
    (3.0, 3.0, "the cliff is there with the autotuner on or off"),
    (3.0, 1.0, "a cliff of its own making"),
    (1.0, 1.0, "no cliff either way"),
])
def test_the_autotuners_part_is_decided_by_the_data(on25, off25, says):
    recording = autotuner_recording(on25, off25)
    text = fusion_verdicts.autotuner_part(recording, GPU)
    assert says in text
    # both dtypes share the verdict here: it is said once
    assert text.count(says) == 1 and ": in both, " in text


def test_the_autotuners_part_gives_each_dtype_its_own_verdict():
    recording = autotuner_recording(1.0, 3.0)
    rows = recording["rows"]
    for i, (dtype, setting, k) in enumerate(zip(
            rows["dtype"], rows["setting"], rows["K"])):
        if dtype == "float64" and setting == "autotuner off" and k == 25:
            rows["device ms"][i] = 1.0  # no cliff in float64
    text = fusion_verdicts.autotuner_part(recording, GPU)
    assert "in both" not in text
    assert "with it on: the heuristic's choice alone falls off" in text
    assert "with it on: no cliff either way" in text


def test_the_autotuners_part_needs_both_ks():
    data = autotuner_recording(1.0, 1.0)
    keep = [i for i, k in enumerate(data["rows"]["K"]) if k != 35]
    data["rows"] = {c: [v[i] for i in keep]
                    for c, v in data["rows"].items()}
    assert fusion_verdicts.autotuner_part(data, GPU) is None


@pytest.mark.parametrize("pad32, pad64, says", [
    (0.5, 0.5, "padding paid in both precisions"),
    (0.5, 2.0, "padding paid in one precision only"),
    (2.0, 2.0, "padding did not pay"),
])
def test_padding_is_judged_by_the_measurement(pad32, pad64, says):
    """pad K at ``pad`` times a @ b's 1 ms: faster below 1, slower above."""
    times = {("pad K", "float32", k): pad32 for k in (10, 25, 35, 50)}
    times |= {("pad K", "float64", k): pad64 for k in (10, 25, 35, 50)}
    rows = fusion_verdicts.table(recording(times, ("a @ b", "pad K")))
    assert says in fusion_verdicts.padding(rows, GPU)


def test_padding_needs_a_padded_version():
    rows = fusion_verdicts.table(recording({}))
    assert fusion_verdicts.padding(rows, GPU) is None


@pytest.mark.parametrize("slow25, pad, says", [
    (1.0, 2.0, "K = 25 was not slower than K = 35 and padding did not pay"),
    (5.0, 0.5, "K = 25 was slower than K = 35 and padding paid"),
])
def test_the_closing_list_says_what_the_reference_gpu_showed(slow25, pad,
                                                             says):
    times = {("a @ b", d, 25): slow25 for d in ("float32", "float64")}
    times |= {("pad K", d, k): pad for d in ("float32", "float64")
              for k in (10, 25, 35, 50)}
    rows = fusion_verdicts.table(recording(times, ("a @ b", "pad K")))
    text = fusion_verdicts.on_the_reference(rows, rows, GPU)
    assert says in text and "device time" in text
    assert fusion_verdicts.on_the_reference(None, rows, GPU) is None


@pytest.mark.parametrize("off25, says_hidden", [(3.0, True), (1.0, False)])
def test_the_closing_list_names_a_cliff_the_autotuner_hid(off25,
                                                          says_hidden):
    times = {("pad K", d, k): 2.0 for d in ("float32", "float64")
             for k in (10, 25, 35, 50)}
    rows = fusion_verdicts.table(recording(times, ("a @ b", "pad K")))
    ratios = fusion_verdicts.autotuner_ratios(autotuner_recording(1.0, off25))
    assert ratios == {"float32": (1.0, off25), "float64": (1.0, off25)}
    text = fusion_verdicts.on_the_reference(rows, rows, GPU, ratios)
    assert "K = 25 was not slower than K = 35" in text
    assert ("with the fusion autotuner off, K = 25 took 3.00 and 3.00 "
            "times as long" in text) is says_hidden


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


def test_a_point_above_the_copy_ceiling_is_explained_not_called_an_error():
    at = {("a @ b", d, k): fusion_verdicts.reductions.bytes_moved(
        10**6, k, 8 if d == "float64" else 4) / 1.02 / 3e12 * 1e3
        for d in ("float32", "float64") for k in (10, 25, 35, 50)}
    over = fusion_verdicts.table(recording({**at, ("a @ b", "float64", 50):
                                            1.0}))
    text = fusion_verdicts.above_copy_ceiling(over, GPU)
    assert text.startswith(f"On the {GPU}, 7 of the measured points")
    assert "at K = 10, 25, 35 and 50, up to 102%" in text
    assert "read at least 13 times as many bytes" in text
    assert fusion_verdicts.above_copy_ceiling(
        fusion_verdicts.table(recording({})), GPU) is None
