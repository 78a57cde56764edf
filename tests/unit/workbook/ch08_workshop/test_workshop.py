"""The workshop kit: the list of exercises comes from the exercise objects,
the chapters set exactly those, the dashboard grades what it finds (and
never breaks on a bad answer), and the pre-flight reports each exercise."""

import re
import time
from pathlib import Path

import jax.numpy as jnp
import pandas as pd
import pytest

from helpers.workbook.ch00_how_to_use import exercises as ch0
from helpers.workbook.ch02_fusion import exercises as ch2
from helpers.workbook.ch07_multi_gpu import exercises as ch7
from helpers.workbook.ch08_workshop import workshop

from book_paths import CHAPTERS


def test_every_exercise_has_its_place_and_a_unique_number():
    exercises = workshop.exercises()
    assert [e.number for e in exercises] == sorted(
        (e.number for e in exercises),
        key=lambda n: tuple(map(int, n.split("."))))
    assert len({e.answer for e in exercises}) == len(exercises)
    assert all(e.level in workshop.LEVELS for e in exercises)
    assert all(e.starter and e.solution for e in exercises)


@pytest.mark.parametrize("exercise", workshop.exercises(),
                         ids=lambda e: e.number)
def test_the_chapter_sets_the_exercise_as_the_object_describes(exercise):
    text = (CHAPTERS / f"{exercise.chapter}.md").read_text()
    # the starter cell names the answer and checks it with this exercise
    assert re.search(rf"def {exercise.answer}\(", text), exercise.answer
    check = re.search(rf"([\w.]+)\.check\({exercise.answer}\)", text)
    assert check, f"no check of {exercise.answer} in {exercise.chapter}"
    assert re.search(rf"{re.escape(check.group(1))}\.show_solution\(\)",
                     text), "the solution is not shown folded"


# An exercise block in a chapter: ":::{exercise} title" and its label.
EXERCISE_BLOCK = re.compile(
    r"^:::\{exercise\} (?P<title>.+)\n:label: (?P<label>[\w-]+)\n"
    r"(?P<nonumber>:nonumber:\n)?", re.MULTILINE)


def numbered_chapters():
    """The chapters in a part of the table of contents marked numbered."""
    import yaml

    toc = yaml.safe_load((CHAPTERS.parent / "_toc.yml").read_text())
    return {Path(c["file"]).name for part in toc["parts"]
            if part.get("numbered") for c in part["chapters"]}


def test_the_book_numbers_each_exercise_as_the_workbook_does():
    """The book numbers exercise blocks itself (sphinx-exercise: chapter 5's
    second block is Exercise 5.2); each block's label names a workbook
    exercise whose number and title are the ones the book shows, and an
    unnumbered chapter's blocks carry no number."""
    by_label = {e.label: e for e in workshop.exercises()}
    seen = []
    for path in sorted(CHAPTERS.glob("[0-9][0-9]_*.md")):
        blocks = list(EXERCISE_BLOCK.finditer(path.read_text()))
        numbered = path.stem in numbered_chapters()
        for position, block in enumerate(blocks, start=1):
            exercise = by_label[block["label"]]
            assert exercise.chapter == path.stem, block["label"]
            assert exercise.title.split(": ", 1)[1] == block["title"]
            if numbered:
                assert not block["nonumber"], block["label"]
                assert exercise.number == f"{int(path.stem[:2])}.{position}"
            else:
                assert block["nonumber"], f"{block['label']}: the book " \
                    "gives no chapter number here; add :nonumber:"
            seen.append(block["label"])
    assert sorted(seen) == sorted(by_label)


def test_no_chapter_prints_a_solution_unfolded():
    for path in CHAPTERS.glob("[0-9][0-9]_*.md"):
        text = path.read_text()
        assert not re.search(r"getsource\([\w.]*solution", text), path.name
        assert not re.search(r"\.check\([\w.]*solution\)", text), path.name


def test_progress_grades_what_it_finds_and_skips_the_rest():
    board = workshop.progress({"rms": ch0.solution,
                               "ring_psum": ch7.ring_psum_starter,
                               "bmv": ch2.solution,
                               "predict": "not a function"})
    status = board.set_index("answer")["status"]
    assert status["rms"] == "passed"
    assert status["ring_psum"] == "not yet"
    # 2.1's speed target needs a GPU's device time: counted apart
    assert status["bmv"] == "passed where graded"
    assert status["predict"] == "not attempted"
    assert (status == "not attempted").sum() == len(board) - 3
    hint = board.set_index("answer").loc["ring_psum", "hint"]
    assert "No psum" in hint
    counts = workshop.summary(board)
    assert counts["passed"] == 1 and counts["passed where graded"] == 1
    assert counts["not yet"] == 1
    assert workshop.in_words(board) == (
        f"3 of {len(board)} attempted: 1 passed, 1 not yet, 1 passed "
        "where graded")
    shown = workshop.attempted(board)
    assert len(shown) == 3 and "No psum" in shown["hint"].str.cat()


def test_one_broken_answer_does_not_break_the_dashboard():
    def rms(x):
        raise ZeroDivisionError("learner bug")

    board = workshop.progress({"rms": rms,
                               "which_bound": lambda *a: None,
                               "scope_totals": lambda k: "totals"})
    rows = board.set_index("answer")
    assert (rows.loc[["rms", "which_bound", "scope_totals"],
                     "status"] == "not yet").all()


def test_the_dashboard_checks_an_answer_again_only_when_redefined():
    answers = {"rms": ch0.solution}
    workshop.progress(answers)
    start = time.perf_counter()
    again = workshop.progress(answers)
    assert time.perf_counter() - start < 0.5
    assert again.set_index("answer").loc["rms", "status"] == "passed"
    answers["rms"] = ch0.starter  # redefined: graded afresh
    assert workshop.progress(answers).set_index("answer").loc[
        "rms", "status"] == "not yet"


def test_a_redefined_helper_of_an_answer_is_graded_afresh():
    # a notebook's namespace: rms calls square, defined beside it
    notebook = {"jnp": jnp}
    exec("def square(x):\n    return x * x\n"
         "def rms(x):\n    return jnp.sqrt(jnp.mean(square(x)))\n",
         notebook)
    assert workshop.progress(notebook).set_index("answer").loc[
        "rms", "status"] == "passed"
    exec("def square(x):\n    return x\n", notebook)  # rms unchanged
    assert workshop.progress(notebook).set_index("answer").loc[
        "rms", "status"] == "not yet"


# Exercise 1.1's answer as a participant writes it in chapter 1, where
# `statistics` and `time` are imported: pasted into the workshop page,
# which imports neither.
PASTED_TIMER = (
    "def time_call(f, x, n=20):\n"
    "    f(x).block_until_ready()\n"
    "    times = []\n"
    "    for _ in range(n):\n"
    "        start = time.perf_counter()\n"
    "        f(x).block_until_ready()\n"
    "        times.append(time.perf_counter() - start)\n"
    "    return statistics.median(times)\n")


def test_a_pasted_answer_gets_its_chapters_imports():
    page = {}  # the workshop page's session: no `time`, no `statistics`
    exec(PASTED_TIMER, page)
    board = workshop.progress(page).set_index("answer")
    assert board.loc["time_call", "status"] == "passed"
    assert "time" not in page and "statistics" not in page  # untouched


def test_a_name_nobody_imports_is_said_and_a_fix_outside_regrades():
    page = {}
    exec(PASTED_TIMER.replace("statistics.median", "stats.median"), page)
    row = workshop.progress(page).set_index("answer").loc["time_call"]
    assert row["status"] == "not yet"
    assert row["hint"].startswith("`stats` is not defined where your "
                                  "function runs")
    assert "wait until the result is ready" not in row["hint"]
    import statistics
    page["stats"] = statistics  # the import added; time_call unchanged
    assert workshop.progress(page).set_index("answer").loc[
        "time_call", "status"] == "passed"


def test_progress_with_no_answers_has_every_column():
    board = workshop.progress({})
    assert (board["status"] == "not attempted").all()
    assert list(board.columns[-4:]) == ["pass", "fail", "skip", "hint"]
    assert (board[["pass", "fail", "skip"]] == 0).all().all()
    assert workshop.summary(board)["not attempted"] == len(board)
    assert workshop.in_words(board) == f"0 of {len(board)} attempted"
    assert workshop.attempted(board).empty


def test_progress_rejects_a_non_mapping():
    with pytest.raises(TypeError, match="progress\\(globals\\(\\)\\)"):
        workshop.progress([ch0.solution])


def test_kit_check_reports_each_exercise_it_is_given():
    # Two exercises are enough to check the table; the full pre-flight
    # runs in the workshop chapter.
    chosen = [e for e in workshop.exercises()
              if e.answer in ("rms", "bmv")]
    table = workshop.kit_check(chosen).set_index("level")
    assert len(table) == 2 and table["starter fails"].all()
    assert table.loc["warm-up", "solution"] == "passed"
    core = table.loc["core"]
    assert core["solution"] == "passed where graded"
    assert "device time on the GPU" in core["not graded here"]


def test_an_exercise_without_its_place_is_refused():
    from helpers.grading.exercises import Exercise

    loose = Exercise("Exercise 9.9: loose", [lambda fn: None])
    with pytest.raises(ValueError, match="lacks .*'chapter'"):
        workshop._place(loose)


def test_the_kit_tables_name_each_exercise_by_its_number():
    preflight = workshop.kit_check(workshop.exercises()[:2])
    table = workshop.kit_table(preflight)
    assert list(table.columns) == ["solution", "starter fails", "check s"]
    assert table.index.tolist() == ["0.1", "1.1"]
    assert (table["check s"] == preflight["seconds"].round(1)
            .to_numpy()).all()
    assert workshop.kit_not_graded(preflight).empty
    graded = preflight.assign(**{"not graded here": ["", "a GPU target"]})
    assert workshop.kit_not_graded(graded)["not graded here"].tolist() == \
        ["a GPU target"]


def test_the_dashboard_shows_a_table_only_once_something_is_pasted(capsys):
    workshop.dashboard(workshop.progress({}))
    assert capsys.readouterr().out.strip().startswith("0 of ")
    workshop.dashboard(workshop.progress({"rms": ch0.solution}))
    shown = capsys.readouterr().out
    assert "1 passed" in shown and "Exercise 0.1" in shown


def test_the_gpu_tests_say_which_time_targets_were_met(tmp_path):
    from helpers.workbook.ch08_workshop import timed
    junit = tmp_path / "junit.xml"
    assert timed.timed_on_gpu(junit) == {}
    assert timed.timed_table({}, {}).empty
    test = timed.GPU_TIMED_TEST
    today = {"2.1": ["matches", "fast"], "5.3": ["faster"]}
    junit.write_text(
        f'<testsuites><testsuite><testcase name="{test}[2.1]">'
        '<properties><property name="criteria" '
        'value="[&quot;matches&quot;, &quot;slow&quot;]"/></properties>'
        f'</testcase><testcase name="{test}[5.3]"><properties><property '
        'name="criteria" value="[&quot;faster&quot;]"/></properties>'
        '<failure message="slow"/></testcase>'
        '<testcase name="test_other[1.1]"/></testsuite></testsuites>')
    graded = timed.timed_on_gpu(junit)
    assert graded == {"2.1": {"outcome": "passed",
                              "criteria": ["matches", "slow"]},
                      "5.3": {"outcome": "failed", "criteria": ["faster"]}}
    shown = timed.timed_table(graded, today)
    assert shown.to_dict("index") == {
        "2.1": {"solution on the GPU": "passed",
                "today's target": "changed since"},
        "5.3": {"solution on the GPU": "failed", "today's target": "yes"}}
    unknown = timed.timed_table(
        {"2.1": {"outcome": "passed", "criteria": None}}, today)
    assert unknown.loc["2.1", "today's target"] == "not kept"


def test_a_timed_test_records_the_criteria_it_grades():
    from helpers.workbook.ch02_fusion import exercises as ch2
    from helpers.workbook.ch08_workshop import timed
    said = timed.criteria_of(ch2.fast_reduction)
    assert said[-1] == "within 10% of a @ b's device time on the GPU"
    assert timed.todays_criteria()["2.1"] == said


def test_a_gpu_test_run_names_its_gpu(tmp_path):
    from helpers.measuring import gpu_test_run
    junit = tmp_path / "junit.xml"
    assert gpu_test_run.device(junit) is None
    junit.write_text('<testsuites><testsuite><testcase name="t"/>'
                     '</testsuite></testsuites>')
    assert gpu_test_run.device(junit) is None
    junit.write_text('<testsuites><testsuite><properties><property '
                     'name="device" value="NVIDIA H100 80GB HBM3"/>'
                     '</properties><testcase name="t"/></testsuite>'
                     '</testsuites>')
    assert gpu_test_run.device(junit) == "NVIDIA H100 80GB HBM3"
    assert gpu_test_run.cases(junit)[0]["outcome"] == "passed"


def test_the_room_gathers_each_participants_export(tmp_path):
    from helpers.workbook.ch08_workshop import room

    ada = workshop.progress({"rms": ch0.solution})
    bo = workshop.progress({"rms": ch0.starter, "bmv": ch2.solution})
    assert room.export(ada, "Ada L.", tmp_path).name == "progress-ada-l.csv"
    room.export(bo, "Bo", tmp_path)
    table = room.gather(tmp_path)
    assert list(table.index) == ["Ada L.", "Bo"]
    assert table.loc["Ada L.", "0.1"] == "✓"
    assert table.loc["Bo", "0.1"] == "…"
    assert table.loc["Bo", "2.1"] == "✓ (CPU)"
    assert table["passed"].to_dict() == {"Ada L.": 1, "Bo": 1}
    numbers = [c for c in table.columns if c != "passed"]
    assert numbers == sorted(numbers, key=lambda n: tuple(
        map(int, n.split("."))))


def test_the_room_gathers_the_exit_quiz_score_last(tmp_path):
    from helpers.workbook.ch08_workshop import exit_quiz, room

    board = workshop.progress({"rms": ch0.solution})
    quiz = exit_quiz.check({1: "b", 2: "c", 3: "b", 4: "c"},
                           chapters=(1, 2, 3))
    room.export(board, "Ada", tmp_path, quiz=quiz)
    room.export(board, "Bo", tmp_path)  # no quiz handed in
    table = room.gather(tmp_path)
    assert list(table.columns)[-2:] == ["Exit quiz", "passed"]
    assert table.loc["Ada", "Exit quiz"] == "3 of 4"
    assert pd.isna(table.loc["Bo", "Exit quiz"])
    assert table.loc["Ada", "passed"] == 1  # the quiz is not an exercise


def test_the_room_says_what_to_do_with_a_bad_folder_or_name(tmp_path):
    from helpers.workbook.ch08_workshop import room

    board = workshop.progress({})
    with pytest.raises(FileNotFoundError, match="mount Drive first"):
        room.export(board, "Ada", tmp_path / "nowhere")
    with pytest.raises(ValueError, match="participant's name"):
        room.export(board, "!!", tmp_path)
    with pytest.raises(FileNotFoundError, match="room.export"):
        room.gather(tmp_path)


def test_a_chapter_that_does_not_exist_is_named():
    from helpers.workbook.ch08_workshop import answers

    with pytest.raises(FileNotFoundError, match="e.g. '03_launches'"):
        answers.chapter_names("03_launch")


def test_the_ring_of_sends_is_graded_whole_on_simulated_devices():
    # psend and precv run only on GPUs; on CPU devices the check moves the
    # same numbers by ppermute, and a ring that would hang fails both
    board = workshop.progress({"pass_along": ch7.pass_along_solution})
    assert board.set_index("answer").loc["pass_along", "status"] == "passed"
    report = ch7.untangle_ring.check(ch7.pass_along_starter)
    assert [o.status for o in report.outcomes] == ["fail", "fail"]
    assert "waits forever" in report.outcomes[1].detail
