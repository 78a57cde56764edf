"""The book's figure style, and sweeps with live and recorded series.

Every figure that shows a GPU result says where it came from: a live series
is drawn solid, a recorded one dashed, and the legend names the device.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

from helpers.measuring.results import Result
from helpers.page import legends

# matplotlib's stubs type rcParams' keys as literals; Any accepts ours.
BOOK_STYLE: dict[Any, Any] = {
    "figure.figsize": (7.0, 3.6),
    "figure.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": "medium",
    "axes.titleweight": "bold",
    "legend.frameon": False,
    "legend.fontsize": "small",
    "font.size": 11,
}


def use_book_style() -> None:
    """Apply the book's matplotlib style for the rest of the session."""
    mpl.rcParams.update(BOOK_STYLE)


def _short_device(result: Result) -> str:
    provenance = result.provenance or {}
    return str(provenance.get("device", "?"))


def sweep(x: Sequence[float], series: dict[str, Sequence[float]], *,
          recorded: Result | None = None, recorded_x: str = "x",
          xlabel: str = "", ylabel: str = "", title: str = "",
          ceiling: tuple[str, float] | None = None,
          logx: bool = False, logy: bool = False,
          ax: Any = None) -> Any:
    """Plot a sweep measured here beside the same sweep recorded on a GPU.

    Args:
        x: the swept values measured here.
        series: ``{label: y values}`` measured here (solid lines).
        recorded: a `Result` whose ``data`` holds ``recorded_x`` and the
            same labels as ``series`` (drawn dashed, labelled with its
            device); skipped when None or missing.
        recorded_x: the key of the x values in ``recorded.data``.
        xlabel, ylabel, title: axis labels and title.
        ceiling: ``(label, value)`` drawn as a horizontal line, e.g. the
            measured copy bandwidth.
        logx, logy: log scales.
        ax: axes to draw on; a new figure by default.

    Returns:
        The matplotlib axes.
    """
    if not series:
        raise ValueError("sweep() needs at least one series to plot.")
    for label, ys in series.items():
        if len(ys) != len(x):
            raise ValueError(f"series {label!r} has {len(ys)} values for "
                             f"{len(x)} x values.")
    with mpl.rc_context(BOOK_STYLE):
        ax = ax or plt.subplots()[1]
        lines = {}
        for label, ys in series.items():
            lines[label] = ax.plot(x, ys, marker="o", label=f"{label} (here)")
        if recorded is not None and recorded.available:
            _plot_recorded(ax, recorded, recorded_x, series.keys(), lines)
        if ceiling is not None:
            ax.axhline(ceiling[1], color="0.4", linestyle=":",
                       label=ceiling[0])
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        legends.beside(ax)
    return ax


def _plot_recorded(ax: Any, recorded: Result, recorded_x: str,
                   labels: Iterable[str], lines: dict[str, Any]) -> None:
    data = recorded.data
    if recorded_x not in data:
        raise KeyError(f"recorded {recorded.name!r} has no {recorded_x!r}; "
                       f"it holds {sorted(data)}")
    device = _short_device(recorded)
    for label in labels:
        if label in data:
            color = lines[label][0].get_color()
            ax.plot(data[recorded_x], data[label], marker="s",
                    linestyle="--", color=color,
                    label=f"{label} ({recorded.source}, {device})")


def roofline(copy_bytes_per_s: float, peaks: dict[str, float],
             kernels: Any, *, title: str, ax: Any = None) -> Any:
    """A roofline: the fastest rate a kernel of each arithmetic intensity
    can reach, with measured kernels placed under it.

    The roof is min(peak, intensity x copy bandwidth); the *ridge point*,
    peak / bandwidth operations per byte, divides memory-bound kernels
    (left) from compute-bound ones (right).

    Args:
        copy_bytes_per_s: the measured copy bandwidth.
        peaks: ``{label: FLOP/s}``, one flat roof each (e.g. the matmul
            rate at two precisions); the largest sets the ridge point.
        kernels: a DataFrame with ``kernel``, ``flops``, ``bytes`` and
            ``seconds`` columns, one row per measured kernel.
        title: names the device and the clock that timed the kernels.
        ax: axes to draw on; a new figure by default.

    Returns:
        The matplotlib axes.
    """
    if copy_bytes_per_s <= 0 or not peaks or min(peaks.values()) <= 0:
        raise ValueError("a roofline needs a positive bandwidth and at "
                         f"least one positive peak; got {copy_bytes_per_s} "
                         f"and {peaks}.")
    missing = {"kernel", "flops", "bytes", "seconds"} - set(kernels.columns)
    if missing:
        raise KeyError(f"kernels lacks the columns {sorted(missing)}.")
    intensity = kernels["flops"] / kernels["bytes"]
    low = min(0.05, intensity.min() / 3)
    high = max(max(peaks.values()) / copy_bytes_per_s * 20,
               intensity.max() * 3)
    x = np.geomspace(low, high, 200)
    with mpl.rc_context(BOOK_STYLE):
        ax = ax or plt.subplots(layout="constrained")[1]
        for label, peak in sorted(peaks.items(), key=lambda p: -p[1]):
            ax.plot(x, np.minimum(peak, x * copy_bytes_per_s) / 1e12,
                    label=f"roof: {label}")
        ridge = max(peaks.values()) / copy_bytes_per_s
        ax.axvline(ridge, color="0.5", linestyle=":")
        ax.annotate(f"ridge point\n{ridge:.3g} FLOP/byte", (ridge, low),
                    xycoords=("data", "axes fraction"), fontsize="small",
                    xytext=(4, 8), textcoords="offset points")
        rates = kernels["flops"] / kernels["seconds"] / 1e12
        for row, at, rate in zip(kernels.itertuples(), intensity, rates):
            ax.plot(at, rate, "o", color="black")
            # of kernels of about the same intensity, the fastest is
            # labelled above its point and the others below theirs, so
            # labels of neighbouring points part instead of meeting
            near = rates[(intensity / at).between(1 / 3, 3)]
            above = rate >= near.max()
            ax.annotate(row.kernel, (at, rate), fontsize="small",
                        xytext=(6, 5) if above else (6, -13),
                        textcoords="offset points")
        ax.set(xscale="log", yscale="log", title=title,
               xlabel="arithmetic intensity (FLOP per byte moved)",
               ylabel="rate (TFLOP/s)")
        # under the panel: inside, a narrow panel's legend lies across a
        # rising roof wherever it is put
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22),
                  ncols=1, frameon=False)
    return ax
