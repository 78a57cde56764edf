"""Every chapter's headline goal, read back from its executed notebook.

Each chapter glues the numbers its goal is judged by
(`helpers.page.prose.glue`). This module reads those glued values from the
stored ``.ipynb`` files, with the provenance line of the run that produced
them, and decides each goal: 'met', 'not met', or 'no GPU result yet' when a
number needed is a GPU measurement nobody has recorded. ``python -m
helpers.workbook.ch09_reproducibility.goals`` (``make goals``) prints the
table.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Callable

import nbformat
import pandas as pd

from helpers.page import prose

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
    """

    chapter: str
    goal: str
    names: tuple[str, ...]
    met: Callable[[dict[str, str]], bool]


def _percent(text: str) -> float:
    """A glued percentage; NaN for anything else (a fraction over its
    ceiling is glued as an error, which meets no goal)."""
    try:
        return float(text.rstrip("%"))
    except ValueError:
        return float("nan")


GOALS = [
    Goal("01_measuring", "on the reference GPU, a large array's calls "
         "timed back to back agree with its device time within 5%",
         ("gpu_back_to_back_vs_device",),
         lambda v: abs(float(v["gpu_back_to_back_vs_device"]) - 100) <= 5),
    Goal("02_fusion", "at least 85% of the copy bandwidth for every K in "
         "10..50, float32 and float64 (best version)",
         ("gpu_worst_float32", "gpu_worst_float64"),
         lambda v: all(_percent(v[f"gpu_worst_{dtype}"]) >= 85
                       for dtype in ("float32", "float64"))),
    Goal("03_launches", "the 8000-step loop is faster on the GPU than on "
         "the CPU", ("one_chain_verdict",),
         lambda v: v["one_chain_verdict"] == "met"),
    Goal("04_profiling", "A/A false positives at most 5% and a 3% "
         "difference found with at least 90% power, each within sampling "
         "error (one-sided binomial test, 1% level)",
         ("aa_random", "power_low", "aa_calibrated", "power_calibrated"),
         lambda v: v["aa_calibrated"] == v["power_calibrated"] == "yes"),
    Goal("05_transformations", "every claim decided by a number on the "
         "reference GPU", ("gpu_claims_decided", "claims_total"),
         lambda v: v["gpu_claims_decided"] == v["claims_total"]),
    Goal("06_xla_flags", "every GPU flag setting measured, with its "
         "compiled module", ("gpu_flag_settings_ok", "gpu_flag_settings"),
         lambda v: v["gpu_flag_settings_ok"] == v["gpu_flag_settings"]),
    Goal("07_multi_gpu", "every example runs on simulated devices and "
         "matches its single-device reference", ("simulated_examples_ok",),
         lambda v: v["simulated_examples_ok"] == "yes"),
]


def glued(notebook: Path) -> dict[str, str]:
    """The values a stored notebook glued, as printed (quotes removed)."""
    book = nbformat.read(notebook, as_version=4)
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
    """The provenance line the notebook printed (``machine.summary()``)."""
    book = nbformat.read(notebook, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code" and "machine.summary()" in cell.source:
            for output in cell.get("outputs", []):
                if output.get("name") == "stdout":
                    return output["text"].strip().splitlines()[-1]
    return "(not executed)"


def judge(goal: Goal, values: dict[str, str]) -> str:
    """'met', 'not met', 'no GPU result yet', or 'not glued' when the
    notebook lacks a value (run it again)."""
    needed = [values.get(name) for name in goal.names]
    if any(v is None for v in needed):
        return "not glued"
    if any(v == MISSING for v in needed):
        return "no GPU result yet"
    return "met" if goal.met(values) else "not met"


def _measured(goal: Goal, values: dict[str, str]) -> str:
    """The goal's glued values as the table shows them: a value still
    waiting for its GPU recording is named as such, not left blank."""
    return "; ".join(
        f"{name} = " + ("waiting for a GPU recording"
                        if values.get(name) == MISSING
                        else values.get(name, "?"))
        for name in goal.names)


def table(chapters: Path = Path("chapters")) -> pd.DataFrame:
    """One row per goal: the goal, the glued values, the run that produced
    them and the verdict."""
    rows = []
    for goal in GOALS:
        path = chapters / f"{goal.chapter}.ipynb"
        values = glued(path) if path.exists() else {}
        rows.append({"chapter": goal.chapter, "goal": goal.goal,
                     "measured": _measured(goal, values),
                     "run": provenance(path) if path.exists() else "",
                     "verdict": judge(goal, values)})
    return pd.DataFrame(rows).set_index("chapter")


def strict_run(junit: Path) -> dict[str, str] | None:
    """The totals of the last ``make test-gpu`` (its JUnit XML), or None
    when it has not been run and committed."""
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
    return {key: suite.get(key, "") for key in keys}


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("chapters")
    print(table(folder).to_string())
