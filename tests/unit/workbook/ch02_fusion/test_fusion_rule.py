"""XLA:GPU's reduction rule restated in
helpers.workbook.ch02_fusion.reductions."""

import pytest

from helpers.workbook.ch02_fusion import reductions
from helpers.xla import crosscompile


@pytest.mark.parametrize("k, kind", [
    (2, "kInput"), (4, "kInput"), (5, "kLoop"), (8, "kInput"),
    (16, "kInput"), (24, "kLoop"), (25, "kLoop"), (31, "kLoop"),
    (32, "kInput"), (35, "kInput"), (64, "kInput")])
def test_row_reduction_of_the_source_problem(k, kind):
    assert reductions.reduction_shape((1000, 1000, 3, k), [3]) == (
        "row", (1, 3_000_000, k))
    assert reductions.reduction_kind((1000, 1000, 3, k), [3]) == kind


def test_column_reduction_over_a_major_dimension():
    assert reductions.reduction_shape((25, 3, 1000), [0]) == (
        "column", (1, 25, 3000))
    assert reductions.reduction_kind((25, 3, 1000), [0]) == "kLoop"  # 25 < 32
    assert reductions.reduction_kind((40, 3, 1000), [0]) == "kInput"


def test_full_and_middle_reductions():
    assert reductions.reduction_shape((4, 8), [0, 1]) == ("row", (1, 1, 32))
    # reducing the middle of (R, K, R): a column reduction per batch
    assert reductions.reduction_shape((7, 64, 5), [1]) == (
        "column", (7, 64, 5))
    # kept dims (0, 2) not adjacent, reduced (1, 3) not adjacent either
    assert reductions.reduction_kind((4, 5, 6, 7), [1, 3]) == "kLoop"


def test_bad_dimensions_are_named():
    with pytest.raises(ValueError, match=r"\[3\] must be indices"):
        reductions.reduction_shape((4, 5), [3])
    with pytest.raises(ValueError, match="must be indices"):
        reductions.reduction_shape((4, 5), [])


def test_bytes_moved_counts_inputs_and_output():
    assert reductions.bytes_moved(10, 25, 4) == 4 * 10 * (75 + 25 + 3)


# Row, column and full reductions of several sizes: each compiled for an
# H100 by XLA:GPU itself (no GPU needed), and the rule must agree.
RULE_CASES = [
    *[((512, k), [1]) for k in (2, 5, 8, 12, 16, 24, 25, 31, 32, 33, 100)],
    *[((1000, 1000, 3, k), [3]) for k in (8, 25, 35)],
    *[((rows, cols), [0]) for rows in (8, 25, 33, 70, 200)
      for cols in (2, 5, 40, 1000)],
    ((25, 3, 1000), [0]), ((40, 3, 1000), [0]), ((4, 8), [0, 1]),
    ((7, 64, 5), [1]), ((7, 16, 500), [1]), ((1000, 6), [0, 1]),
]


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_rule_agrees_with_xla_gpu_compiling_for_an_h100():
    truth = crosscompile.run(reductions.reduce_kinds_for_gpu,
                             RULE_CASES)
    rule = [reductions.reduction_kind(shape, reduced)
            for shape, reduced in RULE_CASES]
    wrong = [(case, r, t) for case, r, t in zip(RULE_CASES, rule, truth)
             if r != t]
    assert not wrong, wrong
