"""The book's figure style, and sweeps with live and recorded series.

Every figure that shows a GPU result says where it came from: a live series
is drawn solid, a recorded one dashed, and the legend names the device.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt

from helpers.measuring.recorded import Result

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
    "font.size": 10,
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
        ax.legend()
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
