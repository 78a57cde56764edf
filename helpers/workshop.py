"""The workshop kit: every exercise of the book in one list, and the
checks a facilitator and a participant run over all of them.

Each `Entry` names an exercise, the chapter it belongs to, the name a
participant gives their answer in the chapter (``rms``, ``time_call``, ...),
its starter and its reference solution. From that list:

* `progress(answers)` checks a participant's answers, found by name in a
  dict such as ``globals()``, and tabulates what passed;
* `kit_check()` is the facilitator's pre-flight: on this machine, does
  every solution pass and every untouched starter fail, and which criteria
  were skipped for want of a GPU.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import pandas as pd

from helpers.exercises import Exercise, Report

LEVELS = ("warm-up", "core", "stretch")


@dataclasses.dataclass(frozen=True)
class Entry:
    """One exercise of the book.

    Attributes:
        chapter: the chapter's file stem, e.g. ``'01_measuring'``.
        exercise: the `Exercise` that grades an answer.
        answer: the name the chapter's starter cell gives the function.
        starter: what a participant starts from (fails the check).
        solution: the reference solution (passes it).
        level: ``'warm-up'``, ``'core'`` or ``'stretch'``.
    """

    chapter: str
    exercise: Exercise
    answer: str
    starter: Callable[..., Any]
    solution: Callable[..., Any]
    level: str

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got "
                             f"{self.level!r}")


def entries() -> list[Entry]:
    """Every exercise, in the book's order."""
    from helpers.workbook import (deciding, drills, flags, fusion,
                                  measuring, rewrites, scaling, tracing,
                                  using)

    return [
        Entry("00_how_to_use", using.root_mean_square, "rms",
              using.starter, using.solution, "warm-up"),
        Entry("01_measuring", measuring.honest_timer, "time_call",
              measuring.starter, measuring.solution, "warm-up"),
        Entry("01_measuring", measuring.matmul_floor, "matmul_floor",
              measuring.floor_starter, measuring.floor_solution, "core"),
        Entry("01_measuring", drills.WHICH_BOUND, "which_bound",
              drills.which_bound_starter, drills.which_bound_solution,
              "warm-up"),
        Entry("02_fusion", fusion.fast_reduction, "bmv",
              fusion.starter, fusion.solution, "core"),
        Entry("02_fusion", fusion.predict_kind, "predict",
              fusion.predict_starter, fusion.predict_solution, "warm-up"),
        Entry("02_fusion", drills.PROBLEM_BYTES, "problem_bytes",
              drills.problem_bytes_starter, drills.problem_bytes_solution,
              "warm-up"),
        Entry("03_launches", rewrites.fewer_launches, "fast",
              rewrites.starter, rewrites.solution, "core"),
        Entry("03_launches", rewrites.fused_step, "filter_step",
              rewrites.filter_starter, rewrites.filter_solution, "stretch"),
        Entry("03_launches", drills.STATIC_TRIP_COUNT, "make_loop",
              drills.make_loop_starter, drills.make_loop_solution,
              "warm-up"),
        Entry("04_profiling", deciding.which_is_faster, "decide",
              deciding.starter, deciding.solution, "stretch"),
        Entry("04_profiling", deciding.nine_tests, "significant",
              deciding.holm_starter, deciding.holm_solution, "core"),
        Entry("04_profiling", drills.SCOPE_TOTALS, "scope_totals",
              drills.scope_totals_starter, drills.scope_totals_solution,
              "warm-up"),
        Entry("05_transformations", tracing.TRACE_ONCE, "mean_of_first",
              tracing.mean_of_first_starter,
              tracing.mean_of_first_solution, "warm-up"),
        Entry("05_transformations", tracing.DONATE, "make_step",
              tracing.make_step_starter, tracing.make_step_solution,
              "core"),
        Entry("05_transformations", drills.VMAP_LOSS, "batched_loss",
              drills.batched_loss_starter, drills.batched_loss_solution,
              "stretch"),
        Entry("06_xla_flags", flags.FIND_THE_OPTION, "options",
              flags.options_starter, flags.options_solution, "warm-up"),
        Entry("06_xla_flags", drills.FLAG_REACHES_XLA, "fusions_under",
              drills.fusions_under_starter, drills.fusions_under_solution,
              "core"),
        Entry("06_xla_flags", drills.KNOWN_FLAGS, "known",
              drills.known_starter, drills.known_solution, "stretch"),
        Entry("07_multi_gpu", scaling.ONE_ALL_REDUCE, "block_specs",
              scaling.block_specs_starter, scaling.block_specs_solution,
              "warm-up"),
        Entry("07_multi_gpu", scaling.UNTANGLE_RING, "pass_along",
              scaling.pass_along_starter, scaling.pass_along_solution,
              "core"),
        Entry("07_multi_gpu", scaling.RING_ALL_REDUCE, "ring_psum",
              scaling.ring_psum_starter, scaling.ring_psum_solution,
              "stretch"),
    ]


def _counts(report: Report) -> dict[str, int]:
    statuses = [o.status for o in report.outcomes]
    return {s: statuses.count(s) for s in ("pass", "fail", "skip")}


def progress(answers: dict[str, Any]) -> pd.DataFrame:
    """Check every answer found in ``answers`` (e.g. ``globals()``).

    Returns:
        One row per exercise: chapter, exercise, level, the answer's name,
        ``status`` ('passed', 'not yet' or 'not attempted'), the counts of
        criteria passed/failed/skipped, and the first hint when not yet.

    Raises:
        TypeError: ``answers`` is not a mapping.
    """
    if not hasattr(answers, "get"):
        raise TypeError("progress() takes a dict of answers by name, e.g. "
                        f"progress(globals()); got {type(answers).__name__}")
    rows = []
    for entry in entries():
        fn = answers.get(entry.answer)
        row = {"chapter": entry.chapter, "exercise": entry.exercise.title,
               "level": entry.level, "answer": entry.answer}
        if not callable(fn):
            rows.append({**row, "status": "not attempted"})
            continue
        report = entry.exercise.check(fn)
        hints = report.failed_hints()
        rows.append({**row, "status": "passed" if report.passed else
                     "not yet", **_counts(report),
                     "hint": hints[0] if hints else ""})
    columns = ["chapter", "exercise", "level", "answer", "status", "pass",
               "fail", "skip", "hint"]
    table = pd.DataFrame(rows).reindex(columns=columns)
    counts = ["pass", "fail", "skip"]
    table[counts] = table[counts].fillna(0).astype(int)
    table["hint"] = table["hint"].astype(object).fillna("")
    return table


def kit_check(selection: list[Entry] | None = None) -> pd.DataFrame:
    """Run every solution and every starter through its check here.

    Args:
        selection: the entries to check; all of `entries()` by default.

    Returns:
        One row per exercise: whether the solution passes and the starter
        fails (both must hold for the kit to work), the criteria the
        solution's check skipped on this machine (GPU-only ones on a CPU),
        and the seconds the two checks took.
    """
    rows = []
    for entry in entries() if selection is None else selection:
        start = time.perf_counter()
        solved = entry.exercise.check(entry.solution)
        started = entry.exercise.check(entry.starter)
        skipped = [o.criterion for o in solved.outcomes
                   if o.status == "skip"]
        rows.append({"chapter": entry.chapter,
                     "exercise": entry.exercise.title,
                     "level": entry.level,
                     "solution passes": solved.passed,
                     "starter fails": not started.passed,
                     "skipped here": "; ".join(skipped),
                     "seconds": time.perf_counter() - start})
    return pd.DataFrame(rows)

