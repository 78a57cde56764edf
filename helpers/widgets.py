"""Interactive views of measured tables, for readers and workshops.

A chapter measures a sweep into a pandas DataFrame (live on a GPU, or the
recorded reference elsewhere). `explore` puts a control on each swept
column (a slider for numbers, toggle buttons for names) and shows the rows
that match the current setting. Nothing is re-measured when a control
moves: the widget reads the table, so it is instant and works from a
recording.
"""

from __future__ import annotations

import html
from typing import Any, Sequence

import pandas as pd


def matching_rows(table: pd.DataFrame, setting: dict[str, Any]
                  ) -> pd.DataFrame:
    """The rows of ``table`` whose columns equal ``setting``'s values."""
    mask = pd.Series(True, index=table.index)
    for column, value in setting.items():
        mask &= table[column] == value
    return table[mask]


def explore(table: pd.DataFrame, controls: Sequence[str],
            show: Sequence[str] | None = None, *, caption: str = "") -> Any:
    """Controls over ``controls`` columns; the matching rows of ``show``.

    Args:
        table: the measured sweep, one row per measurement.
        controls: columns to choose with widgets (e.g. ``["K", "dtype"]``).
        show: columns to display for the chosen rows (default: the rest).
        caption: shown above the table (say where the numbers come from).

    Returns:
        An ipywidgets ``VBox``; the matching table itself when ipywidgets
        is not installed.

    Example:
        >>> explore(sweep, ["K", "dtype"], ["fusion", "ms", "GB/s"])
    """
    if table.empty:
        raise ValueError("explore() needs a table with at least one row.")
    missing = [c for c in [*controls, *(show or [])] if c not in table]
    if missing:
        raise KeyError(f"columns {missing} are not in the table; it has "
                       f"{list(table.columns)}")
    if not controls:
        raise ValueError("name at least one column to control.")
    show = list(show or [c for c in table.columns if c not in controls])
    try:
        import ipywidgets as widgets
    except ImportError:
        return table[[*controls, *show]]

    pickers = {column: _picker(widgets, column, table[column])
               for column in controls}
    view = widgets.HTML()

    def refresh(_: Any = None) -> None:
        setting = {c: p.value for c, p in pickers.items()}
        rows = matching_rows(table, setting)[show]
        body = (rows.to_html(index=False, float_format="{:.4g}".format)
                if len(rows) else "<i>no measurement for this setting</i>")
        view.value = (f"<p>{html.escape(caption)}</p>" if caption else
                      "") + body

    for picker in pickers.values():
        picker.observe(refresh, names="value")
    refresh()
    return widgets.VBox([*pickers.values(), view])


def _picker(widgets: Any, column: str, values: pd.Series) -> Any:
    options = sorted(values.unique().tolist())
    if pd.api.types.is_numeric_dtype(values) and len(options) > 2:
        return widgets.SelectionSlider(options=options, value=options[0],
                                       description=column)
    return widgets.ToggleButtons(options=options, description=column)
