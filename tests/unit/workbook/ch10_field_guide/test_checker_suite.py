"""The checker on programs written to test it (`checker_suite`): it finds
the slow patterns, stays quiet on good code, and prices what it finds."""

from __future__ import annotations

import inspect

import jax
import pytest

from helpers.examine import costs, examine
from helpers.workbook.ch10_field_guide import cases, checker_suite
from helpers.xla import crosscompile

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        crosscompile.why_unavailable() is not None,
        reason=f"needs XLA:GPU's compiler: {crosscompile.why_unavailable()}"),
]


@pytest.fixture(scope="module")
def score() -> checker_suite.Score:
    return checker_suite.score()


def test_the_suite_is_large_enough_and_its_own():
    assert len(checker_suite.SLOW) >= 20 and len(checker_suite.GOOD) >= 20
    names = [p.name for p in checker_suite.SLOW + checker_suite.GOOD]
    assert len(set(names)) == len(names)
    guide_code = {inspect.unwrap(getattr(f, "__wrapped__", f))
                  for case in cases.CASES.values()
                  for f in (case.slow, case.fixed)}
    for program in checker_suite.SLOW + checker_suite.GOOD:
        fn = inspect.unwrap(getattr(program.fn, "__wrapped__", program.fn))
        assert fn.__module__.startswith(checker_suite.__name__), program.name
        assert fn not in guide_code, program.name


def test_recall_and_precision(score, record_property):
    """At least 17 in 18 of each: the bar the checker was set."""
    record_property("recall", score.recall)
    record_property("clean", score.clean)
    record_property("precision", score.precision)
    print(f"\nchecker suite: recall {score.recall:.3f} "
          f"({score.found_count}/{len(score.found)}), clean {score.clean:.3f}"
          f" ({score.clean_count}/{len(score.alarms)}), precision "
          f"{score.precision:.3f}")
    table = score.table()
    wrong = table[~table["right"]]
    assert score.recall >= 17 / 18, wrong.to_string()
    assert score.clean >= 17 / 18, wrong.to_string()
    assert 0 < score.precision <= 1


def test_the_table_says_what_it_got_right(score):
    table = score.table()
    assert list(table.columns) == ["program", "kind", "its pattern",
                                   "checker", "right"]
    assert (table["kind"] == "slow").sum() == len(checker_suite.SLOW)
    assert table["right"].sum() == score.found_count + score.clean_count


def test_every_finding_is_priced():
    """Each slow finding says what it costs on the H100, with its
    arithmetic or why the book cannot price it."""
    if costs.h100() is None:
        pytest.skip("the H100's recordings of chapters 1 and 3 are missing")
    for program in checker_suite.SLOW:
        with jax.enable_x64(program.x64):
            calls = program.calls() if program.calls else None
            report = examine(program.fn, *program.arguments(), calls=calls)
        for finding in report.findings:
            assert finding.cost, (program.name, finding.pattern)
            priced = any(unit in finding.cost for unit in (" µs", " ms",
                                                           " s ", "MiB"))
            assert priced or finding.cost.startswith("no H100 measurement"), (
                program.name, finding.cost)
