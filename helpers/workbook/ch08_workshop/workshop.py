"""The workshop kit: every exercise of the book, and the checks a
facilitator and a participant run over all of them.

The list of exercises is read from the `Exercise` objects themselves (each
knows its chapter, the name a participant gives their answer, its starter,
solution and level), found in the modules of `helpers.workbook`. From it:

* `exercises()` is the book's exercises in order;
* `progress(answers)` checks a participant's answers, found by name in a
  dict such as ``globals()``, each with the names its chapter imported
  (`answers.in_its_chapter`), and tabulates what passed; an answer that
  passed and was not redefined since is not checked again;
* `summary(board)` counts the dashboard's rows by status, with the
  exercises passed only where they could be graded counted apart;
* `kit_check()` is the facilitator's pre-flight: on this machine, does
  every solution pass and every untouched starter fail, and which criteria
  could not be graded here.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import time
from typing import Any

import pandas as pd

from helpers.grading.exercises import LEVELS, Exercise
from helpers.grading.report import STATUSES, Report
from helpers.workbook.ch08_workshop import answers as pasted

__all__ = ["exercises", "progress", "summary", "kit_check", "LEVELS"]

NOT_ATTEMPTED = "not attempted"


@functools.cache
def exercises() -> tuple[Exercise, ...]:
    """Every exercise of the book, in its order: each `Exercise` found at
    the top level of a chapter's ``exercises`` module
    (``helpers.workbook.<chapter>.exercises``).

    Raises:
        ValueError: an exercise lacks its number, chapter, answer name,
            starter or solution, or two share a number or an answer name.
    """
    import helpers.workbook as workbook

    found: dict[int, Exercise] = {}
    for chapter in pkgutil.iter_modules(workbook.__path__):
        name = f"{workbook.__name__}.{chapter.name}.exercises"
        if not chapter.ispkg or importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, Exercise):
                found[id(value)] = value
    listed = sorted(found.values(), key=_place)
    for field in ("number", "answer"):
        values = [getattr(e, field) for e in listed]
        repeated = {v for v in values if values.count(v) > 1}
        if repeated:
            raise ValueError(f"exercises share the {field}s {repeated}")
    return tuple(listed)


def _place(exercise: Exercise) -> tuple[int, ...]:
    """Where an exercise sits in the book, (chapter, number), after
    checking that it says all the book needs to know about it."""
    missing = [name for name in ("number", "chapter", "answer", "starter",
                                 "solution") if not getattr(exercise, name)]
    if missing:
        raise ValueError(f"{exercise.title!r} lacks {missing}: give the "
                         "Exercise its place in the book.")
    return tuple(int(part) for part in exercise.number.split("."))


# The last passing report for each exercise, with the functions it graded:
# the dashboard does not check again an answer that passed and was not
# redefined since (nor its helpers, functions of the same notebook it
# calls). Anything that did not pass is checked on every run, so that a
# fix outside the function (an import added, a helper defined) counts.
_last_passes: dict[str, tuple[tuple[Any, ...], Report]] = {}


def _report(exercise: Exercise, fn: Any) -> Report:
    graded = tuple(pasted.same_session(fn)) or (fn,)
    last = _last_passes.get(exercise.title)
    if last is not None and len(last[0]) == len(graded) and all(
            a is b for a, b in zip(last[0], graded)):
        return last[1]
    report = exercise.check(pasted.in_its_chapter(fn, exercise.chapter))
    if not report.failed:
        _last_passes[exercise.title] = (graded, report)
    else:
        _last_passes.pop(exercise.title, None)
    return report


def _counts(report: Report) -> dict[str, int]:
    statuses = [o.status for o in report.outcomes]
    return {s: statuses.count(s) for s in ("pass", "fail", "skip")}


def progress(answers: dict[str, Any]) -> pd.DataFrame:
    """Check every answer found in ``answers`` (e.g. ``globals()``).

    Returns:
        One row per exercise: chapter, exercise, level, the answer's name,
        ``status`` ('passed', 'not yet', 'passed where graded', 'not graded
        here' or 'not attempted'), the counts of criteria passed, failed
        and not graded here (``skip``), and the first hint when not yet.

    Raises:
        TypeError: ``answers`` is not a mapping.
    """
    if not hasattr(answers, "get"):
        raise TypeError("progress() takes a dict of answers by name, e.g. "
                        f"progress(globals()); got {type(answers).__name__}")
    rows = []
    for exercise in exercises():
        fn = answers.get(exercise.answer)
        row: dict[str, Any] = {
            "chapter": exercise.chapter, "exercise": exercise.title,
            "level": exercise.level, "answer": exercise.answer}
        if not callable(fn):
            rows.append({**row, "status": NOT_ATTEMPTED})
            continue
        report = _report(exercise, fn)
        hints = report.failed_hints()
        rows.append({**row, "status": report.status, **_counts(report),
                     "hint": hints[0] if hints else ""})
    columns = ["chapter", "exercise", "level", "answer", "status", "pass",
               "fail", "skip", "hint"]
    table = pd.DataFrame(rows).reindex(columns=columns)
    counts = ["pass", "fail", "skip"]
    table[counts] = table[counts].fillna(0).astype(int)
    table["hint"] = table["hint"].astype(object).fillna("")
    return table


def summary(board: pd.DataFrame) -> pd.Series:
    """How many exercises of a `progress` board have each status, every
    status listed (zero included). 'passed where graded' is counted apart
    from 'passed': a criterion of those could not be checked here."""
    order = [*STATUSES, NOT_ATTEMPTED]
    return board["status"].value_counts().reindex(order, fill_value=0)


def in_words(board: pd.DataFrame) -> str:
    """A `progress` board's `summary` as one line, e.g. '3 of 22
    attempted: 2 passed, 1 not yet'."""
    counts = summary(board)
    tried = len(board) - counts[NOT_ATTEMPTED]
    parts = [f"{n} {status}" for status, n in counts.items()
             if n and status != NOT_ATTEMPTED]
    return (f"{tried} of {len(board)} attempted"
            + (": " + ", ".join(parts) if parts else ""))


def attempted(board: pd.DataFrame) -> pd.DataFrame:
    """The rows of a `progress` board whose answer was pasted, by
    exercise: its status, criteria passed, failed and not graded here,
    and the first hint of what does not pass yet."""
    rows = board[board["status"] != NOT_ATTEMPTED]
    return rows.set_index("exercise")[["status", "pass", "fail", "skip",
                                       "hint"]]


def dashboard(board: pd.DataFrame) -> None:
    """Show a `progress` board: the count in words, then the table of the
    answers pasted so far (none before the first)."""
    from IPython.display import display
    print(in_words(board))
    tried = attempted(board)
    if len(tried):
        display(tried)


def kit_table(preflight: pd.DataFrame) -> pd.DataFrame:
    """A `kit_check` result as the page shows it: one row per exercise,
    named by its number ('2.1'), the solution's status, whether the
    starter fails, and the two checks' time in seconds. The criteria
    not graded here are `kit_not_graded`'s."""
    table = pd.DataFrame({
        "exercise": preflight["exercise"].map(_number),
        "solution": preflight["solution"],
        "starter fails": preflight["starter fails"],
        "check s": preflight["seconds"].round(1)})
    return table.set_index("exercise")


def kit_not_graded(preflight: pd.DataFrame) -> pd.DataFrame:
    """The exercises of a `kit_check` with a criterion this machine could
    not grade, and that criterion."""
    rows = preflight[preflight["not graded here"] != ""]
    return pd.DataFrame({"exercise": rows["exercise"],
                         "not graded here": rows["not graded here"]}
                        ).set_index("exercise")


def _number(title: str) -> str:
    """'2.1' of 'Exercise 2.1: K=25 through the reduction emitter'."""
    return title.split(":")[0].removeprefix("Exercise ").strip()


def kit_check(selection: list[Exercise] | None = None) -> pd.DataFrame:
    """Run every solution and every starter through its check here.

    Args:
        selection: the exercises to check; all of `exercises()` by default.

    Returns:
        One row per exercise: the solution's status ('passed', or 'passed
        where graded' when a criterion needs what this machine lacks),
        whether the starter fails, the criteria not graded here, and the
        seconds the two checks took.
    """
    rows = []
    for exercise in exercises() if selection is None else selection:
        start = time.perf_counter()
        if exercise.solution is None or exercise.starter is None:
            raise ValueError(f"{exercise.title} lacks a starter or a "
                             "solution: the kit checks both.")
        solved = exercise.check(exercise.solution)
        started = exercise.check(exercise.starter)
        not_graded = [o.criterion for o in solved.outcomes
                      if o.status == "skip"]
        rows.append({"chapter": exercise.chapter,
                     "exercise": exercise.title,
                     "level": exercise.level,
                     "solution": solved.status,
                     "starter fails": started.failed,
                     "not graded here": "; ".join(not_graded),
                     "seconds": time.perf_counter() - start})
    return pd.DataFrame(rows)
