"""Interactive views of measured tables, for readers and workshops.

A chapter measures a sweep into a pandas DataFrame (live on a GPU, or the
recorded reference elsewhere). `explore` puts a control on each swept
column (a slider for numbers, toggle buttons for names) and shows the rows
that match the current setting. Nothing is re-measured when a control
moves: the widget reads the table, so it is instant and works from a
recording.

A widget needs a running kernel behind its controls, which the static
book does not have. `with_static_view` gives a widget a plain HTML
rendering for that case: Jupyter, Colab and VS Code draw the live widget,
and the book (whose ``_config.yml`` ranks HTML above the widget view) draws
the HTML, so a reader never sees an empty box or a slider that does
nothing.
"""

from __future__ import annotations

import html
from typing import Any, Sequence

import pandas as pd

from helpers.page.tables import number

# A static page folds a whole table away only when it is short enough to
# read; a bigger grid is left to the live widget.
MAX_FOLDED_ROWS = 200


def matching_rows(table: pd.DataFrame, setting: dict[str, Any]
                  ) -> pd.DataFrame:
    """The rows of ``table`` whose columns equal ``setting``'s values."""
    mask = pd.Series(True, index=table.index)
    for column, value in setting.items():
        mask &= table[column] == value
    return table[mask]


def explore(table: pd.DataFrame, controls: Sequence[str],
            show: Sequence[str] | None = None, *, caption: str = "",
            start: dict[str, Any] | None = None) -> Any:
    """Controls over ``controls`` columns; the matching rows of ``show``.

    Args:
        table: the measured sweep, one row per measurement.
        controls: columns to choose with widgets (e.g. ``["K", "dtype"]``).
        show: columns to display for the chosen rows (default: the rest).
        caption: shown above the table (say where the numbers come from).
        start: the setting shown first, by control (default: each
            control's smallest value); the static book shows this one.

    Returns:
        An ipywidgets ``VBox`` (in the static book: the default setting's
        rows, and every row under a fold); the matching table itself when
        ipywidgets is not installed.

    Example:
        >>> sweep = pd.DataFrame({"K": [25, 25, 32, 32],
        ...                       "dtype": ["f32", "f64"] * 2,
        ...                       "ms": [1.9, 3.1, 0.8, 1.5]})
        >>> type(explore(sweep, ["K", "dtype"], ["ms"])).__name__
        'VBox'
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
    for column, value in (start or {}).items():
        if column not in pickers:
            raise KeyError(f"start names {column!r}, which is not a "
                           f"control; the controls are {list(pickers)}")
        if value not in pickers[column].options:
            raise ValueError(f"start sets {column} to {value!r}, which is "
                             f"not in the table; choose one of "
                             f"{list(pickers[column].options)}")
        pickers[column].value = value
    view = widgets.HTML()

    def refresh(_: Any = None) -> None:
        setting = {c: p.value for c, p in pickers.items()}
        rows = matching_rows(table, setting)[show]
        body = (rows.to_html(index=False, float_format=number)
                if len(rows) else "<i>no measurement for this setting</i>")
        view.value = (f"<p>{html.escape(caption)}</p>" if caption else
                      "") + body

    for picker in pickers.values():
        picker.observe(refresh, names="value")
    refresh()
    box = widgets.VBox([*pickers.values(), view])
    return with_static_view(box, _static_table(table, pickers, show,
                                               view.value))


def with_static_view(widget: Any, static_html: str) -> Any:
    """``widget``, carrying ``static_html`` for places with no kernel.

    The widget's display bundle gets a ``text/html`` entry beside its
    widget view. Live front ends prefer the widget view; the static book
    renders the HTML. Returns the same widget, so calls can be chained.

    Works with ipywidgets 8 (a widget gives IPython its bundle,
    ``_repr_mimebundle_``) and 7, which Colab has long shipped (a widget
    displays itself, ``_ipython_display_``).
    """
    if not hasattr(widget, "_repr_mimebundle_"):
        return _with_static_view_7(widget, static_html)
    live_bundle = widget._repr_mimebundle_

    def bundle(**kwargs: Any) -> dict[str, Any]:
        return {**live_bundle(**kwargs), "text/html": static_html}

    # An instance attribute: IPython looks the method up on the object.
    widget._repr_mimebundle_ = bundle
    return widget


def _with_static_view_7(widget: Any, static_html: str) -> Any:
    """`with_static_view` for ipywidgets 7: the widget's own display (its
    ``_ipython_display_``, as ipywidgets 7.7 writes it) with the HTML
    added to the bundle it publishes."""
    from IPython.display import display

    def show(**kwargs: Any) -> None:
        data = {"text/plain": repr(widget)[:110], "text/html": static_html,
                "application/vnd.jupyter.widget-view+json": {
                    "version_major": 2, "version_minor": 0,
                    "model_id": widget._model_id}}
        display(data, raw=True)
        widget._handle_displayed(**kwargs)

    widget._ipython_display_ = show
    return widget


def _static_table(table: pd.DataFrame, pickers: dict[str, Any],
                  show: Sequence[str], default_view: str) -> str:
    """The default setting as HTML, the controls named, and every row
    under a fold when there are few enough to read."""
    choices = "; ".join(
        f"<b>{html.escape(c)}</b>: "
        + ", ".join(html.escape(str(o)) for o in p.options)
        + f" (shown: {html.escape(str(p.value))})"
        for c, p in pickers.items())
    if len(table) <= MAX_FOLDED_ROWS:
        every_row = table[[*pickers, *show]].to_html(
            index=False, float_format=number)
        rest = (f"<details><summary>All {len(table)} rows</summary>"
                f"{every_row}</details>")
    else:  # too many to read: the first of them, the rest live
        first = table[[*pickers, *show]].head(MAX_FOLDED_ROWS).to_html(
            index=False, float_format=number)
        rest = (f"<details><summary>The first {MAX_FOLDED_ROWS} of "
                f"{len(table)} rows</summary>{first}</details>")
    return (f"<div>{default_view}<p><i>Settings</i> (each a control in "
            f"Jupyter or Colab): {choices}.</p>{rest}</div>")


def _picker(widgets: Any, column: str, values: pd.Series) -> Any:
    options = sorted(values.unique().tolist())
    if pd.api.types.is_numeric_dtype(values) and len(options) > 2:
        return widgets.SelectionSlider(options=options, value=options[0],
                                       description=column)
    return widgets.ToggleButtons(options=options, description=column)
