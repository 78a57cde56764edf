"""The facilitators' kit and the exit quiz: read from the book, so they
say what participants see; every bad input gets an error that says what
to give instead."""

from __future__ import annotations

import pytest

from helpers.workbook.ch08_workshop import exit_quiz
from helpers.workbook.ch08_workshop.attempts import ATTEMPTS
from helpers.workbook.ch11_facilitators import kit

from book_paths import section_titles


def test_a_blocks_goal_is_its_chapters_own_sentence():
    assert kit.goal("02_fusion").startswith(
        "When a kernel takes far longer than its floor, read the fusion "
        "kind XLA chose")
    assert "\n" not in kit.goal("02_fusion")
    assert kit.goal("00_how_to_use") == ""  # the how-to page has none


def test_a_chapter_that_is_not_there_or_has_no_exercises_is_named():
    with pytest.raises(FileNotFoundError, match="e.g. '02_fusion'"):
        kit.goal("2_fusion")
    with pytest.raises(ValueError, match="chapters with exercises are "
                       "00_how_to_use, 01_measuring"):
        kit.exercises_of("10_field_guide")


def test_the_common_mistakes_are_the_wrong_attempts_as_checked():
    table = kit.common_mistakes("01_measuring")
    wrong = sum(len(ATTEMPTS[e.answer]["wrong"])
                for e in kit.exercises_of("01_measuring"))
    assert len(table) == wrong
    assert list(table.columns) == ["exercise", "mistake", "the check says",
                                   "the hint for it"]
    row = table.set_index("mistake").loc["one flop"]
    assert row["exercise"] == "1.2"
    assert "k multiplies and k adds" in row["the hint for it"]
    assert table["the check says"].str.len().gt(0).all()


def test_the_answer_key_is_folded():
    key = kit.answer_key("01_measuring")
    assert [s.exercise.number for s in key] == ["1.1", "1.2", "1.3"]
    assert all(s.html().startswith("<details><summary>") for s in key)


def test_the_exit_quiz_passes_its_own_key_in_any_case_or_brackets():
    answers = {number: f"({row['answer'][1].upper()})"
               for number, row in enumerate(exit_quiz.key(), 1)}
    assert exit_quiz.check(answers).passed


def test_the_key_gives_no_pattern_away():
    letters = [question.answer for question in exit_quiz.QUESTIONS]
    assert set(letters) == {"a", "b", "c"}
    assert max(letters.count(letter) for letter in "abc") <= len(letters) / 2
    # and no cycle: a, b, a, b ... or a, b, c, a, b, c ...
    assert all(letters != (letters[:n] * len(letters))[:len(letters)]
               for n in (1, 2, 3))


def test_a_wrong_or_missing_answer_names_the_section_not_the_letter():
    report = exit_quiz.check({1: "a"})
    first, second = report.outcomes[:2]
    assert first.status == "fail" and first.detail == "(a) is not right"
    assert first.hint == "Read section 1.3 Asynchronous dispatch again."
    assert second.detail == "not answered"
    assert all("(b)" not in h for h in report.failed_hints())


def test_each_quiz_question_points_to_a_section_the_chapter_has():
    chapters = {"1": "01_measuring", "2": "02_fusion", "3": "03_launches",
                "4": "04_profiling", "5": "05_transformations",
                "6": "06_xla_flags", "7": "07_multi_gpu"}
    for question in exit_quiz.QUESTIONS:
        number, title = question.section.split(" ", 1)
        chapter, section = number.split(".")
        titles = section_titles(chapters[chapter])
        assert titles[int(section) - 1].replace("`", "") == title
        assert question.answer in question.letters


def test_the_quiz_says_what_form_its_answers_take():
    with pytest.raises(TypeError, match=r"\{1: 'b', 2: 'a'\}"):
        exit_quiz.check(["b", "a"])
    assert "is not one of a, b, c" in exit_quiz.check(
        {1: "d"}).outcomes[0].detail


def test_a_session_asks_only_the_questions_on_its_blocks():
    report = exit_quiz.check({1: "b", 2: "c", 3: "a", 4: "c"},
                             chapters=(1, 2, 3))
    assert [o.criterion for o in report.outcomes] == [
        "question 1", "question 2", "question 3", "question 4"]
    assert report.passed
    assert "5. " not in exit_quiz.show(chapters=(1, 2, 3)).data
    with pytest.raises(ValueError, match=r"chapters \[1, 2, 3, 4, 5, 6, "
                       r"7\]; got \[9\]"):
        exit_quiz.check({}, chapters=(9,))


def test_a_checks_words_keep_their_flags_as_code():
    # the page's typography turns a bare "--" into a dash
    said = kit._as_text("Pass it without the leading '--': "
                        "'--xla_cpu_flag' and xla_cpu_other")
    assert said == ("Pass it without the leading '`--`': "
                    "'`--xla_cpu_flag`' and `xla_cpu_other`.")
    assert kit._as_text("one-sided, 2 (p - 1), 2 * b") == \
        "one-sided, 2 (p - 1), 2 \\* b."


def test_the_own_code_block_lists_the_suites_patterns_most_frequent_first():
    from helpers.examine.findings import PATTERNS
    from helpers.workbook.ch10_field_guide.checker_suite import SLOW
    table = kit.own_code_patterns()
    expected = [p.expected for p in SLOW if p.expected]
    assert table["programs"].sum() == len(expected)
    assert table["programs"].is_monotonic_decreasing
    for _, row in table.iterrows():
        (name,) = [n for n, p in PATTERNS.items()
                   if p.title == row["pattern"]]
        assert row["programs"] == expected.count(name)
        assert row["section"] == PATTERNS[name].link
        assert any(p.name == row["for example"] and p.expected == name
                   for p in SLOW)
