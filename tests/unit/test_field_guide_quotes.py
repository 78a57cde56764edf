"""The field guide quotes chapter 3's recorded pair for each loop section:
the pattern as users wrote it against the section's own fix."""

import pytest

import first_visit
from helpers.workbook.ch10_field_guide import guide

GPU = "H100"  # as prose.glue_reference names it


def variants():
    return first_visit.load("03_launches/variants")["data"]


def test_the_round_trip_section_quotes_traced_against_static_bound():
    text = guide.loop_pair_on_gpu(variants(), GPU, "while, traced bound",
                                  "while, static bound")
    # 18.6 and 6.16 µs a step in the first recording: about 3 times
    assert "*while, traced bound* took 18.6 µs a step" in text
    assert "*while, static bound* 6.16 µs, 3.02 times less" in text


def test_a_fix_that_made_the_loop_slower_is_said_so():
    text = guide.loop_pair_on_gpu(variants(), GPU, "scan, split per step",
                                  "scan, noise outside")
    # 6.36 and 12.8 µs a step in the first recording
    assert "12.8 µs, 2.01 times more: there the fix made the loop slower" \
        in text


def test_a_variant_the_recording_lacks_is_named():
    with pytest.raises(KeyError, match="no variant \\['made up'\\]"):
        guide.loop_pair_on_gpu(variants(), GPU, "made up",
                               "while, static bound")


@pytest.mark.parametrize("load, clock", [
    (first_visit.load, "by the wall clock, so these are lower bounds"),
    (None, "(by device time)"),
])
def test_the_product_section_reads_chapter_2_by_its_clock(load, clock):
    from helpers.measuring import recorded
    from helpers.workbook.ch01_measuring import recording
    from helpers.workbook.ch02_fusion import verdicts as fusion_verdicts
    load = load or (lambda name: recorded.load(name))
    fixes = load("02_fusion/fixes")["data"]
    copy = recording.copy_rates(load("01_measuring/summary")["data"]).device
    text = guide.product_on_gpu(fixes, GPU, copy)
    assert clock in text
    # the same share chapter 2 computes for the same row
    rows = fusion_verdicts.table(fixes, copy)
    plain = rows[(rows["K"] == 25) & (rows["dtype"] == "float32")
                 & (rows["version"] == "a @ b")]["achieved"].iloc[0]
    assert (f"at {fusion_verdicts.percent(plain)} of the copy bandwidth"
            in text)


def test_the_launches_section_quotes_the_triton_kernel_it_uses():
    goals = first_visit.load("03_launches/goals")["data"]
    text = guide.triton_loop_on_gpu(goals, variants(), GPU)
    # 1.73 ms for 8000 steps of the Triton kernel in the first recording;
    # the Mosaic GPU kernel's 1.98 ms is not the one the example runs
    assert "as one Triton kernel, the backend this example uses, 0.216 µs" \
        in text
    assert "0.248" not in text
    assert "*scan, softplus hoisted*) a step took 16.3 µs" in text
    failed = dict(goals, one_chain_s={"gpu fused_scan, triton": "failed"})
    assert guide.triton_loop_on_gpu(failed, variants(), GPU) is None


def _sweep(ms32, ms64, device=True):
    column = "device ms" if device else "ms"
    return {"rows": {"K": [25, 64, 25, 64],
                     "dtype": ["float32", "float32", "float64", "float64"],
                     "version": ["a @ b"] * 4,
                     column: [9.0, ms32, 9.0, ms64]}}


def test_the_float64_section_reads_chapter_2_against_twice_the_bytes():
    twice = guide.dtypes_on_gpu(_sweep(0.339, 0.672), GPU)
    assert ("at K = 64, float64 took 0.672 ms and float32 0.339 ms of "
            "device time, 1.98 times as long, as twice the bytes predict"
            in twice)
    less = guide.dtypes_on_gpu(_sweep(0.546, 0.945, device=False), GPU)
    assert "by the wall clock, 1.73 times as long, against the 2 times" \
        in less
    assert "as twice the bytes predict" not in less


def test_the_precision_section_quotes_errors_in_millionths():
    data = {"precision": {
        "n": [1024, 8192, 8192],
        "precision": ["float32, default precision",
                      "float32, default precision",
                      "float32, precision='highest'"],
        "rel error": [1e-4, 2.94e-4, 8.1e-7]}}
    text = guide.precision_on_gpu(data, GPU)
    assert "n = 8192 had a relative error of 294 millionths at the " \
        "default precision and 0.81 with `precision='highest'`, 363 " \
        "times less." in text
    assert "e-0" not in text


def test_the_summary_names_patterns_as_the_report_does(monkeypatch):
    from types import SimpleNamespace

    from helpers.examine.findings import PATTERNS

    def reports(case, gpu):
        return (SimpleNamespace(patterns=["retracing"]),
                SimpleNamespace(patterns=["launches-per-step"]
                                if case is guide.CASES["retracing"] else []))

    monkeypatch.setattr(guide, "reports", reports)
    rows = {row["pattern"]: row for row in guide.summary()}
    row = rows[PATTERNS["retracing"].title]
    assert row["found in the slow version"] == "yes"
    assert row["found in the fixed version"] == \
        PATTERNS["launches-per-step"].title
    other = rows[PATTERNS["float64"].title]
    assert (other["found in the slow version"],
            other["found in the fixed version"]) == ("no", "nothing")


def test_each_cases_issues_are_cited_in_the_field_guide():
    from pathlib import Path

    from pybtex.database import parse_file
    root = Path(__file__).resolve().parents[2]
    text = (root / "chapters" / "10_field_guide.md").read_text()
    bib = parse_file(str(root / "references.bib"))
    for name, case in guide.CASES.items():
        for key in case.cite_keys:
            assert key in bib.entries, f"{name}: {key} not in references.bib"
            assert key in text, f"{name}: {key} not cited in the guide"
