"""Chapter 6's runs on the machine that executes it, as the page shows
them: the CPU's library fusion against XLA's own (section 6.1), and
automatic PGLE's runs (section 6.5, here and on the reference GPU).

Times are shown in µs or ms, counts of fusions as words ("3 kLoop").
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import prose

_UNITS = {"µs": 1e-6, "ms": 1e-3}


def fusions_table(runs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """One row a setting (`flag_runs.in_child`'s results by label, the
    baseline first): its fusions in words, its kernels, its median time in
    µs, that time over the first setting's, and the spread of its times
    (IQR over median)."""
    first = next(iter(runs.values()))["median s"]
    return pd.DataFrame({
        label: {"fusions": prose.counted(run["fusion kinds"]),
                "kernels": run["kernels"],
                "median time, µs": round(run["median s"] * 1e6, 1),
                "× no flags' time": f"{run['median s'] / first:.2f}",
                "spread within the run": f"{run.get('spread') or 0:.0%}"}
        for label, run in runs.items()}).T


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


