"""The workshop's agenda, timed from the chapters themselves.

Each chapter block takes the time to open it in a fresh Colab runtime, to
hear the facilitator's walk-through, to read it, to run its cells, to do
its exercises, and to talk them over:

* reading: the sections the block's exercises send a participant back to
  (each exercise's ``reread``), by the words the rendered page shows
  there (its prose, its visible code and the text of its outputs), at
  `READING_WPM`, a pace for technical text with code: half the average
  silent reading rate of non-fiction, 238 words a minute (Brysbaert
  2019), since such text is read slower. The rest of the chapter is the
  facilitator's walk-through in the room, and homework
  (``chapter read min``);
* running: the seconds the chapter took when a GPU visit last executed
  it (`gpu_runs.gpu_run_seconds`, from the visit log kept with the recordings),
  since a workshop runs on GPUs at the reference sizes; for a chapter no
  visit has run, the seconds its cells took when last executed here, from
  the timestamps Jupyter stores with each cell. Beside it, the seconds of
  that last execution here, at the sizes a machine without a GPU runs
  (a laptop's case), and a Colab T4's predicted minutes; a block counts
  the slowest of the three, so a room of laptops and GPUs fits;
* exercises: the facilitator's allowance per exercise by level (a choice,
  not a measurement; `ALLOWANCE_MIN`), plus the seconds the checks took in
  the kit's pre-flight;
* the room: a fresh runtime (`RUNTIME_MIN`; for the first page, the
  how-to page, the setup of the day, `SETUP_MIN`), the walk-through and
  the debrief (`TALK_MIN`), choices a facilitator can change.

The closing activity, checking one's own code with `examine`, is timed the
same way (`own_code_block`): a fresh runtime, one section of the field
guide to read, the examine box's run, an allowance to try the fix, and
the exit quiz where the session taught a chapter it asks about.
`agenda` lays the blocks end to end within the session's length, with a
break before a block would run past `BREAK_EVERY_MIN` and lunch in a full
day, keeps the closing block's time free, and names the chapters that
do not fit, to set as homework;
`plans` gives the 90-minute, three-hour and full-day sessions.
"""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import pandas as pd

from helpers.grading.exercises import Exercise
from helpers.workbook.ch08_workshop import exit_quiz
from helpers.workbook.ch08_workshop.reading import (
    must_read,
    reading_words,
    run_seconds,
    section_words,
    title,
)

READING_WPM = 120  # technical text with code: half of Brysbaert's 238
# Minutes a participant is given per exercise, by level: the stretch
# exercises are for those who finish early, so they are not scheduled.
ALLOWANCE_MIN = {"warm-up": 5, "core": 10, "stretch": 0}
SETUP_MIN = 10   # the first Colab notebook, its GPU and its setup cell
FIRST_PAGE = "00_how_to_use"  # the page whose runtime is the day's setup
RUNTIME_MIN = 3  # each chapter's own runtime: connect, run its setup cell
TALK_MIN = 10    # the facilitator's walk-through and the debrief, a block
BREAK_MIN = 10   # a break, before a block would pass BREAK_EVERY_MIN
BREAK_EVERY_MIN = 90
LUNCH_MIN = 45   # in a session longer than LUNCH_AFTER_MIN, at mid-day
LUNCH_AFTER_MIN = 300
# The sessions `plans` lays out, by name: minutes from start to end.
SESSIONS = {"90 minutes": 90, "three hours": 180, "a full day": 420}
# Minutes a pair is given to paste a function of their own into the
# examine box, read the section it points to and try the fix (a choice).
OWN_CODE_MIN = 15
# Minutes for the exit quiz at the end (its questions on the blocks the
# session covered), and gathering its answers (a choice).
QUIZ_MIN = 8
OWN_CODE = "own code, exit quiz"
OWN_CODE_ALONE = "own code"  # the closing block where no chapter was quizzed
QUIZ = "exit quiz"  # the closing block of a short session
SHORT_SESSION_MIN = 90
# The chapters the exit quiz asks about, by number.
QUIZZED = frozenset(question.chapter for question in exit_quiz.QUESTIONS)


def _short_gpu(name: str) -> str:
    """A GPU's model for a narrow column; other words as they are.

    Example:
        >>> _short_gpu("NVIDIA H100 80GB HBM3"), _short_gpu("here")
        ('H100', 'here')
    """
    words = name.split()
    return words[1] if len(words) > 1 and words[0] == "NVIDIA" else name


def chapter_times(chapters: Path, exercises: tuple[Exercise, ...],
                  check_seconds: dict[str, float] | None = None,
                  gpu_seconds: dict[str, tuple[float, str]] | None = None,
                  t4_min: dict[str, float] | None = None
                  ) -> pd.DataFrame:
    """One row per chapter that has exercises: the words and reading
    minutes of the sections its exercises send a participant back to
    (`must_read`), the whole page's reading minutes (``chapter read
    min``, homework), running, exercise and room minutes (a fresh runtime,
    the walk-through and the debrief), the block's total, and where the
    running was timed.

    Args:
        chapters: the folder of executed ``.ipynb`` chapters.
        exercises: the book's exercises (`workshop.exercises()`).
        check_seconds: seconds each chapter's checks took (the pre-flight's
            ``seconds`` summed by chapter); 0 where not given.
        gpu_seconds: `gpu_run_seconds`; a chapter in it is timed by its
            GPU run, the others by the notebook's last execution here.
        t4_min: each chapter's predicted minutes on a Colab T4
            (`helpers.workbook.ch00_how_to_use.colab_gpus.minutes_on`);
            counted like the runs where given.
    """
    rows = []
    check_seconds = check_seconds or {}
    gpu_seconds = gpu_seconds or {}
    for chapter in dict.fromkeys(e.chapter for e in exercises):
        notebook = _read(chapters / f"{chapter}.ipynb")
        mine = [e for e in exercises if e.chapter == chapter]
        by_section = section_words(notebook)
        words = sum(_section_of(by_section, name, chapter)
                    for name in must_read(mine))
        ran, where = gpu_seconds.get(chapter, (run_seconds(notebook),
                                               "here"))
        doing = sum(ALLOWANCE_MIN[e.level] for e in mine) + check_seconds.get(
            chapter, 0.0) / 60
        here = run_seconds(notebook) or 0.0
        rows.append({"chapter": chapter, "title": title(notebook),
                     "words": words,
                     "read min": words / READING_WPM,
                     "chapter read min": sum(by_section.values())
                     / READING_WPM,
                     "run min": (ran or 0.0) / 60,
                     "run on": _short_gpu(where),
                     "here min": here / 60,
                     "T4 min": (t4_min or {}).get(chapter, float("nan")),
                     "exercise min": doing,
                     "room min": float(TALK_MIN + (
                         SETUP_MIN if chapter == FIRST_PAGE
                         else RUNTIME_MIN))})
    table = pd.DataFrame(rows)
    slower_run = table[["run min", "here min", "T4 min"]].max(axis=1)
    table["block min"] = (table[["read min", "exercise min", "room min"]]
                          .sum(axis=1) + slower_run)
    return table


# The block table's minute columns as the page heads them (its caption
# says they are minutes), narrow enough for the text width.
PAGE_HEADERS = {"read min": "read", "run min": "run",
                "here min": "here", "T4 min": "T4",
                "exercise min": "exercise", "block min": "total"}


def for_page(times: pd.DataFrame, closing: dict[str, float | str]
             ) -> pd.DataFrame:
    """`chapter_times` and the closing block as the page shows them: one
    row per block named by its title, whole minutes under short headers
    (the room's minutes are in the total, not shown: seven columns fit
    the page) ("<1" under half a minute), the running time with the GPU
    that timed
    it ("4 on H200"; a time taken on the machine that executed the page
    stands alone)."""
    table = pd.concat([times, pd.DataFrame([closing])])
    table["title"] = table["title"].fillna(table["chapter"])
    where = table["run on"].fillna("here")
    minutes = [column for column in PAGE_HEADERS if column in table]
    shown = table[minutes].astype(float).map(_minutes)
    # the running time with where it was timed, in one narrow column
    shown["run min"] = [m + ("" if on == "here" else f" on {on}")
                        for m, on in zip(shown["run min"], where)]
    return shown.set_axis(table["title"].map(_short_title)).rename(
        columns=PAGE_HEADERS)


def _short_title(title: str, most: int = 26) -> str:
    """A block's title for a narrow first column: up to its first
    " and " where it is longer than ``most`` characters.

    Example:
        >>> _short_title("XLA flags and profile-guided latency estimation")
        'XLA flags'
        >>> _short_title("Profiling and statistics")
        'Profiling and statistics'
    """
    return title.split(" and ")[0] if len(title) > most else title


def _minutes(value: float) -> str:
    """Minutes as an agenda says them: whole, or "<1"; "—" where
    there is no time.

    Example:
        >>> _minutes(0.2), _minutes(3.42), _minutes(0.0), _minutes(math.nan)
        ('<1', '3', '0', '—')
    """
    if math.isnan(value):
        return "—"
    if 0 < value < 0.5:
        return "<1"
    return f"{value:.0f}"


def own_code_block(chapters: Path) -> dict[str, float | str]:
    """The closing activity, timed like a chapter block: reading one
    section of the field guide (its words over its ``##`` sections), the
    seconds the workshop's examine box took to run when last executed, and
    `OWN_CODE_MIN` to try a fix, then `QUIZ_MIN` for the exit quiz (which
    `agenda` drops where the session quizzes no chapter), in a fresh
    runtime, with the walk-through.

    Args:
        chapters: the folder of executed ``.ipynb`` chapters, with
            ``10_field_guide`` and ``08_workshop``.
    """
    guide = _read(chapters / "10_field_guide.ipynb")
    sections = sum(cell.source.count("\n## ") + cell.source.startswith("## ")
                   for cell in guide.cells if cell.cell_type == "markdown")
    words = reading_words(guide) / max(sections, 1)
    workshop = _read(chapters / "08_workshop.ipynb")
    box = [cell for cell in workshop.cells if cell.cell_type == "code"
           and "examine_box" in cell.source]
    ran = run_seconds(nbformat.v4.new_notebook(cells=box)) or 0.0
    row: dict[str, float | str] = {
        "chapter": OWN_CODE, "words": round(words),
        "read min": words / READING_WPM, "run min": ran / 60,
        # timed here, on the machine that executed the page
        "here min": ran / 60,
        "exercise min": float(OWN_CODE_MIN + QUIZ_MIN),
        "room min": float(RUNTIME_MIN + TALK_MIN)}
    row["block min"] = sum(float(row[k]) for k in (
        "read min", "run min", "exercise min", "room min"))
    return row


def _section_of(by_section: dict[str, int], name: str, chapter: str
                ) -> int:
    """The words of section ``name`` of ``chapter``, which an exercise
    points back to."""
    if name not in by_section:
        raise ValueError(f"an exercise of {chapter} points back to the "
                         f"section {name!r}, which the chapter does not "
                         "have: correct the exercise's reread")
    return by_section[name]


def _read(path: Path) -> nbformat.NotebookNode:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the agenda times "
                                "each block from its notebook.")
    return nbformat.read(path, as_version=4)


def agenda(times: pd.DataFrame, session_min: int = 180,
           closing: dict[str, float | str] | None = None) -> pd.DataFrame:
    """The blocks end to end from 0:00: each chapter in order (the how-to
    page first, whose runtime is the day's setup; where it is not among
    them, a setup block opens the day), a break before a block that would
    run past `BREAK_EVERY_MIN` since the last one (lunch instead, once,
    past mid-day in a session longer than `LUNCH_AFTER_MIN`; before the
    closing block only where it fits), and ``closing``
    (e.g. `own_code_block`) last, its time kept free. A chapter that would
    end after that is marked for homework, and the ones after it are
    tried in turn (a short one may still fit). Where no chapter the exit
    quiz asks about is taught, the closing block leaves the quiz out
    (`QUIZ_MIN`; a closing block that is the quiz alone goes) and the time
    goes to the chapters; should that time fit a chapter the quiz asks
    about, the quiz is homework.

    Returns:
        One row per block: ``start``, ``end`` (h:mm) and ``block``.
    """
    plan, taught = _laid_out(times, session_min, closing)
    if closing is None or closing["chapter"] not in (OWN_CODE, QUIZ) \
            or _quizzed(taught):
        return plan
    without_quiz = None if closing["chapter"] == QUIZ else {
        **closing, "chapter": OWN_CODE_ALONE,
        "block min": float(closing["block min"]) - QUIZ_MIN}
    plan, taught = _laid_out(times, session_min, without_quiz)
    # the quiz's minutes made room for a chapter it asks about
    return _with_homework(plan, QUIZ) if _quizzed(taught) else plan


def _quizzed(chapters: list[str]) -> bool:
    """Whether the exit quiz asks about any of ``chapters`` (by number)."""
    return any(name[:2].isdigit() and int(name[:2]) in QUIZZED
               for name in chapters)


def _laid_out(times: pd.DataFrame, session_min: int,
              closing: dict[str, float | str] | None
              ) -> tuple[pd.DataFrame, list[str]]:
    """`agenda`'s plan for a given closing block, and the chapters it
    teaches."""
    reserved = float(closing["block min"]) if closing else 0.0
    setup = 0.0 if FIRST_PAGE in set(times["chapter"]) else SETUP_MIN
    if session_min <= setup + reserved:
        raise ValueError(f"a session of {session_min} min leaves no time "
                         f"after the {setup:.0f} min of setup and the "
                         f"{reserved:.0f} min of the closing block.")
    rows: list[dict[str, str]] = []
    homework: list[str] = []
    taught: list[str] = []
    lunch = session_min > LUNCH_AFTER_MIN
    clock = _add(rows, "setup on Colab", 0.0, setup) if setup else 0.0
    rested = 0.0  # when the last pause ended
    for row in times.to_dict("records"):
        name, minutes = row.get("title") or row["chapter"], row["block min"]
        pause = _pause(clock, rested, minutes, lunch, session_min)
        if clock + pause + minutes > session_min - reserved:
            homework.append(name)
            continue
        if pause:
            clock = _add(rows, "lunch" if pause == LUNCH_MIN else "break",
                         clock, pause)
            lunch, rested = lunch and pause != LUNCH_MIN, clock
        clock = _add(rows, name, clock, minutes)
        taught.append(row["chapter"])
    if closing:
        pause = _pause(clock, rested, reserved, False, session_min)
        if pause and clock + pause + reserved <= session_min:
            clock = _add(rows, "break", clock, pause)
        clock = _add(rows, str(closing["chapter"]), clock, reserved)
    if homework:
        rows.append({"start": _hm(clock), "end": "",
                     "block": "homework: " + ", ".join(homework)})
    return pd.DataFrame(rows), taught


def _pause(clock: float, rested: float, minutes: float, lunch: bool,
           session_min: int) -> float:
    """The minutes of the pause due before a block of ``minutes`` starting
    at ``clock``: a break where the block would run past `BREAK_EVERY_MIN`
    since the last pause ended (``rested``), lunch instead where it is
    still due (``lunch``) and the day is past its first half's last
    stretch; none otherwise."""
    if clock <= rested or clock + minutes - rested <= BREAK_EVERY_MIN:
        return 0.0
    if lunch and clock >= session_min / 2 - BREAK_EVERY_MIN / 2:
        return float(LUNCH_MIN)
    return float(BREAK_MIN)


def plans(times: pd.DataFrame, closing: dict[str, float | str] | None
          ) -> dict[str, pd.DataFrame]:
    """`agenda` for each of `SESSIONS`, by the session's name. A session
    of `SHORT_SESSION_MIN` or less closes with the exit quiz alone, so
    that it teaches a chapter; checking one's own code is homework."""
    laid = {}
    for name, minutes in SESSIONS.items():
        if closing and minutes <= SHORT_SESSION_MIN:
            quiz: dict[str, float | str] = {"chapter": QUIZ,
                                            "block min": float(QUIZ_MIN)}
            plan = agenda(times, minutes, quiz)
            laid[name] = _with_homework(plan, OWN_CODE_ALONE)
        else:
            laid[name] = agenda(times, minutes, closing)
    return laid


def _with_homework(plan: pd.DataFrame, item: str) -> pd.DataFrame:
    """``plan`` with ``item`` added to its homework (a last row)."""
    if plan["block"].iloc[-1].startswith("homework: "):
        plan.iloc[-1, plan.columns.get_loc("block")] += f", {item}"
        return plan
    end = plan["end"].iloc[-1]
    return pd.concat([plan, pd.DataFrame([{
        "start": end, "end": "", "block": f"homework: {item}"}])],
        ignore_index=True)


def _add(rows: list[dict[str, str]], block: str, clock: float,
         minutes: float) -> float:
    end = clock + minutes
    rows.append({"start": _hm(clock), "end": _hm(end), "block": block})
    return end


def _hm(minutes: float) -> str:
    whole = round(minutes)
    return f"{whole // 60}:{whole % 60:02d}"
