"""The exercises whose time targets only a GPU grades, and what the last
GPU test run kept with the book says of them.

`tests/gpu/test_workshop_on_gpu.py` runs each timed exercise's solution
through its check on a GPU, one test per exercise, and records the
criteria it graded in the JUnit file. The workshop page reads that file
back: which exercises were graded, on which GPU, whether each solution
passed, and whether the targets graded are today's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from helpers.grading.criteria import description_of
from helpers.grading.exercises import Exercise

GPU_TIMED_TEST = "test_speed_criteria_run_and_the_solution_meets_them"


def criteria_of(exercise: Exercise) -> list[str]:
    """An exercise's criteria in words, as its report names them."""
    return [description_of(criterion) for criterion in exercise.criteria]


def todays_criteria() -> dict[str, list[str]]:
    """Every exercise's criteria today, by number (``'2.1'``)."""
    from helpers.workbook.ch08_workshop import workshop
    return {e.number: criteria_of(e) for e in workshop.exercises()}


def timed_on_gpu(junit: Path) -> dict[str, dict[str, object]]:
    """Which exercises' GPU time targets a JUnit file of ``tests/gpu``
    graded: for each (by number, ``'2.1'``) its ``outcome`` ('passed',
    'failed', 'skipped') and the ``criteria`` it graded (None where the
    file does not record them); empty when the file is missing."""
    from helpers.measuring import gpu_test_run
    prefix = GPU_TIMED_TEST + "["
    graded = {}
    for case in gpu_test_run.cases(junit):
        if case["name"].startswith(prefix):
            criteria = case.get("criteria")
            graded[case["name"][len(prefix):-1]] = {
                "outcome": case["outcome"],
                "criteria": json.loads(criteria) if criteria else None}
    return graded




def timed_table(graded: dict[str, dict[str, object]],
                today: dict[str, list[str]]) -> pd.DataFrame:
    """`timed_on_gpu`'s result as the page shows it: a row an exercise
    whose time target a GPU graded, with its solution's outcome there and
    whether the target graded is ``today``'s (its `criteria_of`; "not
    kept" where the run kept none). Empty when no GPU graded one."""
    rows = {}
    for number in sorted(graded):
        kept = graded[number]["criteria"]
        rows[number] = {
            "solution on the GPU": graded[number]["outcome"],
            "today's target": "not kept" if kept is None
            else "yes" if kept == today.get(number) else "changed since"}
    return pd.DataFrame.from_dict(
        rows, orient="index",
        columns=["solution on the GPU", "today's target"]).rename_axis(
            "exercise")
