"""Every chapter's headline goal, read back from its executed notebook.

Each chapter glues the numbers its goal is judged by
(`helpers.page.prose.glue`). This module reads those glued values from the
stored ``.ipynb`` files, with the provenance line of the run that produced
them, and decides each goal: 'met', 'not met', or 'needs a device-time
recording' when a number needed is a GPU measurement by the device's clock
that the reference GPU's recordings do not hold. ``python -m
helpers.workbook.ch09_reproducibility.goals`` (``make goals``) prints the
table.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from helpers.measuring import gpu_test_run, machine, results
from helpers.page import executions, prose
from helpers.workbook.ch03_launches.predictions import ONE_CHAIN_GOAL

MISSING = prose.MISSING  # what glue_text writes for a missing number
_GLUE_MIME = "application/papermill.record/text/plain"


@dataclasses.dataclass(frozen=True)
class Goal:
    """A chapter's goal and how its glued numbers decide it.

    Attributes:
        chapter: the notebook's stem, e.g. ``'02_fusion'``.
        goal: the goal in words, from the chapter's issue.
        names: the glued values it reads.
        met: given those values (as printed), whether the goal is met.
        labels: what each value is, in words, for the table (one per name).
        recording: the reference GPU's recording the values come from,
            or None when the chapter measures them where it runs.
        elsewhere: given another GPU's data of that recording, the goal's
            verdict there and its numbers, e.g. ``'not met (68%, 67%)'``
            (None: the goal is judged on the reference GPU only).
    """

    chapter: str
    goal: str
    names: tuple[str, ...]
    met: Callable[[dict[str, str]], bool]
    labels: tuple[str, ...]
    recording: str | None = None
    elsewhere: Callable[[dict[str, Any]], str | None] | None = None

    def __post_init__(self) -> None:
        if len(self.labels) != len(self.names):
            raise ValueError(f"{self.chapter}: {len(self.names)} glued "
                             f"names but {len(self.labels)} labels.")


def _percent(text: str) -> float:
    """A glued percentage; NaN for anything else (a fraction over its
    ceiling is glued as an error, which meets no goal)."""
    try:
        return float(text.rstrip("%"))
    except ValueError:
        return float("nan")


def _back_to_back_elsewhere(data: dict[str, Any]) -> str:
    """Chapter 1's goal read from another GPU's recording."""
    from helpers.workbook.ch01_measuring import verdicts
    ratio = verdicts.back_to_back_agreement(data)
    met = abs(ratio - 1) <= verdicts.AGREEMENT
    # a percentage of the device time, as the chapter's own goal reads
    return f"{'met' if met else 'not met'} ({ratio:.1%})"


def _fixes_elsewhere(data: dict[str, Any]) -> str:
    """Chapter 2's goal read from another GPU's recording: the best
    version's slowest K in float32 and float64, of that GPU's own copy
    ceiling."""
    from helpers.workbook.ch02_fusion import verdicts
    report = verdicts.goal_report(verdicts.table(data))
    return _shares_verdict([verdicts.best(report, dtype)[1]
                            for dtype in ("float32", "float64")],
                           verdicts.GOAL)


def _shares_verdict(shares: list[float], goal: float) -> str:
    """'met' or 'not met', with each share as a percentage, e.g.
    ``'not met (68%, 67%)'``: a share meets ``goal`` when it is at least
    that."""
    from helpers.workbook.ch02_fusion import verdicts
    return (f"{'met' if min(shares) >= goal else 'not met'} ("
            + ", ".join(verdicts.percent(share) for share in shares) + ")")


def _reads_elsewhere(data: dict[str, Any]) -> str | None:
    """Chapter 2's read goal from another GPU's recording: the Pallas row
    kernel's slowest K in float32 and float64, of that GPU's own read
    ceiling; None for a recording made before either was measured."""
    from helpers.workbook.ch02_fusion import verdicts
    worst = verdicts.read_shares(data)
    if worst is None:
        return None
    return _shares_verdict([worst["Pallas row kernel", dtype]
                            for dtype in ("float32", "float64")],
                           verdicts.READ_GOAL)


def _chains_elsewhere(data: dict[str, Any]) -> str:
    """Chapter 3's goal read from another GPU's recording: one chain's
    best fused kernel by device time over that host's CPU, and the CPU's
    time over the best side-by-side layout for 10,000 chains."""
    from helpers.workbook.ch03_launches import verdicts
    chains = verdicts.chain_numbers(data)
    one, many = chains["one_ratio"], chains["many_speedup"]
    met = one <= ONE_CHAIN_GOAL and many is not None and many >= 50
    shown = "no side-by-side layout" if many is None else f"{many:.0f}"
    return f"{'met' if met else 'not met'} ({one:.3f}, {shown})"


GOALS = [
    Goal("01_measuring", "on the reference GPU, a large array's calls "
         "timed back to back agree with its device time within 5%",
         ("gpu_back_to_back_vs_device",),
         lambda v: abs(float(v["gpu_back_to_back_vs_device"]) - 100) <= 5,
         ("back-to-back time, % of device time",), "01_measuring/summary",
         _back_to_back_elsewhere),
    Goal("02_fusion", "at least 85% of the copy bandwidth for every K in "
         "10..50, float32 and float64 (best version)",
         ("gpu_worst_float32", "gpu_worst_float64"),
         lambda v: all(_percent(v[f"gpu_worst_{dtype}"]) >= 85
                       for dtype in ("float32", "float64")),
         ("float32, slowest K by device time",
          "float64, slowest K by device time"), "02_fusion/fixes",
         _fixes_elsewhere),
    Goal("02_fusion", "at least 90% of the read ceiling for every K in "
         "10..50, float32 and float64 (the Pallas row kernel)",
         ("gpu_read_worst_float32", "gpu_read_worst_float64"),
         lambda v: all(float(v[f"gpu_read_worst_{dtype}"]) >= 90
                       for dtype in ("float32", "float64")),
         ("float32, slowest K, % of the read ceiling",
          "float64, slowest K, % of the read ceiling"), "02_fusion/fixes",
         _reads_elsewhere),
    Goal("03_launches", "by device time, one chain of the 8000-step loop "
         f"in at most {ONE_CHAIN_GOAL} of the CPU's time, and 10,000 chains "
         "at least 50 times as fast", ("one_chain_ratio", "many_chain_ratio"),
         lambda v: float(v["one_chain_ratio"]) <= ONE_CHAIN_GOAL
         and float(v["many_chain_ratio"]) >= 50,
         ("one chain, GPU time / CPU time",
          "10,000 chains, CPU time / GPU time"), "03_launches/goals",
         _chains_elsewhere),
    Goal("04_profiling", "on synthetic timings with a known answer: A/A "
         "false positives at most 5% and a 3% difference found with at "
         "least 90% power, each within sampling error (one-sided binomial "
         "test, 1% level)",
         ("aa_random", "power_low", "aa_calibrated", "power_calibrated"),
         lambda v: v["aa_calibrated"] == v["power_calibrated"] == "yes",
         ("A/A false positives, %", "lowest power, %",
          "false positives within 5%", "power within 90%")),
    Goal("04_profiling", "the attention block at most 1.5 times its floor "
         "at the precision it runs (the best version, by device time)",
         ("best_over_floor",),
         lambda v: float(v["best_over_floor"]) <= 1.5,
         ("best version's call, times its floor",), "04_profiling/gpu"),
    Goal("05_transformations", "the training step at 50% MFU or more "
         "against the bf16 peak, at a width and batch of 8192",
         ("gpu_best_mfu",), lambda v: _percent(v["gpu_best_mfu"]) >= 50,
         ("the better step's MFU",), "05_transformations/claims"),
    Goal("05_transformations", "every claim decided by a number on the "
         "reference GPU", ("gpu_claims_decided", "claims_total"),
         lambda v: v["gpu_claims_decided"] == v["claims_total"],
         ("claims decided", "claims"), "05_transformations/claims"),
    Goal("06_xla_flags", "every GPU flag setting decided: its time "
         "against the noise (between two processes and within a run), "
         "its compiled module "
         "against the default's", ("gpu_flag_settings_ok",
                                    "gpu_flag_settings"),
         lambda v: v["gpu_flag_settings_ok"] == v["gpu_flag_settings"],
         ("settings decided", "settings"), "06_xla_flags/effects"),
    Goal("07_multi_gpu", "every example runs on simulated devices and "
         "matches its single-device reference", ("simulated_examples_ok",),
         lambda v: v["simulated_examples_ok"] == "yes",
         ("all match",)),
]


def glued(notebook: Path) -> dict[str, str]:
    """The values the page of the chapter stored at ``notebook`` glued,
    as printed (quotes removed): the reference GPU's execution when the
    book shows it (`helpers.page.executions.shown_notebook`)."""
    book = executions.shown_notebook(notebook)
    values = {}
    for cell in book.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get(
                "name")
            text = output.get("data", {}).get(_GLUE_MIME)
            if name and text is not None:
                values[name] = text.strip("'\"")
    return values


def provenance(notebook: Path) -> str:
    """Who executed the page of the chapter stored at ``notebook``: the
    device by its short name, jax and the day, e.g. ``'H100, jax 0.11.2,
    2026-12-01'``."""
    run = executions.execution(executions.shown_notebook(notebook))
    if run is None:
        return "(not executed)"
    who = run["executor"]
    return (f"{machine.short_name(who['device'])}, jax {who['jax']}, "
            f"{str(who['date'])[:10]}")


# The verdict of a goal whose numbers the reference GPU's recordings do
# not hold (the goal needs the device's clock; the recording has the wall).
UNDECIDED = "needs a device-time recording"


def judge(goal: Goal, values: dict[str, str]) -> str:
    """'met', 'not met', `UNDECIDED`, or 'not glued' when the notebook
    lacks a value (run it again)."""
    needed = [values.get(name) for name in goal.names]
    if any(v is None for v in needed):
        return "not glued"
    if any(v == MISSING for v in needed):
        return UNDECIDED
    return "met" if goal.met(values) else "not met"


def _measured(goal: Goal, values: dict[str, str]) -> str:
    """The goal's glued values as the table shows them, each by its label:
    a value the recordings do not hold is said to be absent, not left
    blank."""
    return "; ".join(
        f"{label}: " + ("not in the recording" if values.get(name) == MISSING
                        else values.get(name, "not glued"))
        for name, label in zip(goal.names, goal.labels))


def _run(goal: Goal, notebook: Path) -> str:
    """Where the goal's numbers were measured: the reference GPU's
    recording (its device, JAX and date), or the machine that executed
    the chapter."""
    if goal.recording is None:
        if not notebook.exists():
            return ""
        return provenance(notebook) + " (executed)"
    result = results.reference(goal.recording)
    if result.provenance is None:
        return "no recording"
    where = result.provenance
    return (f"{result.short_name}, jax {where['jax']}, "
            f"{str(where['date'])[:10]} (recorded)")


def on_other_gpus(goal: Goal) -> str:
    """The goal's verdict on each other GPU that recorded its numbers,
    e.g. ``'H200: not met (68%, 67%)'``; '—' where none did."""
    if goal.recording is None or goal.elsewhere is None:
        return "—"
    said = [f"{result.short_name}: {verdict}"
            for result in results.other_gpus(goal.recording)
            if (verdict := goal.elsewhere(result.data)) is not None]
    return "; ".join(said) or "—"


def table(chapters: Path = Path("chapters")) -> pd.DataFrame:
    """One row per goal: the goal, the glued values, the run that produced
    them, the verdict, and the verdict on other recorded GPUs."""
    rows = []
    for goal in GOALS:
        path = chapters / f"{goal.chapter}.ipynb"
        values = glued(path) if path.exists() else {}
        rows.append({"chapter": goal.chapter, "goal": goal.goal,
                     "measured": _measured(goal, values),
                     "measured on": _run(goal, path),
                     "verdict": judge(goal, values),
                     "on other GPUs": on_other_gpus(goal)})
    return pd.DataFrame(rows).set_index("chapter")


def as_markdown(goals_table: pd.DataFrame) -> str:
    """`table` as a list a page can show at any width: one item per goal,
    its chapter and verdict first, then the goal, its numbers, where they
    were measured and the verdict on other GPUs (six columns of long text
    crush a table into cells of many lines)."""
    from helpers.workbook.ch09_reproducibility.executed_pages import (
        chapter_label)

    items = []
    for chapter, row in goals_table.iterrows():
        others = row["on other GPUs"]
        items.append(
            f"- **{chapter_label(str(chapter))}: {row['verdict']}.** "
            f"{str(row['goal'])[0].upper()}{str(row['goal'])[1:]}. "
            f"Measured: {row['measured']}, on {row['measured on']}."
            + (f" Other GPUs: {others}." if others and others != "—"
               else ""))
    return "\n".join(items)


# The strict check's test: one case per chapter, comparing a new
# execution with the page stored by the GPU's last visit.
PAGES_TEST = "test_the_chapter_reproduces_its_stored_page"


def strict_run(junit: Path) -> dict[str, str] | None:
    """The totals of the last GPU test run (its JUnit XML: ``make
    test-gpu``, or a GPU visit's tests), the chapters it compared with
    their stored pages and those that reproduced them, and the tests that
    failed; None when none has been committed."""
    import xml.etree.ElementTree as ElementTree

    if not junit.exists():
        return None
    root = ElementTree.parse(junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        raise ValueError(f"{junit} holds no <testsuite>: is it pytest's "
                         "JUnit XML (--junitxml)?")
    keys = ("tests", "failures", "errors", "skipped", "timestamp",
            "hostname")
    run = {key: suite.get(key, "") for key in keys}
    cases = gpu_test_run.cases(junit)
    compared = [c for c in cases if c["name"].startswith(PAGES_TEST)
                and c["outcome"] != "skipped"]
    run["pages compared"] = str(len(compared))
    run["pages reproduced"] = str(sum(c["outcome"] == "passed"
                                      for c in compared))
    run["failed"] = ", ".join(c["name"] for c in cases
                              if c["outcome"] == "failed")
    run["device"] = gpu_test_run.device(junit) or ""
    return run


def run_table(run: dict[str, str] | None) -> pd.Series:
    """`strict_run`'s totals as the page shows them, one line each: when
    and where, the tests passed, skipped and failed (named), and the
    chapters compared with their stored pages and reproduced. Empty when
    no run is kept."""
    if run is None:
        return pd.Series(dtype=object, name="the last GPU test run")
    counts = {key: int(run[key] or 0)
              for key in ("tests", "failures", "errors", "skipped")}
    failed = counts["failures"] + counts["errors"]
    compared = int(run.get("pages compared") or 0)
    return pd.Series({
        "run on": run.get("device") or "(not recorded)",
        "date": run["timestamp"][:10] or "(not recorded)",
        "tests": counts["tests"],
        "passed": counts["tests"] - failed - counts["skipped"],
        "skipped": counts["skipped"],
        "failed": f"{failed} ({run['failed']})" if run["failed"]
        else failed,
        "chapters compared with their stored pages": compared,
        "of them reproduced": int(run.get("pages reproduced") or 0),
    }, name="the last GPU test run")


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("chapters")
    print(table(folder).to_string())
