"""Feedback that never misleads, for every exercise of the book.

- An answer that returns nothing, or raises, gets no green line, whatever
  the criterion (a fact about a compiled program that computes nothing
  would otherwise hold).
- Each criterion is named the same whatever form the answer takes.
- Each hint ladder ends on the section to read again, and that section
  is the one the chapter numbers so.
- No hint quotes code from the reference solution.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

import pytest

from helpers.grading.criteria import description_of
from helpers.workbook.ch08_workshop import workshop
from helpers.workbook.ch08_workshop.attempts import ATTEMPTS

from book_paths import section_titles

EXERCISES = {e.answer: e for e in workshop.exercises()}


def _returns_none(*args, **kwargs):
    return None


def _raises(*args, **kwargs):
    raise ValueError("my mistake")


@pytest.fixture(scope="module", autouse=True)
def _four_devices():
    # chapter 7's criteria grade on simulated devices, as the workshop
    # page sets them up
    from helpers.multi_device import meshes
    meshes.simulate(8)


@pytest.mark.slow
@pytest.mark.parametrize("answer", sorted(EXERCISES))
@pytest.mark.parametrize("attempt", [_returns_none, _raises],
                         ids=["returns None", "raises"])
def test_an_answer_that_computes_nothing_gets_no_pass(answer, attempt):
    report = EXERCISES[answer].check(attempt)
    assert report.failed, report.text()
    passed = [o.criterion for o in report.outcomes if o.status == "pass"]
    assert passed == [], report.text()


def test_a_structural_fact_fails_for_a_function_that_returns_none():
    # exercise 2.1's facts hold vacuously of an empty program: the
    # review's case, where None got two green lines
    report = EXERCISES["bmv"].check(_returns_none)
    details = {o.detail for o in report.outcomes if o.status == "fail"}
    assert any("returned None" in d for d in details), report.text()


@pytest.mark.parametrize("answer", sorted(EXERCISES))
def test_every_criterion_is_named_in_words(answer):
    for criterion in EXERCISES[answer].criteria:
        assert getattr(criterion, "description", ""), (
            f"{answer}: {criterion.__name__} has no description; "
            "decorate it with @described('...')")


@pytest.mark.parametrize("answer", ["which_bound", "significant",
                                    "scope_totals", "mean_of_first"])
def test_a_criterion_keeps_its_name_for_an_answer_of_the_wrong_form(answer):
    exercise = EXERCISES[answer]
    names = [o.criterion for o in exercise.check(
        lambda *args, **kwargs: "fast").outcomes]
    assert names == [description_of(c) for c in exercise.criteria]


@pytest.mark.parametrize("answer", sorted(EXERCISES))
def test_the_hint_ladder_ends_on_a_section_the_chapter_has(answer):
    exercise = EXERCISES[answer]
    titles = section_titles(exercise.chapter)
    if exercise.chapter.startswith("00"):  # the how-to page: no numbers
        assert exercise.reread in titles
        assert exercise.hint_ladder[-1] == \
            f"Read the section \"{exercise.reread}\" again."
        return
    number, title = exercise.reread.split(" ", 1)
    chapter, section = (int(part) for part in number.split("."))
    assert chapter == int(exercise.chapter[:2])
    assert titles[section - 1].replace("`", "") == title, (
        f"{exercise.title}: section {number} is now "
        f"{titles[section - 1]!r}")
    assert exercise.hint_ladder[-1] == f"Read section {number} {title} again."


def _solution_code(exercise) -> str:
    """The solution's code without its docstring and comments, spaces
    removed."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(exercise.solution)))
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    body = function.body
    if body and isinstance(body[0], ast.Expr) and \
            isinstance(body[0].value, ast.Constant):
        function.body = body[1:] or [ast.Pass()]
    return re.sub(r"\s", "", ast.unparse(tree))


# code in a hint: a call, a backticked span, a keyword and its value
CODE = re.compile(r"[\w.]+\([^()]*\)|`[^`]+`|\w+=\([^)]*\)|\b\w+=[\w.]+")


def _quoted(hint: str, code: str) -> list[str]:
    return [fragment for fragment in CODE.findall(hint)
            if re.sub(r"\s", "", fragment.strip("`")) in code]


@pytest.mark.parametrize("answer", sorted(EXERCISES))
def test_no_hint_quotes_the_solutions_code(answer):
    exercise = EXERCISES[answer]
    code = _solution_code(exercise)
    for hint in exercise.hints:
        assert not _quoted(hint, code), (exercise.title, hint)


@pytest.mark.slow
@pytest.mark.parametrize("answer", sorted(ATTEMPTS))
def test_no_hint_a_mistake_gets_quotes_the_solutions_code(answer):
    # the criteria's own hints, as the starter and each wrong attempt
    # (the common mistakes) get them
    exercise = EXERCISES[answer]
    code = _solution_code(exercise)
    for attempt in [exercise.starter, *ATTEMPTS[answer]["wrong"]]:
        for hint in exercise.check(attempt).failed_hints():
            assert not _quoted(hint, code), (exercise.title, hint)
