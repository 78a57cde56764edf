"""The numbers the field guide quotes from the other chapters' H100
recordings: chapter 3's pair for each loop section (the pattern as users
wrote it against the section's own fix), chapter 2's product and types,
chapter 5's precisions."""

import pytest

from helpers.measuring import recorded
from helpers.workbook.ch10_field_guide import guide

from book_paths import ROOT


def variants():
    return recorded.load("03_launches/variants")["data"]


def test_the_round_trip_section_quotes_traced_against_static_bound():
    pair = guide.loop_pair_numbers(variants(), "while, traced bound",
                                   "while, static bound")
    # 20.7 and 6.23 µs a step on the H100: about 3.3 times
    assert pair["slow_us"] == pytest.approx(20.67, abs=0.005)
    assert pair["fast_us"] == pytest.approx(6.226, abs=0.0005)
    assert pair["ratio"] == pytest.approx(3.32, abs=0.005)


def test_a_fix_that_made_the_loop_slower_shows_as_a_ratio_under_1():
    pair = guide.loop_pair_numbers(variants(), "scan, split per step",
                                   "scan, noise outside")
    # 6.08 and 9.08 µs a step on the H100
    assert pair["ratio"] == pytest.approx(6.08 / 9.08, abs=0.01)


def test_a_variant_the_recording_lacks_is_named():
    with pytest.raises(KeyError, match="no variant \\['made up'\\]"):
        guide.loop_pair_numbers(variants(), "made up", "while, static bound")


def test_the_product_section_reads_chapter_2_by_its_clock():
    from helpers.workbook.ch02_fusion import verdicts as fusion_verdicts
    fixes = recorded.load("02_fusion/fixes")["data"]
    product = guide.product_numbers(fixes)
    # the same share chapter 2 computes for the same row
    rows = fusion_verdicts.table(fixes)
    at = rows[(rows["K"] == 25) & (rows["dtype"] == "float32")]
    plain = at[at["version"] == "a @ b"]["achieved"].iloc[0]
    assert product["plain_share"] == plain
    assert product["best_share"] == at["achieved"].max()


def test_the_launches_section_quotes_both_one_kernel_backends():
    goals = recorded.load("03_launches/goals")["data"]
    kernel = guide.one_kernel_numbers(goals, variants())
    # 1.50 ms (Triton) and 1.75 ms (Mosaic GPU) for 8000 steps on the H100
    assert kernel["triton_us"] == pytest.approx(0.188, abs=0.001)
    assert kernel["mosaic_us"] == pytest.approx(0.219, abs=0.001)
    assert kernel["scan_us"] == pytest.approx(10.6, abs=0.05)
    assert kernel["scan_over_triton"] == pytest.approx(
        kernel["scan_us"] / kernel["triton_us"])


def _sweep(ms32, ms64):
    return {"rows": {"K": [25, 64, 25, 64],
                     "dtype": ["float32", "float32", "float64", "float64"],
                     "version": ["a @ b"] * 4,
                     "device ms": [9.0, ms32, 9.0, ms64]}}


def test_the_float64_section_reads_chapter_2_against_twice_the_bytes():
    twice = guide.dtype_numbers(_sweep(0.339, 0.672))
    assert twice["k"] == 64
    assert twice["ratio"] == pytest.approx(0.672 / 0.339)
    assert abs(twice["ratio"] / 2 - 1) <= 0.1
    less = guide.dtype_numbers(_sweep(0.546, 0.945))
    assert abs(less["ratio"] / 2 - 1) > 0.1


def test_the_precision_section_quotes_errors_in_millionths():
    data = {"precision": {
        "n": [1024, 8192, 8192],
        "precision": ["float32, default precision",
                      "float32, default precision",
                      "float32, precision='highest'"],
        "rel error": [1e-4, 2.94e-4, 8.1e-7]}}
    errors = guide.precision_numbers(data)
    assert errors["n"] == 8192
    assert errors["default_millionths"] == pytest.approx(294)
    assert errors["highest_millionths"] == pytest.approx(0.81)
    assert errors["ratio"] == pytest.approx(2.94e-4 / 8.1e-7)


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

    from pybtex.database import parse_file
    root = ROOT
    text = (root / "chapters" / "10_field_guide.md").read_text()
    bib = parse_file(str(root / "references.bib"))
    for name, case in guide.CASES.items():
        for key in case.cite_keys:
            assert key in bib.entries, f"{name}: {key} not in references.bib"
            assert key in text, f"{name}: {key} not cited in the guide"
