"""The facilitator's kit, read from the book itself so it cannot drift
from what participants see.

* `goal(chapter)` is the chapter's own one-sentence summary;
* `exercises_of(chapter)` its exercises, in order;
* `common_mistakes(chapter)` runs each wrong attempt of the tests' table
  (`helpers.workbook.ch08_workshop.attempts`) through its exercise's check
  and tabulates the mistake, what the check found and the hint it gave;
* `answer_key(chapter)` the solutions, each folded with its check;
* `own_code_patterns()` (`show_own_code`) what the last block's examine
  box finds in the kind of code participants bring, from the checker's
  own test programs.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.grading.exercises import Exercise, Solution
from helpers.measuring import machine
from helpers.workbook.ch08_workshop import workshop
from helpers.workbook.ch08_workshop.attempts import ATTEMPTS

SUMMARY = ":::{admonition} The chapter in one sentence"


def _chapter_source(chapter: str) -> str:
    path = Path(machine.repo_root()) / "chapters" / f"{chapter}.md"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: give a chapter's file "
                                "name without its suffix, e.g. "
                                "'02_fusion'.")
    return path.read_text()


def goal(chapter: str) -> str:
    """The chapter's one-sentence summary (its first admonition), on one
    line; ``''`` for a page without one."""
    source = _chapter_source(chapter)
    if SUMMARY not in source:
        return ""
    body = source.split(SUMMARY, 1)[1].split(":::", 1)[0]
    lines = [line for line in body.splitlines()
             if line.strip() and not line.startswith(":class:")]
    return " ".join(" ".join(lines).split())


def exercises_of(chapter: str) -> list[Exercise]:
    """The book's exercises in ``chapter``, in order."""
    found = [e for e in workshop.exercises() if e.chapter == chapter]
    if not found:
        raise ValueError(f"{chapter!r} has no exercises; the chapters with "
                         "exercises are " + ", ".join(sorted(
                             {e.chapter for e in workshop.exercises()})))
    return found


def _in_words(attempt: Any, answer: str) -> str:
    """An attempt's name as words, without the leading words it shares
    with the answer's name: ``bmv_pad_to_30`` -> ``'pad to 30'``,
    ``floor_one_flop`` for ``matmul_floor`` -> ``'one flop'``."""
    words = attempt.__name__.split("_")
    shared = set(answer.split("_"))
    while len(words) > 1 and words[0] in shared:
        words.pop(0)
    return " ".join(words)


def common_mistakes(chapter: str) -> pd.DataFrame:
    """Each wrong attempt at ``chapter``'s exercises, run through its
    check: the exercise, the mistake, the first criterion it failed with
    what was found, and the hint written for that mistake (the one of the
    report's hints the tests require it to get)."""
    rows = []
    for exercise in exercises_of(chapter):
        for attempt, meant in ATTEMPTS[exercise.answer]["wrong"].items():
            with warnings.catch_warnings():
                # a mistake's own warnings (JAX's on a donation it could
                # not use) are the participant's, not the table's
                warnings.simplefilter("ignore")
                report = exercise.check(attempt)
            failed = next(o for o in report.outcomes if o.status == "fail")
            hints = report.failed_hints()
            rows.append({"exercise": exercise.number,
                         "mistake": _in_words(attempt, exercise.answer),
                         "the check says": f"{failed.criterion}: "
                                           + failed.detail.partition("\n")[0],
                         "the hint for it": next(
                             (h for h in hints if meant in h), hints[0])})
    return pd.DataFrame(rows)


# A flag or option as a check prints it, '--xla_...' or 'xla_...=...':
# set as code, so the page's typography leaves its dashes alone.
FLAG = re.compile(r"(?<!\w)--?[A-Za-z_][\w.=-]*|(?<!\w)--(?!\w)|\bxla_\w+")


def _as_text(words: str) -> str:
    """``words`` as one Markdown sentence: its asterisks escaped (a
    product in a detail is not emphasis), its flags set as code (their
    ``--`` is not a dash), ending in a full stop."""
    escaped = FLAG.sub(lambda m: f"`{m.group(0)}`", words.replace("*", "\\*"))
    return escaped if escaped.endswith((".", "?", "!")) else escaped + "."


def answer_key(chapter: str) -> list[Solution]:
    """The solutions of ``chapter``'s exercises, each a closed fold with
    its check (`Exercise.show_solution`)."""
    return [exercise.show_solution() for exercise in exercises_of(chapter)]


def show_block(chapter: str) -> None:
    """Display a block's guide: the chapter's goal in its own words, the
    common mistakes as a list, and the answer key (each solution
    folded)."""
    from IPython.display import Markdown, display

    summary = goal(chapter)
    if summary:
        display(Markdown(f"**The chapter in one sentence.** {summary}"))
    # a list, not a table: the check's words read at any width
    lines = [f"- **{row['exercise']}, {row['mistake']}.** The check: "
             f"{_as_text(row['the check says'])} Its hint: "
             f"{_as_text(row['the hint for it'])}"
             for _, row in common_mistakes(chapter).iterrows()]
    display(Markdown("**The common mistakes, and what the check says to "
                     "each:**\n\n" + "\n".join(lines)))
    for solution in answer_key(chapter):
        display(solution)


def own_code_patterns() -> pd.DataFrame:
    """The slow patterns of the checker's test programs (programs written
    like participants' code, `checker_suite.SLOW`), the most frequent
    first: how many programs show each, one of them, the usual fix and the
    field guide's section (its anchor)."""
    from helpers.examine.findings import PATTERNS
    from helpers.workbook.ch10_field_guide.checker_suite import SLOW

    rows = [{"pattern": program.expected, "example": program.name}
            for program in SLOW if program.expected]
    counted = (pd.DataFrame(rows).groupby("pattern", sort=False)
               .agg(programs=("example", "size"), example=("example", "first"))
               .sort_values("programs", ascending=False, kind="stable"))
    return pd.DataFrame({
        "pattern": [PATTERNS[name].title for name in counted.index],
        "programs": counted["programs"].to_numpy(),
        "for example": counted["example"].to_numpy(),
        "the fix": [PATTERNS[name].fix for name in counted.index],
        "section": [PATTERNS[name].link for name in counted.index]})


def show_own_code() -> None:
    """Display `own_code_patterns` as a list: each pattern, how many of
    the test programs show it and one of them, its fix and a link to the
    field guide's section."""
    from IPython.display import Markdown, display

    table = own_code_patterns()
    total = int(table["programs"].sum())
    lines = [f"- **{row['pattern']}** ({row['programs']} of {total}; "
             f"for example *{row['for example']}*). The fix: "
             f"{_as_text(row['the fix'])} [In the field guide]"
             f"({row['section']})."
             for _, row in table.iterrows()]
    display(Markdown("**What the examine box finds in code like the "
                     "room's, the most frequent first:**\n\n"
                     + "\n".join(lines)))
