import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.grading import criteria
from helpers.grading import exercises as ex
from helpers.measuring import machine

CASES = [(np.arange(4.0),), (np.linspace(-1, 1, 7),)]
DOUBLE = ex.Exercise("Double it", [ex.matches_reference(
    lambda x: 2 * x, CASES, hint="multiply by two")], hints=["think"])


def test_a_correct_function_passes():
    report = DOUBLE.check(lambda x: x + x)
    assert report.passed
    assert report.outcomes[0].detail.startswith("2 cases agree")
    assert report.failed_hints() == []
    assert "Double it: PASSED" in report.text()


def test_a_wrong_function_fails_with_hints():
    report = DOUBLE.check(lambda x: 3 * x)
    assert not report.passed
    assert "largest relative error" in report.outcomes[0].detail
    assert report.failed_hints() == ["multiply by two", "think"]
    assert "hint 1: multiply by two" in report.text()
    assert "<details><summary>Hint 1</summary>" in report.html()


def test_wrong_shape_and_errors_are_reported():
    shape = DOUBLE.check(lambda x: x[:1])
    assert "shape (1,), expected (4,)" in shape.outcomes[0].detail

    def broken(x):
        raise RuntimeError("oops\nmore")

    report = DOUBLE.check(broken)
    outcome = report.outcomes[0]
    assert outcome.detail == "your function raised RuntimeError: oops"
    # the whole error is kept, folded in HTML and named in the text
    assert "oops\nmore" in outcome.error and "Traceback" in outcome.error
    assert "<details><summary>Full error</summary>" in report.html()
    assert "print(report.outcomes[0].error)" in report.text()
    # without the reader's folders: the checkout's files from its top
    assert machine.repo_root() not in outcome.error
    assert 'File "./tests/unit/grading/test_exercises.py"' in outcome.error


def test_hlo_fact_reads_the_compiled_module():
    x = jnp.ones((8, 8))
    no_loop = ex.hlo_fact(
        "no while loop", lambda text: " while(" not in text or
        "found a while loop", (x,), hint="use a static trip count")
    assert no_loop(lambda a: a * 2).status == "pass"

    def looped(a):
        n = a.shape[0] + jnp.int32(a[0, 0])  # traced: stays a while loop
        return jax.lax.fori_loop(0, n, lambda i, c: c * 2, a)

    failed = no_loop(looped)
    assert failed.status == "fail"
    assert failed.detail == "found a while loop"
    assert failed.hint == "use a static trip count"
    assert ex.hlo_fact("x", lambda t: False, (x,))(
        lambda a: a).detail == "it does not hold"
    assert ex.hlo_fact("x", lambda t: True, (x,))(42).status == "fail"


def test_time_target_is_not_graded_on_cpu():
    outcome = ex.time_below(1.0, (jnp.ones(3),))(lambda x: x)
    assert outcome.status == "skip"
    assert outcome.detail.startswith("not graded here: needs a GPU")


def test_a_criterion_not_graded_here_never_lets_the_report_pass():
    skip = ex.not_graded("c", "a GPU")
    passed = ex.Outcome("d", "pass", "fine")
    failed = ex.Outcome("e", "fail", "no")
    assert ex.Report("t", (skip,)).status == "not graded here"
    partly = ex.Report("t", (passed, skip))
    assert partly.status == "passed where graded" and not partly.passed
    assert not partly.failed and partly.failed_hints() == []
    assert "PASSED WHERE GRADED" in partly.text()
    assert ex.Report("t", (passed, skip, failed)).status == "not yet"
    assert ex.Report("t", (passed,)).passed


def test_report_displays_as_html_and_text():
    bundle = DOUBLE.check(lambda x: 2 * x)._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert "color:#1a7f37'>pass<" in bundle["text/html"]


def test_panel_reveals_hints_one_at_a_time():
    panel = DOUBLE.check(lambda x: x).panel()
    body, button, shown = panel.children
    assert "<details>" not in body.value
    button.click()
    assert "Hint 1" in shown.value and "Hint 2" not in shown.value
    button.click()
    assert "Hint 2" in shown.value and button.disabled
    # the static book, with no kernel to run the button, folds the hints
    static = panel._repr_mimebundle_()["text/html"]
    assert "<details>" in static and "Hint" in static


def test_bad_exercise_input():
    not_a_function = DOUBLE.check(3)
    assert not_a_function.failed
    assert "takes your function itself; got 3 (a int)" in \
        not_a_function.outcomes[0].detail
    with pytest.raises(ValueError, match="no criteria"):
        ex.Exercise("empty", []).check(lambda x: x)
    with pytest.raises(ValueError, match="at least one case"):
        ex.matches_reference(lambda x: x, [])
    with pytest.raises(ValueError, match="status must be"):
        ex.Outcome("c", "maybe", "")


def test_matches_reference_compares_booleans():
    from helpers.grading.exercises import matches_reference

    criterion = matches_reference(lambda x: x > 0, [(np.arange(-2, 3),)])
    assert criterion(lambda x: x > 0).status == "pass"
    outcome = criterion(lambda x: x >= 0)
    assert outcome.status == "fail" and "case 0" in outcome.detail


def test_the_reference_answers_each_case_once_however_many_checks():
    calls = []

    def reference(x):
        calls.append(x)
        return 2 * x

    criterion = ex.matches_reference(reference, [(1.0,), (3.0,)])
    assert calls == []  # nothing runs before the first check
    assert criterion(lambda x: x + x).status == "pass"
    assert criterion(lambda x: 3 * x).status == "fail"
    assert criterion(lambda x: 2.0 * x).status == "pass"
    assert calls == [1.0, 3.0]


def _slow_double(x):
    for _ in range(30):  # a chain of matmuls the fast version skips
        x = jnp.tanh(x @ x) * 0.5
    return 2 * x


@pytest.mark.slow
def test_faster_than_judges_interleaved_runs(monkeypatch):
    x = jnp.ones((256, 256)) * 0.01
    assert ex.faster_than(_slow_double, (x,))(
        lambda a: 2 * a).status == "skip"
    # on a CPU the rule the GPU applies can still be exercised
    monkeypatch.setattr(criteria.machine, "on_gpu", lambda: True)
    fast = ex.faster_than(_slow_double, (x,), repeat=10)(lambda a: 2 * a)
    assert fast.status == "pass" and "starter's" in fast.detail
    slow = ex.faster_than(lambda a: 2 * a, (x,), repeat=10,
                          hint="h")(_slow_double)
    assert slow.status == "fail" and slow.hint == "h"
    broken = ex.faster_than(_slow_double, (x,))(lambda a: a @ a[:3])
    assert broken.status == "fail" and "raised" in broken.detail


@pytest.mark.slow
def test_as_fast_as_allows_a_margin_by_device_time(monkeypatch):
    x = jnp.ones((256, 256)) * 0.01
    skipped = ex.as_fast_as(_slow_double, (x,))(_slow_double)
    assert skipped.status == "skip" and "a GPU" in skipped.detail
    monkeypatch.setattr(criteria.machine, "on_gpu", lambda: True)
    # far faster than the baseline: passes however loaded the machine is
    fast = ex.as_fast_as(_slow_double, (x,))(lambda a: 2 * a)
    assert fast.status == "pass" and "times)" in fast.detail
    slow = ex.as_fast_as(lambda a: 2 * a, (x,), hint="h")(_slow_double)
    assert slow.status == "fail" and slow.hint == "h"
    assert slow.criterion == "within 10% of the starter's device time " \
        "on the GPU"
    broken = ex.as_fast_as(_slow_double, (x,))(lambda a: a @ a[:3])
    assert broken.status == "fail" and "raised" in broken.detail


@pytest.mark.slow
def test_hlo_fact_can_read_the_module_compiled_for_an_h100(monkeypatch):
    row = (jax.ShapeDtypeStruct((64, 32), jnp.float32),)
    fact = ex.hlo_fact("a fast reduction", lambda t: "kind=kInput" in t,
                       row, for_h100=True)
    if criteria.crosscompile.available():
        assert fact(lambda x: x.sum(-1)).status == "pass"
        assert fact(lambda x: x[:, :25].sum(-1)).status == "fail"
    monkeypatch.setattr(criteria.crosscompile, "available", lambda: False)
    monkeypatch.setattr(criteria.crosscompile, "why_unavailable",
                        lambda: "no plugin")
    skipped = fact(lambda x: x.sum(-1))
    assert skipped.status == "skip" and "no plugin" in skipped.detail


@pytest.mark.parametrize("returned", ["fast", None, [1.0, "x"], object()])
def test_a_check_never_raises_whatever_the_answer(returned):
    report = DOUBLE.check(lambda x: returned)
    assert report.failed
    assert "returned" in report.outcomes[0].detail


def test_a_criterion_that_breaks_is_a_failure_not_an_exception():
    @ex.described("the answer is positive")
    def positive(fn):
        return ex.Outcome("the answer is positive",
                          "pass" if fn() > 0 else "fail", "")

    report = ex.Exercise("t", [positive]).check(lambda: "three")
    outcome = report.outcomes[0]
    assert outcome.criterion == "the answer is positive"
    assert outcome.status == "fail" and "TypeError" in outcome.detail
    assert "Traceback" in outcome.error


@pytest.mark.parametrize("answer", [
    lambda x: [bool(v) for v in x > 0],           # a list
    lambda x: tuple(bool(v) for v in x > 0),      # a tuple
    lambda x: np.asarray(x) > 0,                   # a NumPy array
    lambda x: jnp.asarray(x) > 0,                  # a JAX array
    lambda x: [np.bool_(v) for v in x > 0],        # NumPy booleans
])
def test_natural_forms_of_the_same_answer_agree(answer):
    criterion = ex.matches_reference(lambda x: [bool(v) for v in x > 0],
                                     [(np.arange(-2.0, 3.0),)])
    assert criterion(answer).status == "pass"


def test_a_series_answers_a_dict_with_the_same_keys():
    import pandas as pd

    criterion = ex.matches_reference(lambda: {"a": 1.0, "b": 2.0}, [()])
    assert criterion(lambda: pd.Series({"b": 2.0, "a": 1.0})).status == \
        "pass"
    wrong_keys = criterion(lambda: {"a": 1.0, "c": 2.0})
    assert "expected ['a', 'b']" in wrong_keys.detail


def test_a_solution_shows_folded():
    exercise = ex.Exercise("Exercise 0.9: double", DOUBLE.criteria,
                           solution=lambda x: 2 * x)
    shown = exercise.show_solution()._repr_mimebundle_()
    assert shown["text/html"].startswith("<details><summary>")
    assert "lambda x: 2 * x" in shown["text/html"]
    assert "2 * x" not in shown["text/plain"]  # a terminal gets no spoiler
    with pytest.raises(ValueError, match="no solution"):
        DOUBLE.show_solution()


def test_an_exercise_knows_its_place():
    assert ex.Exercise("Exercise 2.3: x", DOUBLE.criteria).number == "2.3"
    with pytest.raises(ValueError, match="another chapter"):
        ex.Exercise("Exercise 2.3: x", DOUBLE.criteria, chapter="03_a")
    with pytest.raises(ValueError, match="level must be one of"):
        ex.Exercise("t", DOUBLE.criteria, level="easy")


def test_a_grader_that_breaks_says_it_is_the_graders_fault():
    fact = ex.hlo_fact("x", lambda text: 1 / 0, (np.ones(3),))
    outcome = fact(lambda a: a * 2)
    assert outcome.status == "fail"
    assert outcome.detail.startswith("the check could not read")
    assert "bug in the exercise" in outcome.hint and outcome.error
