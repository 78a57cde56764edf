"""The field guide quotes chapter 3's recorded pair for each loop section:
the pattern as users wrote it against the section's own fix."""

import pytest

import first_visit
from helpers.workbook.ch10_field_guide import guide

GPU = "NVIDIA H100 80GB HBM3"


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
