"""The workshop on a GPU: the speed criteria a CPU skips really run, and
every timed exercise's reference solution meets them."""

import pytest

from helpers import workshop

pytestmark = pytest.mark.gpu

# tests/unit/test_workbook.py finds these skipping a speed target on a CPU.
TIMED = {"bmv", "batched_loss"}


@pytest.mark.parametrize("entry", [e for e in workshop.entries()
                                   if e.answer in TIMED],
                         ids=lambda e: e.exercise.title)
def test_speed_criteria_run_and_the_solution_meets_them(entry):
    report = entry.exercise.check(entry.solution)
    assert report.passed, report.text()
    assert "skip" not in [o.status for o in report.outcomes], report.text()
