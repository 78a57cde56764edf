"""Chapter 7's picture of the collectives: what each device holds before
and after each one, a row per device and a cell per chunk.

Every cell has one size in every panel, large enough to read its label on
the page, so a result p times larger shows p times longer. Panels are
placed in rows as wide as the page, each row as many panels as fit: the
all-gather, p times wider than the rest, gets a row of its own.
"""

from __future__ import annotations

from typing import Any, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from helpers.page.plots import BOOK_STYLE

Chunk = tuple[int | None, str]  # (origin device, or None for a sum; label)

WIDTH = 7.5        # inches: the page's figure width
LEFT = 0.9         # inches left of each row, for the "device d" labels
GAP = 0.35         # inches between panels in a row
CELL_HIGH = 0.38   # inches a device's row takes
TITLE = 0.55       # inches above a panel for its two-line title
ROW_GAP = 0.2      # inches between rows of panels
LABEL_SIZE = 12    # points: a chunk's label
SUM = "0.85"       # the grey of a sum over devices


def _rows_of_panels(widths: list[float]) -> list[list[int]]:
    """Panel indices grouped into rows, in order, as many in each row as
    fit in `WIDTH` after `LEFT`."""
    rows: list[list[int]] = [[]]
    used = LEFT
    for i, width in enumerate(widths):
        if rows[-1] and used + GAP + width > WIDTH:
            rows.append([])
            used = LEFT
        used += (GAP if rows[-1] else 0) + width
        rows[-1].append(i)
    return rows


def holdings(panels: dict[str, Sequence[Sequence[Chunk]]]) -> Any:
    """Draw what each device holds at each moment, one panel per moment.

    Args:
        panels: title -> for each device, its chunks as (origin device or
            None for a sum, label), e.g. from
            `helpers.workbook.ch07_multi_gpu.collectives.who_holds_what`.
            A title ``'psum → all-reduce'`` is drawn on two lines.

    Returns:
        The figure; its axes are the panels, in the order given.

    Example:
        >>> fig = holdings({"before": [[(0, "A0")], [(1, "B0")]]})
        >>> [t.get_text() for t in fig.axes[0].texts]
        ['A0', 'B0']
    """
    if not panels or any(not rows for rows in panels.values()):
        raise ValueError("give at least one panel, each with a row of "
                         "chunks per device.")
    devices = len(next(iter(panels.values())))
    cells = [max(len(row) for row in rows) for rows in panels.values()]
    cell_wide = (WIDTH - LEFT - 0.1) / max(cells)
    # a panel is at least `devices` cells wide, so that its title fits
    widths = [max(n, devices) * cell_wide for n in cells]
    layout = _rows_of_panels(widths)
    row_high = TITLE + devices * CELL_HIGH + ROW_GAP
    height = len(layout) * row_high + 0.1
    colors = plt.get_cmap("tab10")
    with mpl.rc_context(BOOK_STYLE):
        fig = plt.figure(figsize=(WIDTH, height))
        items = list(panels.items())
        for r, members in enumerate(layout):
            left = LEFT
            bottom = height - (r + 1) * row_high + ROW_GAP
            for i in members:
                ax = fig.add_axes((left / WIDTH, bottom / height,
                                   widths[i] / WIDTH,
                                   devices * CELL_HIGH / height))
                _panel(ax, *items[i], cells=widths[i] / cell_wide,
                       colors=colors, labelled=i == members[0])
                left += widths[i] + GAP
    return fig


def _panel(ax: Any, title: str, rows: Sequence[Sequence[Chunk]], *,
           cells: float, colors: Any, labelled: bool) -> None:
    """One moment: a row per device, a cell per chunk."""
    for d, row in enumerate(rows):
        for j, (origin, label) in enumerate(row):
            ax.add_patch(Rectangle(
                (j, d), 0.94, 0.88, edgecolor="white",
                facecolor=SUM if origin is None else colors(origin)))
            ax.text(j + 0.47, d + 0.44, label, ha="center", va="center",
                    fontsize=LABEL_SIZE,
                    color="black" if origin is None else "white")
    ax.set(xlim=(0, cells), ylim=(len(rows), 0), xticks=[],
           yticks=[d + 0.44 for d in range(len(rows))])
    ax.set_yticklabels([f"device {d}" for d in range(len(rows))]
                       if labelled else [])
    ax.tick_params(length=0, pad=4)
    ax.set_title(title.replace(" → ", "\n→ "), fontsize=10, loc="left")
    ax.grid(False)
    ax.spines[:].set_visible(False)
