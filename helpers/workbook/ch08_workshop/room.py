"""The room's results, gathered without a server.

Each participant writes their dashboard (`workshop.progress`) to a file
of their own in a folder the facilitator shares, a shared Google Drive
folder on Colab or a network folder in a room of laptops (`export`). The
facilitator reads every file there into one table, a participant a row
and an exercise a column, with each exit quiz's score (`gather`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from helpers.grading.report import Report

PREFIX = "progress-"  # each participant's file: progress-<name>.csv
QUIZ = "Exit quiz"  # the quiz's row in a participant's file
# A status in the room's table, short enough for a column a exercise.
SHORT = {"passed": "✓", "passed where graded": "✓ (CPU)", "not yet": "…",
         "not graded here": "?", "not attempted": ""}


def export(board: pd.DataFrame, participant: str, folder: str | Path,
           quiz: Report | None = None) -> Path:
    """Write a `workshop.progress` board to ``folder`` as the file of
    ``participant`` (overwritten by their next export); returns its path.
    With ``quiz``, the exit quiz's report (`exit_quiz.check`), its score
    goes too, as the row ``Exit quiz``: ``'3 of 4'``.

    Raises:
        ValueError: the name has no letter or digit to name a file by.
        FileNotFoundError: ``folder`` does not exist (on Colab, mount
            Drive first: ``from google.colab import drive;
            drive.mount('/content/drive')``).
    """
    slug = re.sub(r"[^A-Za-z0-9]+", "-", participant).strip("-").lower()
    if not slug:
        raise ValueError(f"name the file by a participant's name, got "
                         f"{participant!r}")
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder} is not a folder: create it, or on Colab mount Drive "
            "first (from google.colab import drive; "
            "drive.mount('/content/drive'))")
    path = folder / f"{PREFIX}{slug}.csv"
    rows = board[["exercise", "status"]]
    if quiz is not None:
        right = sum(o.status == "pass" for o in quiz.outcomes)
        rows = pd.concat([rows, pd.DataFrame([{
            "exercise": QUIZ, "status": f"{right} of {len(quiz.outcomes)}"}])])
    rows.assign(participant=participant)[
        ["participant", "exercise", "status"]].to_csv(path, index=False)
    return path


def gather(folder: str | Path) -> pd.DataFrame:
    """Every participant's exported board in ``folder`` as one table: a
    row a participant, a column an exercise (its number), each cell the
    status in a mark (`SHORT`), and how many each passed.

    Raises:
        FileNotFoundError: no exported board is in ``folder``.
    """
    files = sorted(Path(folder).glob(f"{PREFIX}*.csv"))
    if not files:
        raise FileNotFoundError(
            f"no {PREFIX}*.csv in {folder}: participants write theirs "
            "with room.export(board, 'their name', folder)")
    boards = pd.concat([pd.read_csv(f, keep_default_na=False)
                        for f in files])
    # an exercise by its number; the quiz's row keeps its name, last
    boards["exercise"] = boards["exercise"].str.extract(
        r"Exercise ([\d.]+)", expand=False).fillna(boards["exercise"])
    table = boards.pivot(index="participant", columns="exercise",
                         values="status")
    numbered = [n for n in table.columns if n != QUIZ]
    table = table[sorted(numbered, key=lambda n: tuple(map(int, n.split("."))))
                  + [n for n in table.columns if n == QUIZ]]
    passed = table.isin(["passed", "passed where graded"]).sum(axis=1)
    return table.replace(SHORT).assign(passed=passed)
