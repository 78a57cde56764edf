"""Legends that never cover the data they explain.

matplotlib's ``ax.legend()`` puts the box inside the axes, in the corner
it judges emptiest; with several lines crossing a panel no corner is
empty, and the box hides points a reader needs. The book places a legend
beside one panel (`beside`) or under a row of panels (`below`), and
`covering_data` finds any legend that still sits on a plotted point, so a
test can check a figure rather than a reader's eye.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def beside(ax: Any, **kwargs: Any) -> Any:
    """Draw ``ax``'s legend to the right of its axes, outside the plot.

    Args:
        ax: the matplotlib axes whose labelled artists the legend lists.
        **kwargs: passed on to ``ax.legend`` (e.g. ``title``).

    Returns:
        The legend.
    """
    _require_labels(ax)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0),
                     borderaxespad=0.0, **kwargs)


def below(fig: Any, ax: Any, *, columns: int = 3, **kwargs: Any) -> Any:
    """One legend for a figure of several panels, centred under them.

    The panels must share their labels (the same versions in each); the
    labels are read from ``ax``.

    Args:
        fig: the figure to put the legend on.
        ax: the panel whose labelled artists the legend lists.
        columns: entries per row of the legend.
        **kwargs: passed on to ``fig.legend``.

    Returns:
        The legend.
    """
    if columns < 1:
        raise ValueError(f"columns must be at least 1, got {columns}.")
    handles, labels = _require_labels(ax)
    return fig.legend(handles, labels, loc="upper center",
                      bbox_to_anchor=(0.5, 0.0), ncol=columns, **kwargs)


def covering_data(fig: Any) -> list[str]:
    """Name each legend of ``fig`` that sits on a plotted point.

    A point counts when its position on the canvas falls inside a legend's
    box; lines are checked at their data points (markers), collections
    (scatter plots) at theirs.

    Returns:
        One line per legend that covers data, e.g. ``"legend of 'float64':
        covers 3 points"``; empty when every legend is clear.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [(ax.get_title() or "figure", ax.get_legend())
               for ax in fig.axes] + [("figure", leg) for leg in fig.legends]
    found = []
    for name, legend in legends:
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        covered = sum(box.contains(x, y)
                      for ax in fig.axes for x, y in _points_on_canvas(ax))
        if covered:
            found.append(f"legend of {name!r}: covers {covered} points")
    return found


def _points_on_canvas(ax: Any) -> list[tuple[float, float]]:
    points = []
    for line in ax.get_lines():
        xy = np.column_stack(line.get_data()).astype(float)
        points += [tuple(p) for p in line.get_transform().transform(xy)]
    for collection in ax.collections:
        offsets = np.asarray(collection.get_offsets(), dtype=float)
        if offsets.size:
            on_canvas = collection.get_offset_transform().transform(offsets)
            points += [tuple(p) for p in on_canvas]
    return points


def _require_labels(ax: Any) -> tuple[list[Any], list[str]]:
    handles, labels = ax.get_legend_handles_labels()
    if not labels:
        raise ValueError("these axes have nothing labelled to put in a "
                         "legend: pass label=... to the plot calls first.")
    return handles, labels
