"""The workshop kit: every exercise is listed once, the dashboard grades
what it finds, and the pre-flight reports each exercise."""

import pandas as pd
import pytest

from helpers import workshop
from helpers.exercises import Exercise
from helpers.workbook import scaling, using


def test_every_chapter_exercise_is_listed_once():
    entries = workshop.entries()
    titles = [e.exercise.title for e in entries]
    assert len(titles) == len(set(titles))
    assert {e.chapter for e in entries} >= {
        "01_measuring", "02_fusion", "03_launches", "04_profiling",
        "07_multi_gpu"}
    assert all(e.level in workshop.LEVELS for e in entries)


def test_every_check_in_the_chapters_is_in_the_kit():
    # A chapter's starter cell reads `module.exercise.check(answer)`.
    import importlib
    import re
    from pathlib import Path

    kit = {(id(e.exercise), e.answer) for e in workshop.entries()}
    calls = re.findall(r"(\w+)\.(\w+)\.check\((\w+)\)", "".join(
        p.read_text() for p in
        Path(__file__).parents[2].glob("chapters/[0-9][0-9]_*.md")))
    found = set()
    for module, name, answer in calls:
        if "solution" in answer:
            continue
        exercise = getattr(importlib.import_module(
            f"helpers.workbook.{module}"), name)
        found.add((id(exercise), answer))
    assert found == kit


def test_progress_grades_what_it_finds_and_skips_the_rest():
    board = workshop.progress({"rms": using.solution,
                               "ring_psum": scaling.ring_psum_starter,
                               "predict": "not a function"})
    status = board.set_index("answer")["status"]
    assert status["rms"] == "passed"
    assert status["ring_psum"] == "not yet"
    assert status["predict"] == "not attempted"
    assert (status == "not attempted").sum() == len(board) - 2
    hint = board.set_index("answer").loc["ring_psum", "hint"]
    assert "No psum" in hint


def test_progress_with_no_answers_has_every_column():
    board = workshop.progress({})
    assert (board["status"] == "not attempted").all()
    assert list(board.columns[-4:]) == ["pass", "fail", "skip", "hint"]
    assert (board[["pass", "fail", "skip"]] == 0).all().all()


def test_progress_rejects_a_non_mapping():
    with pytest.raises(TypeError, match="progress\\(globals\\(\\)\\)"):
        workshop.progress([using.solution])


def test_an_entry_with_an_unknown_level_is_refused():
    with pytest.raises(ValueError, match="level must be one of"):
        workshop.Entry("x", Exercise("t", []), "f", len, len, "easy")


def test_kit_check_reports_each_exercise_it_is_given():
    # Two entries are enough to check the table; the full pre-flight runs
    # in the workshop chapter.
    chosen = [e for e in workshop.entries()
              if e.answer in ("rms", "pass_along")]
    table = workshop.kit_check(chosen)
    assert isinstance(table, pd.DataFrame) and len(table) == 2
    assert table["solution passes"].all() and table["starter fails"].all()
    ring = table.set_index("level").loc["core"]
    assert "neighbour" in ring["skipped here"]  # psend cannot run on a CPU
