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


def timed_sentence(graded: dict[str, dict[str, object]],
                   today: dict[str, list[str]], device: str | None = None
                   ) -> str | None:
    """`timed_on_gpu`'s result in words: the GPU that graded it where the
    run names one, each solution's outcome, and whether the targets
    graded are ``today``'s (each exercise's `criteria_of`, by number).
    None when no GPU run graded a time target."""
    if not graded:
        return None
    from helpers.page.prose import and_list
    numbers = sorted(graded)
    outcomes = {n: graded[n]["outcome"] for n in numbers}
    if set(outcomes.values()) == {"passed"}:
        outcome = "every solution passed"
    else:
        outcome = "; ".join(f"the solution of {n} {o}"
                            for n, o in outcomes.items())
    where = f" on the {device}" if device else ""
    text = (f"The last GPU test run kept with the book "
            f"(`recorded/test-gpu-junit.xml`){where} ran the time tests of "
            f"exercise{'s' if len(numbers) > 1 else ''} {and_list(numbers)}"
            f": {outcome}.")
    unknown = [n for n in numbers if graded[n]["criteria"] is None]
    changed = [n for n in numbers if n not in unknown
               and graded[n]["criteria"] != today.get(n)]
    if changed:
        text += (f" The target{'s' if len(changed) > 1 else ''} of "
                 f"exercise{'s' if len(changed) > 1 else ''} "
                 f"{and_list(changed)} changed after that run, so today's "
                 "has not been graded on a GPU yet.")
    return text
