"""The workshop agenda is timed from the chapters' own words and runs."""

import nbformat
import pandas as pd
import pytest

from helpers.grading.exercises import Exercise
from helpers.workbook.ch08_workshop import agenda, gpu_runs, reading


def _notebook(words, seconds):
    markdown = nbformat.v4.new_markdown_cell(
        "# Title\n\n:::{admonition} Box\n:class: tip\n" + "word " * words
        + "\n:::\n\n```python\nnot counted at all\n```\n{glue:text}`x`")
    code = nbformat.v4.new_code_cell("1 + 1")
    code.metadata["execution"] = {
        "iopub.execute_input": "2026-11-25T10:00:00.000000Z",
        "shell.execute_reply": f"2026-11-25T10:00:{seconds:02d}.500000Z"}
    return nbformat.v4.new_notebook(cells=[markdown, code])


def test_words_are_those_the_rendered_page_shows():
    # "Title", the words, the code block's four, the glued name "x", and
    # the code cell's two numbers; not the markup
    notebook = _notebook(100, 3)
    assert reading.reading_words(notebook) == 1 + 100 + 4 + 1 + 2
    hidden = nbformat.v4.new_code_cell("hidden code here")
    hidden.metadata["tags"] = ["hide-input"]
    hidden.outputs = [
        nbformat.v4.new_output("stream", text="three words shown"),
        nbformat.v4.new_output("display_data", data={
            "text/html": "<style>td {x: y}</style><table><td>two cells"
                         "</td></table>", "text/plain": "not read"}),
        nbformat.v4.new_output("display_data", data={
            "application/papermill.record/text/plain": "'glued'"})]
    notebook.cells.append(hidden)
    assert reading.reading_words(notebook) == 108 + 3 + 2
    hidden.metadata["tags"] = ["remove-cell"]
    assert reading.reading_words(notebook) == 108


def test_run_seconds_come_from_the_cell_timestamps():
    assert reading.run_seconds(_notebook(1, 3)) == pytest.approx(3.5)
    unexecuted = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("1")])
    assert reading.run_seconds(unexecuted) is None


def _exercise(chapter, level, reread=""):
    return Exercise(title=f"{chapter} {level}", chapter=chapter,
                    answer="f", level=level, criteria=[], reread=reread)


def _with_sections(notebook, *sections):
    """``notebook`` with a ``## `` section of ``words`` words for each
    (name, words), in one Markdown cell, then a shown code cell."""
    notebook.cells.append(nbformat.v4.new_markdown_cell("\n\n".join(
        f"## {name}\n\n" + "word " * words for name, words in sections)))
    notebook.cells.append(nbformat.v4.new_code_cell("three code words"))
    return notebook


def test_words_are_counted_by_section():
    notebook = _with_sections(_notebook(100, 3), ("One", 10), ("Two", 20))
    words = reading.section_words(notebook)
    assert words == {"": 108, "One": 1 + 10, "Two": 1 + 20 + 3}
    assert sum(words.values()) == reading.reading_words(notebook)


def test_chapter_times_add_reading_running_and_exercises(tmp_path):
    notebook = _with_sections(_notebook(120 * 2, 30), ("One", 119),
                              ("Two", 1000))
    nbformat.write(notebook, tmp_path / "01_a.ipynb")
    times = agenda.chapter_times(
        tmp_path, (_exercise("01_a", "core", "1.1 One"),
                   _exercise("01_a", "stretch", "1.1 One")),
        check_seconds={"01_a": 60})
    row = times.iloc[0]
    assert row["title"] == "Title"  # what the agenda names the block
    # the section the exercises send a participant back to, once
    assert row["words"] == 1 + 119
    assert row["read min"] == pytest.approx(1.0)
    assert row["chapter read min"] == pytest.approx(
        reading.reading_words(notebook) / agenda.READING_WPM)
    assert row["exercise min"] == pytest.approx(10 + 0 + 1)
    assert row["room min"] == agenda.RUNTIME_MIN + agenda.TALK_MIN
    assert row["block min"] == pytest.approx(
        row["read min"] + 30.5 / 60 + 11 + row["room min"])
    with pytest.raises(FileNotFoundError, match="02_b.ipynb"):
        agenda.chapter_times(tmp_path, (_exercise("02_b", "core"),))


def test_the_first_page_holds_the_days_setup(tmp_path):
    first = agenda.FIRST_PAGE
    nbformat.write(_notebook(10, 1), tmp_path / f"{first}.ipynb")
    nbformat.write(_notebook(10, 1), tmp_path / "01_a.ipynb")
    times = agenda.chapter_times(tmp_path, (_exercise(first, "warm-up"),
                                            _exercise("01_a", "core")))
    rooms = times.set_index("chapter")["room min"]
    assert rooms[first] == agenda.SETUP_MIN + agenda.TALK_MIN
    assert rooms["01_a"] == agenda.RUNTIME_MIN + agenda.TALK_MIN
    plan = agenda.agenda(times, session_min=180)
    assert plan["block"].tolist() == ["Title", "Title"]  # no setup row
    assert plan.iloc[0]["start"] == "0:00"


def test_a_chapter_a_gpu_ran_is_timed_by_that_run(tmp_path):
    import json
    nbformat.write(_notebook(238, 30), tmp_path / "01_a.ipynb")
    nbformat.write(_notebook(238, 30), tmp_path / "02_b.ipynb")
    root = tmp_path / "recorded"
    (root / "nvidia-h200" / "02_b").mkdir(parents=True)
    (root / "nvidia-h200" / "02_b" / "r.json").write_text(json.dumps(
        {"provenance": {"device": "NVIDIA H200", "date": "2026-11-26"}}))
    log = tmp_path / "visit_log.json"
    assert gpu_runs.gpu_run_seconds(log, root) == {}
    log.write_text(json.dumps({"chapters": [
        {"chapter": "01_a", "status": "ok", "seconds": 120.0,
         "device": "NVIDIA H100 80GB HBM3"},
        {"chapter": "02_b", "status": "ok", "seconds": 60.0}]}))
    runs = gpu_runs.gpu_run_seconds(log, root)
    assert runs == {"01_a": (120.0, "NVIDIA H100 80GB HBM3"),
                    "02_b": (60.0, "NVIDIA H200")}
    times = agenda.chapter_times(
        tmp_path, (_exercise("01_a", "core"), _exercise("02_b", "core")),
        gpu_seconds={"01_a": runs["01_a"]}).set_index("chapter")
    assert times.loc["01_a", "run min"] == pytest.approx(2.0)
    assert times.loc["01_a", "run on"] == "H100"
    assert times.loc["02_b", "run min"] == pytest.approx(30.5 / 60)
    assert times.loc["02_b", "run on"] == "here"
    # beside the GPU's run, this machine's; the block counts the slower
    assert times.loc["01_a", "here min"] == pytest.approx(30.5 / 60)
    fixed = times.loc["01_a", ["read min", "exercise min", "room min"]]
    assert times.loc["01_a", "block min"] == pytest.approx(fixed.sum() + 2)
    slow_here = agenda.chapter_times(
        tmp_path, (_exercise("01_a", "core"),),
        gpu_seconds={"01_a": (10.0, "NVIDIA H100 80GB HBM3")}).iloc[0]
    assert slow_here["block min"] == pytest.approx(
        slow_here[["read min", "exercise min", "room min"]].sum()
        + 30.5 / 60)


def test_agenda_fits_the_session_and_sends_the_rest_home():
    times = pd.DataFrame({"chapter": ["a", "b", "c", "d"],
                          "block min": [50.0, 50.0, 100.0, 20.0]})
    plan = agenda.agenda(times, session_min=180)
    # b would run past 90 minutes without a pause: a break before it; c
    # would end past 3:00; d fits
    assert plan["block"].tolist() == ["setup on Colab", "a", "break", "b",
                                      "d", "homework: c"]
    assert plan.iloc[2][["start", "end"]].tolist() == ["1:00", "1:10"]
    assert plan.iloc[4]["end"] == "2:20"
    with pytest.raises(ValueError, match="no time"):
        agenda.agenda(times, session_min=5)


def test_the_own_code_block_reads_one_guide_section_and_the_box(tmp_path):
    guide = _notebook(238 * 4, 1)
    guide.cells[0].source += "\n\n## One\n\ntext\n\n## Two\n\ntext"
    nbformat.write(guide, tmp_path / "10_field_guide.ipynb")
    workshop = _notebook(10, 1)
    box = nbformat.v4.new_code_cell("widget.examine_box()")
    box.metadata["execution"] = {
        "iopub.execute_input": "2026-11-25T10:00:00.000000Z",
        "shell.execute_reply": "2026-11-25T10:00:06.000000Z"}
    workshop.cells.append(box)
    nbformat.write(workshop, tmp_path / "08_workshop.ipynb")
    block = agenda.own_code_block(tmp_path)
    words = reading.reading_words(guide)
    assert block["words"] == round(words / 2)  # two sections
    assert block["run min"] == pytest.approx(6 / 60)  # the box cell only
    assert block["exercise min"] == agenda.OWN_CODE_MIN + agenda.QUIZ_MIN
    assert block["block min"] == pytest.approx(
        words / 2 / agenda.READING_WPM + 0.1 + agenda.OWN_CODE_MIN
        + agenda.QUIZ_MIN + agenda.RUNTIME_MIN + agenda.TALK_MIN)
    (tmp_path / "08_workshop.ipynb").unlink()
    with pytest.raises(FileNotFoundError, match="08_workshop.ipynb"):
        agenda.own_code_block(tmp_path)


def test_the_closing_block_keeps_its_time_at_the_end():
    times = pd.DataFrame({"chapter": ["01_a", "02_b", "03_c"],
                          "block min": [60.0, 60.0, 30.0]})
    closing = {"chapter": agenda.OWN_CODE, "block min": 20.0}
    plan = agenda.agenda(times, session_min=180, closing=closing)
    # setup 10, a 60, a break (b would run past 90 minutes), b 60, c
    # would end at 170, past the 160 left before the closing block
    assert plan["block"].tolist() == ["setup on Colab", "01_a", "break",
                                      "02_b", agenda.OWN_CODE,
                                      "homework: 03_c"]
    assert plan.iloc[4][["start", "end"]].tolist() == ["2:20", "2:40"]
    with pytest.raises(ValueError, match="20 min of the closing block"):
        agenda.agenda(times, session_min=30, closing=closing)


def test_the_quiz_is_left_out_where_no_chapter_it_asks_about_is_taught():
    closing = {"chapter": agenda.OWN_CODE, "block min": 20.0}
    howto = pd.DataFrame({"chapter": [agenda.FIRST_PAGE, "01_a"],
                          "block min": [30.0, 60.0]})
    plan = agenda.agenda(howto, session_min=90, closing=closing)
    assert plan["block"].tolist() == [agenda.FIRST_PAGE, agenda.OWN_CODE_ALONE,
                                      "homework: 01_a"]
    assert plan.iloc[1]["end"] == f"0:{30 + 20 - agenda.QUIZ_MIN}"
    # the quiz's minutes make room for chapter 1: the quiz is homework
    plan = agenda.agenda(howto, session_min=30 + 60 + 20 - agenda.QUIZ_MIN,
                         closing=closing)
    assert plan["block"].tolist() == [agenda.FIRST_PAGE, "01_a",
                                      agenda.OWN_CODE_ALONE,
                                      f"homework: {agenda.QUIZ}"]
    # a closing block that is the quiz alone goes where nothing is quizzed
    quiz = {"chapter": agenda.QUIZ, "block min": float(agenda.QUIZ_MIN)}
    plan = agenda.agenda(howto, session_min=40, closing=quiz)
    assert plan["block"].tolist() == [agenda.FIRST_PAGE, "homework: 01_a"]


def test_a_long_block_gets_a_break_before_it_and_a_day_its_lunch():
    times = pd.DataFrame({"chapter": [f"0{n}_x" for n in range(1, 6)],
                          "block min": [80.0, 80.0, 80.0, 80.0, 40.0]})
    day = agenda.agenda(times, session_min=420)
    blocks = day["block"].tolist()
    assert blocks[:4] == ["setup on Colab", "01_x", "break", "02_x"]
    assert blocks.count("lunch") == 1 and blocks.count("break") == 2
    assert blocks[-1] == "homework: 05_x"  # it would need a break too
    # no stretch between pauses runs past 90 minutes
    stretch = 0
    for start, end, block in day.itertuples(index=False):
        if block in ("break", "lunch") or not end:
            stretch = 0
            continue
        stretch += _minutes(end) - _minutes(start)
        assert stretch <= agenda.BREAK_EVERY_MIN, block


def _minutes(hm):
    hours, minutes = hm.split(":")
    return 60 * int(hours) + int(minutes)


def test_the_quizzed_chapters_are_the_quizs_own():
    from helpers.workbook.ch08_workshop import exit_quiz
    assert agenda.QUIZZED == {q.chapter for q in exit_quiz.QUESTIONS}


def test_a_reread_the_chapter_does_not_have_is_named(tmp_path):
    notebook = _with_sections(_notebook(10, 1), ("One", 5))
    nbformat.write(notebook, tmp_path / "01_a.ipynb")
    with pytest.raises(ValueError, match="'Two', which the chapter does "
                                         "not have"):
        agenda.chapter_times(tmp_path, (_exercise("01_a", "core",
                                                  "1.2 Two"),))


def test_a_section_is_named_as_the_page_shows_it():
    notebook = _with_sections(_notebook(1, 1), ("`jit`: trace once", 3))
    assert "jit: trace once" in reading.section_words(notebook)


def test_the_agenda_names_a_block_by_its_title_where_it_has_one():
    times = pd.DataFrame({"chapter": ["01_a", "02_b"],
                          "title": ["1. Measuring", ""],
                          "block min": [50.0, 300.0]})
    plan = agenda.agenda(times, session_min=180)
    assert plan["block"].tolist() == ["setup on Colab", "1. Measuring",
                                      "homework: 02_b"]


def test_the_page_table_heads_minutes_in_words():
    times = pd.DataFrame({"chapter": ["01_a"], "title": ["A"],
                          "words": [10], "read min": [1.0],
                          "run min": [2.0], "run on": ["H100"],
                          "here min": [0.6],
                          "exercise min": [10.0], "room min": [13.0],
                          "block min": [26.0]})
    closing = {"chapter": "check your own code", "read min": 2.0,
               "run min": 0.1, "here min": 0.1, "exercise min": 15.0,
               "room min": 13.0, "block min": 30.1}
    shown = agenda.for_page(times, closing)
    assert list(shown.index) == ["A", "check your own code"]
    assert list(shown.columns) == ["read", "run", "here", "exercise",
                                   "total"]
    assert list(shown["run"]) == ["2 on H100", "<1"]
    assert list(shown["here"]) == ["1", "<1"]
    assert list(shown["total"]) == ["26", "30"]  # the room's 13 in it


def test_a_day_has_lunch_and_breaks():
    times = pd.DataFrame({"chapter": [f"0{n}_x" for n in range(1, 8)],
                          "title": list("ABCDEFG"),
                          "block min": [50.0] * 7})
    day = agenda.agenda(times, session_min=420)
    assert day["block"].tolist().count("lunch") == 1
    assert "break" in day["block"].tolist()
    plans = agenda.plans(times, {"chapter": agenda.OWN_CODE,
                                 "block min": 30.0})
    assert list(plans) == list(agenda.SESSIONS)
    # a short session closes with the quiz alone, so that a chapter fits
    short = plans["90 minutes"]["block"].tolist()
    assert short[:3] == ["setup on Colab", "A", agenda.QUIZ]
    assert short[-1].endswith(f", {agenda.OWN_CODE_ALONE}")
    assert plans["three hours"]["block"].tolist()[-2] == agenda.OWN_CODE


def test_a_predicted_t4_time_counts_where_it_is_the_slowest(tmp_path):
    nbformat.write(_notebook(238, 30), tmp_path / "01_a.ipynb")
    nbformat.write(_notebook(238, 30), tmp_path / "02_b.ipynb")
    times = agenda.chapter_times(
        tmp_path, (_exercise("01_a", "core"), _exercise("02_b", "core")),
        t4_min={"01_a": 4.0}).set_index("chapter")
    fixed = times.loc["01_a", ["read min", "exercise min", "room min"]]
    assert times.loc["01_a", "block min"] == pytest.approx(fixed.sum() + 4)
    # no prediction: the block counts this machine's run, as before
    assert pd.isna(times.loc["02_b", "T4 min"])
    fixed = times.loc["02_b", ["read min", "exercise min", "room min"]]
    assert times.loc["02_b", "block min"] == pytest.approx(
        fixed.sum() + 30.5 / 60)
    shown = agenda.for_page(times.reset_index(), {
        "chapter": "own code", "read min": 1.0, "run min": 0.1,
        "here min": 0.1, "exercise min": 5.0, "block min": 6.1})
    assert list(shown["T4"]) == ["4", "—", "—"]


def test_the_workshop_reads_the_how_to_pages_t4_minutes():
    from helpers.workbook.ch00_how_to_use import colab_gpus
    on_t4 = colab_gpus.minutes_on("T4")
    assert set(on_t4) >= {"01_measuring", "02_fusion", "05_transformations"}
    assert all(0 < minutes < 60 for minutes in on_t4.values())
