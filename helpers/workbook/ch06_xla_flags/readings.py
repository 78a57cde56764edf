"""Chapter 6's runs on the machine that executes it, as the page shows
them: the CPU's library fusion against XLA's own (section 6.1), and
automatic PGLE's runs (section 6.5, here and on the reference GPU).

Times are shown in µs or ms, counts of fusions as words ("3 kLoop"),
and the sentences about this machine say so: a CPU run says nothing
about a GPU.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import prose
from helpers.workbook.ch06_xla_flags import clocks, verdicts

_UNITS = {"µs": 1e-6, "ms": 1e-3}


def fusions_table(runs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """One row a setting (`flag_runs.in_child`'s results by label): its
    fusions in words, its kernels, its median time in µs and the spread
    of its times (IQR over median)."""
    return pd.DataFrame({
        label: {"fusions": prose.counted(run["fusion kinds"]),
                "kernels": run["kernels"],
                "median time, µs": round(run["median s"] * 1e6, 1),
                "spread within the run": f"{run.get('spread') or 0:.0%}"}
        for label, run in runs.items()}).T


def library_answer(library: dict[str, Any], own: dict[str, Any]) -> str:
    """Whether XLA's own fusions (``own``) took longer or shorter than the
    library's (``library``) on this machine, by their medians against the
    spread of each run's times (one process each)."""
    ratio = own["median s"] / library["median s"]
    spread = max(library.get("spread") or 0.0, own.get("spread") or 0.0)
    text = (f"On this machine, XLA's own fusions "
            f"({prose.counted(own['fusion kinds'])}) took "
            f"{verdicts.duration(own['median s'])} a call against "
            f"{verdicts.duration(library['median s'])} for the library's "
            f"({prose.counted(library['fusion kinds'])}): "
            f"{ratio:.2f} times as long, ")
    if abs(ratio - 1) <= spread:
        return text + (f"within the spread of the runs' times ({spread:.0%})"
                       ": no difference these medians can show.")
    faster = "the library's" if ratio > 1 else "XLA's own"
    return text + (f"more than the spread of the runs' times "
                   f"({spread:.0%}), so here {faster} fusion is faster. One "
                   "process each: the careful test repeats the runs and "
                   "compares them as the profiling chapter does.")


def pgle_table(runs: dict[str, dict[str, Any]], unit: str = "µs"
               ) -> pd.DataFrame:
    """Automatic PGLE's runs (`flag_runs.measure_jit`'s results by label,
    ``"without"``, ``"with"``, ...): compilations, the median span under
    the profiler and the unprofiled wall clock in ``unit`` (µs or ms),
    and the spread of each clock's times within the run (the wall
    clock's where the runs kept it)."""
    per = _UNITS[unit]
    walls = all("wall spread" in run for run in runs.values())
    table = {}
    for label, run in runs.items():
        table[label] = {
            "automatic PGLE": "on" if run["pgle"] else "off",
            "compilations": run["compilations"],
            f"profiled span, {unit}": round(run["median s"] / per, 3),
            f"wall clock, {unit}": round(run["wall s"] / per, 3),
            "spread of the spans": f"{run.get('spread') or 0:.0%}"}
        if walls:
            table[label]["spread of the wall clock"] = \
                f"{run['wall spread']:.0%}"
    return pd.DataFrame(table).T


def cpu_pgle(runs: dict[str, dict[str, Any]]) -> str | None:
    """Automatic PGLE on this machine's CPU, judged against a second
    process without it: by the wall clock where the span under the
    profiler is longer than the whole call (`clocks.pgle_by_wall`), else
    by the span (`clocks.pgle_comparison`); and why the answer is about
    this machine only. None without the second process."""
    if "without, again" not in runs:
        return None
    by_wall = clocks.pgle_by_wall(runs)
    text = (f"On this machine's CPU, {by_wall[0].lower()}{by_wall[1:]}"
            if by_wall else
            clocks.pgle_comparison(runs, "On this machine's CPU"))
    if text is None:
        return None
    why = (" The CPU runs no GPU kernels for the profile to time (the "
           "manual profile below yields no latencies), so ")
    if text.endswith("a real effect."):
        return text + why + ("whatever made the difference, it was not a "
                             "schedule fitted to measured latencies: it is "
                             "about this machine, not about PGLE on a GPU.")
    return text + why + ("no difference was expected; nor does this say "
                         "anything about PGLE on a GPU.")
