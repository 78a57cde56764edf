"""Chapter 6's figure: each flag setting's run time and compile time as a
multiple of its program's default, with the noise between two processes
drawn around 1 where the recording measured it.

A bar that ends inside the band moved no more than the same program moves
on its own; only a bar that leaves it is an effect of the flag.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from helpers.page import legends

from helpers.workbook.ch06_xla_flags import flag_runs, verdicts

COLUMNS = {"median s": "run time / default's",
           "compile s": "compile time / default's"}


# Ratios a reader reads at a glance; an axis shows those within its range.
RATIO_TICKS = (0.01, 0.1, 0.2, 0.5, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25, 1.5,
               2.0, 5.0, 10.0, 100.0)


def ratio_axis(lo: float, hi: float) -> tuple[list[float], float, float]:
    """Ticks and limits for a log axis of ratios spanning ``lo`` to ``hi``:
    the `RATIO_TICKS` inside, thinned so their labels never collide,
    always with 1× (the default). A narrow range is widened to the ticks
    on either side, so that at least three show: a narrow log axis
    otherwise shows one tick, and its values cannot be read.

    Example:
        >>> ratio_axis(0.93, 1.12)
        ([0.95, 1.0, 1.05, 1.1], 0.93, 1.12)
        >>> ratio_axis(0.999, 1.02)
        ([0.95, 1.0, 1.05], 0.95, 1.05)
        >>> ratio_axis(0.85, 9.0)[0]
        [1.0, 1.5, 5.0]
    """
    inside = [t for t in RATIO_TICKS if lo <= t <= hi]
    if len(inside) < 3:
        lo = max([t for t in RATIO_TICKS if t < min(inside, default=lo)]
                 + [RATIO_TICKS[0]])
        hi = min([t for t in RATIO_TICKS if t > max(inside, default=hi)]
                 + [RATIO_TICKS[-1]])
        inside = [t for t in RATIO_TICKS if lo <= t <= hi]
    return _spread_out(inside, lo, hi), lo, hi


def _spread_out(ticks: list[float], lo: float, hi: float) -> list[float]:
    """``ticks`` thinned outward from 1× so that neighbours stand at least
    a sixth of the axis apart (on its log scale): labels never collide."""
    gap = math.log10(hi / lo) / 6
    centre = 1.0 if lo <= 1.0 <= hi else ticks[0]
    kept = [centre]
    for side in (sorted(t for t in ticks if t > centre),
                 sorted((t for t in ticks if t < centre), reverse=True)):
        last = centre
        for tick in side:
            if abs(math.log10(tick / last)) >= gap:
                kept.append(tick)
                last = tick
    return sorted(kept)


def ratios(data: dict[str, Any]) -> pd.DataFrame:
    """One row per flag setting: its program, its flags, and its run and
    compile time over its program's default, with the noise it is judged
    against (`verdicts.threshold`; NaN where the default ran once)."""
    rows = []
    for program in dict.fromkeys(row["program"] for row in data["rows"]):
        by_flags = {row["flags"]: row for row in data["rows"]
                    if row["program"] == program and "error" not in row}
        default = by_flags.get("(none)")
        if default is None:
            continue
        for flags, row in by_flags.items():
            if flags in ("(none)", flag_runs.AGAIN):
                continue
            rows.append({"program": program, "setting": flags,
                         **{label: row[column] / default[column]
                            for column, label in COLUMNS.items()},
                         "noise": verdicts.threshold(data, program, flags)})
    if not rows:
        raise ValueError("the recording has no setting beside its "
                         "program's default: nothing to compare.")
    return pd.DataFrame(rows)


def plot(data: dict[str, Any], device: str) -> Any:
    """The figure: a panel for run time and one for compile time, a line
    from the default (1) to each setting's ratio, the noise band around
    1, and the programs told apart by colour."""
    table = ratios(data)
    y = range(len(table))
    colours = [f"C{list(table['program'].unique()).index(p)}"
               for p in table["program"]]
    fig, axes = plt.subplots(1, 2, figsize=(8, 0.45 * len(table) + 1.6),
                             sharey=True, layout="constrained")
    for ax, label in zip(axes, COLUMNS.values()):
        ax.hlines(y, 1.0, table[label], colors=colours, linewidth=2)
        ax.scatter(table[label], y, c=colours, zorder=3)
        ax.axvline(1.0, color="0.3", linewidth=1)
        for i, noise in enumerate(table["noise"]):
            if pd.notna(noise) and label == COLUMNS["median s"]:
                band = ax.fill_betweenx([i - 0.4, i + 0.4], 1 - noise,
                                        1 + noise, color="0.5", alpha=0.35,
                                        linewidth=0)
                band.set_gid("noise")
        ax.set(xscale="log", xlabel="× the default's (log scale)")
        ticks, lo, hi = ratio_axis(*ax.get_xlim())
        ax.set_xticks(ticks)
        ax.set_xlim(lo, hi)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0].set_yticks(list(y), [s.removeprefix("--xla_gpu_")
                                 for s in table["setting"]])
    axes[0].invert_yaxis()  # the first setting on top; the axes share y
    axes[0].set_title("run time")
    axes[1].set_title("compile time")
    for program, colour in dict(zip(table["program"], colours)).items():
        axes[1].scatter([], [], c=colour, label=program)
    legends.below(fig, axes[1], columns=2)
    fig.suptitle(f"Each flag against its program's default, {device}")
    return fig
