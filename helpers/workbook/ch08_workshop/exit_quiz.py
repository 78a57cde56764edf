"""The workshop's exit quiz: a question on each chapter block from 1 to 7
(two on chapter 1), checked like an exercise.

A participant fills a dict of letters, ``{1: "b", 2: "a", ...}``, and
`check` returns a `Report` with one line per question; a wrong or missing
answer points to the section that teaches it, never to the letter.

Example:
    >>> report = check({1: "b"})
    >>> report.outcomes[0].status, report.outcomes[1].status
    ('pass', 'fail')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from IPython.display import Markdown

from helpers.grading.answer_forms import WrongAnswer, as_choice, describe
from helpers.grading.exercises import reread_hint
from helpers.grading.report import Outcome, Report


@dataclasses.dataclass(frozen=True)
class Question:
    """A multiple-choice question, its right letter and the section that
    teaches it (as the book numbers and titles it)."""

    text: str
    choices: tuple[str, ...]
    answer: str
    section: str

    @property
    def chapter(self) -> int:
        """The chapter that teaches it: 2 for section ``'2.3 ...'``."""
        return int(self.section.split(".")[0])

    @property
    def letters(self) -> tuple[str, ...]:
        """``('a', 'b', ...)``, one per choice."""
        return tuple("abcdefgh"[:len(self.choices)])


QUESTIONS = (
    Question("A jitted copy of 2 GB on a GPU, timed with time.perf_counter() "
             "around the call alone, takes 20 µs. Why so fast?",
             ("The GPU copies at 100 TB/s.",
              "The call returned when the copy was queued, not done.",
              "The result was cached from an earlier call."),
             "b", "1.3 Asynchronous dispatch"),
    Question("A kernel reads 4 GB and does 1 GFLOP on an H100 (3.35 TB/s, "
             "495 TFLOP/s of TF32). What sets its floor?",
             ("The tensor cores' rate.", "Neither: the launch.",
              "The memory's bandwidth."),
             "c", "1.8 The two floors"),
    Question("Where do you read which kind of kernel XLA wrote for a fused "
             "reduction?",
             ("In the compiled HLO's fusion kind.", "In the jaxpr.",
              "In the Python source."),
             "a", "2.3 Reading the compiler's decision"),
    Question("A jitted loop of 1000 tiny steps takes far longer than its "
             "floor on a GPU. What do you count first?",
             ("The flops per step.", "The bytes per step.",
              "The kernels launched per step."),
             "c", "3.3 Counting launches"),
    Question("In one run each, version b took 3% less time than version a. "
             "What next?",
             ("Keep b: it is faster.",
              "Time both, interleaved, many times, and test the "
              "difference against the noise.",
              "Run b once more to confirm."),
             "b", "4.5 Deciding which version is faster"),
    Question("A jitted function compiles again on every call. The likeliest "
             "cause?",
             ("Too many flops for one kernel.",
              "A donated argument.",
              "An argument whose shape changes from call to call."),
             "c", "5.3 jit: trace once, with stable shapes"),
    Question("In a notebook that has already run a jitted call, you set "
             "os.environ['XLA_FLAGS'] and compile again. The flags:",
             ("are ignored: XLA read them once, when JAX started.",
              "apply to the next compilation.",
              "raise an error."),
             "a", "6.3 Read once, at start"),
    Question("y = relu(x @ w_in) @ w_out with w_in split by columns and "
             "w_out by rows over 4 devices. Which collective does it need?",
             ("An all-gather of w_in.", "One all-reduce of y.",
              "None at all."),
             "b", "7.4 What a sharding compiles to"),
)


def _asked(chapters: Sequence[int] | None) -> list[tuple[int, Question]]:
    """The questions on ``chapters`` (all when None), with their numbers,
    which stay those of the whole quiz."""
    taught = {q.chapter for q in QUESTIONS}
    if chapters is not None and not set(chapters) <= taught:
        raise ValueError(f"the quiz has questions on chapters "
                         f"{sorted(taught)}; got {list(chapters)}")
    return [(number, q) for number, q in enumerate(QUESTIONS, 1)
            if chapters is None or q.chapter in chapters]


def show(chapters: Sequence[int] | None = None) -> Markdown:
    """The questions as a numbered Markdown list, choices lettered: all,
    or those on ``chapters`` (the blocks a session covered, e.g.
    ``(1, 2, 3)``)."""
    lines = []
    for number, question in _asked(chapters):
        lines.append(f"{number}. {question.text}")
        lines += [f"   - ({letter}) {choice}" for letter, choice
                  in zip(question.letters, question.choices)]
    return Markdown("\n".join(lines))


def _grade(number: int, question: Question, given: Any) -> Outcome:
    name = f"question {number}"
    reread = reread_hint(question.section)
    if given is None or given == "":
        return Outcome(name, "fail", "not answered", reread)
    try:
        letter = as_choice(str(given).strip().strip("()"), question.letters)
    except WrongAnswer:
        return Outcome(name, "fail", f"{describe(given)} is not one of "
                       + ", ".join(question.letters), reread)
    if letter != question.answer:
        return Outcome(name, "fail", f"({letter}) is not right", reread)
    return Outcome(name, "pass", f"({letter})")


def check(answers: Mapping[int, Any],
          chapters: Sequence[int] | None = None) -> Report:
    """Grade ``answers``, a dict of question number to letter (``'b'``,
    ``'B'`` and ``'(b)'`` all read as b); one outcome per question asked:
    all, or those on ``chapters``, as `show` lists them.

    Raises:
        TypeError: ``answers`` is not a dict; the message shows the form.
    """
    if not isinstance(answers, Mapping):
        raise TypeError("check() takes a dict of question number to "
                        "letter, e.g. {1: 'b', 2: 'a'}; got "
                        f"{describe(answers)}")
    outcomes = tuple(_grade(number, question, answers.get(number))
                     for number, question in _asked(chapters))
    return Report("Exit quiz", outcomes)


def key() -> list[dict[str, str]]:
    """The answers, for the facilitator: each question's letter, its
    choice and the section that teaches it."""
    return [{"question": str(number), "answer":
             f"({q.answer}) {q.choices[q.letters.index(q.answer)]}",
             "section": q.section}
            for number, q in enumerate(QUESTIONS, 1)]
