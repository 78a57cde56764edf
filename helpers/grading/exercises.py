"""Auto-checked exercises: grade a learner's function, show pass/fail + hints.

An `Exercise` is a list of criteria (`helpers.grading.criteria`) plus what the
book and the workshop need to know about it: its chapter, the name the
chapter's starter cell gives the answer, the starter, the reference solution
and its level. The workshop kit reads the list of exercises from these objects
(`helpers.workbook.ch08_workshop.workshop.exercises`), so there is one source
of truth.

``exercise.check(fn)`` returns a `Report` (`helpers.grading.report`). A check
never raises: whatever the learner's function returns or raises, the
criterion fails with a message naming what was returned and what was
expected, and the full error text is kept, folded. A criterion that needs
a GPU is *not graded here* on a CPU, and the exercise is then never shown
as passed. ``exercise.show_solution()`` displays the solution and its
check inside a fold the reader opens on purpose.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import inspect
import re
import traceback
from typing import Any, Callable, Literal, Sequence, get_args

from helpers.grading.answer_forms import (
    WrongAnswer,
    computes_nothing,
    describe,
)
from helpers.grading.criteria import (
    Criterion,
    as_fast_as,
    described,
    description_of,
    faster_than,
    hlo_fact,
    jaxpr_fact,
    matches_reference,
    time_below,
)
from helpers.grading.report import Outcome, Report, learner_error, not_graded

__all__ = ["Exercise", "Solution", "Outcome", "Report", "learner_error",
           "not_graded", "matches_reference", "hlo_fact", "jaxpr_fact",
           "time_below", "faster_than", "as_fast_as", "described",
           "description_of", "computes_nothing", "reread_hint", "LEVELS"]

Level = Literal["warm-up", "core", "stretch"]
LEVELS: tuple[Level, ...] = get_args(Level)


def _grade(criterion: Criterion, fn: Callable[..., Any]) -> Outcome:
    """Run one criterion; whatever breaks inside it becomes a failure that
    says what happened, never an exception out of the check."""
    name = description_of(criterion)
    try:
        return criterion(fn)
    except WrongAnswer as err:
        return Outcome(name, "fail", str(err))
    except Exception as err:  # an answer of a form no one foresaw
        first_line = (str(err).splitlines() or [""])[0]
        return Outcome(name, "fail", "could not grade what your function "
                       f"returned: {type(err).__name__}: {first_line}",
                       error="".join(traceback.format_exception(err)))


def reread_hint(section: str) -> str:
    """The last rung of a hint ladder: the section to read again, by its
    number and title, or by its title alone on the unnumbered how-to page.

    Example:
        >>> reread_hint("2.3 Reading the compiler's decision")
        "Read section 2.3 Reading the compiler's decision again."
        >>> reread_hint("Try the checker")
        'Read the section "Try the checker" again.'
    """
    numbered = section.split(" ", 1)[0].replace(".", "").isdigit()
    return (f"Read section {section} again." if numbered
            else f"Read the section \"{section}\" again.")


@dataclasses.dataclass(frozen=True)
class Exercise:
    """An exercise: a title, criteria and progressive hints, and, for the
    book's exercises, where it sits and what a learner starts from.

    Attributes:
        title: ``'Exercise 2.1: K=25 through the reduction emitter'``;
            the number after "Exercise" places it in the book.
        criteria: what `check` grades, in order.
        hints: progressive hints, mildest first.
        chapter: the chapter's file stem, e.g. ``'02_fusion'``.
        answer: the name the chapter's starter cell gives the function.
        starter: what a learner starts from (fails the check).
        solution: the reference solution (passes it).
        level: ``'warm-up'``, ``'core'`` or ``'stretch'``.
        reread: the section that teaches what the exercise asks, numbered
            and titled as the book shows it (``'2.3 Reading the
            compiler's decision'``; the title alone on the unnumbered
            how-to page): the last rung of the hint ladder.

    Example:
        >>> ex = Exercise("Double it", [matches_reference(
        ...     lambda x: 2 * x, [(np.arange(3.0),)])])
        >>> ex.check(lambda x: x + x).passed
        True
    """

    title: str
    criteria: Sequence[Criterion]
    hints: Sequence[str] = ()
    chapter: str = ""
    answer: str = ""
    starter: Callable[..., Any] | None = None
    solution: Callable[..., Any] | None = None
    level: Level = "core"
    reread: str = ""

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got "
                             f"{self.level!r}")
        if self.chapter and self.number and \
                int(self.number.split(".")[0]) != int(self.chapter[:2]):
            raise ValueError(f"{self.title!r} is numbered for another "
                             f"chapter than {self.chapter!r}")

    @property
    def number(self) -> str:
        """``'2.1'`` from the title, or ``''`` for an unnumbered one."""
        match = re.match(r"Exercise (\d+\.\d+)", self.title)
        return match.group(1) if match else ""

    @property
    def label(self) -> str:
        """The label of the chapter's ``{exercise}`` block, which the book
        numbers and ``{numref}`` cites: ``'ex-'`` and the answer's name,
        ``'ex-mean-of-first'`` for ``mean_of_first``."""
        return "ex-" + self.answer.replace("_", "-") if self.answer else ""

    def check(self, fn: Callable[..., Any]) -> Report:
        """Grade ``fn`` against every criterion; never raises for
        anything the learner passes or their function does."""
        if not self.criteria:
            raise ValueError(f"{self.title} has no criteria to check.")
        if not callable(fn):
            return Report(self.title, (Outcome(
                "your answer is a function", "fail",
                f"check() takes your function itself; got {describe(fn)}",
                "Pass the function without calling it: check(f), not "
                "check(f(x))."),), self.hint_ladder)
        outcomes = tuple(_grade(c, fn) for c in self.criteria)
        return Report(self.title, outcomes, self.hint_ladder)

    @property
    def hint_ladder(self) -> tuple[str, ...]:
        """The hints, mildest first, ending with the section to read
        again when the book places the exercise."""
        if not self.reread:
            return tuple(self.hints)
        return tuple(self.hints) + (reread_hint(self.reread),)

    def show_solution(self) -> "Solution":
        """The reference solution and its check, folded: in Jupyter,
        Colab and the book it shows as a closed box to open on purpose."""
        if self.solution is None:
            raise ValueError(f"{self.title} has no solution to show.")
        return Solution(self)


@dataclasses.dataclass(frozen=True)
class Solution:
    """An exercise's solution as a fold: the source and its check appear
    only when the reader opens it."""

    exercise: Exercise

    @property
    def solution(self) -> Callable[..., Any]:
        """The exercise's solution function."""
        if self.exercise.solution is None:
            raise ValueError(f"{self.exercise.title} has no solution to "
                             "show.")
        return self.exercise.solution

    def source(self) -> str:
        """The solution's source code."""
        return inspect.getsource(self.solution)

    @functools.cached_property
    def report(self) -> Report:
        """The solution's own check, run once."""
        return self.exercise.check(self.solution)

    def html(self) -> str:
        """A closed <details> box holding the source and the check."""
        return ("<details><summary><b>Solution of "
                f"{html.escape(self.exercise.title)}</b> (open it when you "
                "have tried)</summary>"
                f"<pre>{html.escape(self.source())}</pre>"
                f"{self.report.html()}</details>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None
                          ) -> dict[str, str]:
        # A terminal has no fold: say how to read it instead of printing it.
        return {"text/html": self.html(), "text/plain":
                f"The solution of {self.exercise.title} is folded; "
                "print(exercise.show_solution().source()) shows it."}
