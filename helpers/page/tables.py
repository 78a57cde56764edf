"""Tables and code as the page shows them.

`tidy_display` makes every DataFrame print rounded (`number`) and without
a meaningless index (`tidy`); `show_code` shows a helper's source
highlighted, for the text to discuss.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # imported where used: pandas' Styler needs jinja2
    from IPython.display import Code
    from pandas.io.formats.style import Styler


# What a table cell shows for a value that does not exist here.
MISSING_CELL = "—"


def number(value: Any) -> str:
    """A number as a table shows it: three significant figures, plain
    between 0.001 and a million (whole numbers without decimals),
    scientific outside; a missing value (None, NaN) as a dash.

    A list or tuple (the custom calls of a module, say) reads as its items
    joined by commas, and as "none" when empty; a truth value as "yes" or
    "no".

    Example:
        >>> [number(v) for v in (1651.23, 18.75, 0.000285, 2.0e-7, 3, True)]
        ['1651', '18.8', '0.000285', '2e-07', '3', 'yes']
        >>> [number(v) for v in (None, float("nan"), [], ["a", "b"])]
        ['—', '—', 'none', 'a, b']
    """
    if value is None:
        return MISSING_CELL
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, str)):
        return str(value)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(value):
        return MISSING_CELL
    if value == 0 or not math.isfinite(value):
        return format(value, "g")
    if not 1e-3 <= abs(value) < 1e6:
        return format(value, ".3g")
    if value.is_integer():  # a count stored as a float: 56.0 reads 56
        return str(int(value))
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return format(value, f".{decimals}f")


def tidy(frame: pd.DataFrame) -> Styler:
    """A DataFrame styled for the page: numbers rounded by `number`, and
    no 0..n-1 index column when the rows have no names of their own.

    Example:
        >>> styled = tidy(pd.DataFrame({"ms": [1.23456, 20.5]}))
        >>> "1.23" in styled.to_html() and "1.23456" not in styled.to_html()
        True
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"tidy takes a pandas DataFrame, got "
                        f"{type(frame).__name__}.")
    # escape="html": a cell's "<" or "&" is text, not markup
    styled = frame.style.format(number, escape="html")
    if _unnamed_rows(frame.index):
        styled = styled.hide(axis="index")
    return styled


def counts(frame: pd.DataFrame) -> Styler:
    """`tidy` for a table of counts (bytes, operations): every value a
    whole number with thousands separators, so that a count stored as an
    int and one stored as a float read alike.

    Example:
        >>> html = counts(pd.DataFrame({"bytes": [8388608, 2.147483648e9]}))
        >>> "8,388,608" in html.to_html() and "2,147,483,648" in html.to_html()
        True
    """
    def whole(value: Any) -> str:
        shown = number(value)
        return shown if shown == MISSING_CELL else f"{float(value):,.0f}"

    return tidy(frame).format(whole)


def per_group(frame: pd.DataFrame) -> list[Styler]:
    """One `tidy` table per value of ``frame``'s first index level,
    captioned with it and indexed by the rest: a table whose first column
    repeats a long name reads narrower as several.

    Example:
        >>> frame = pd.DataFrame({"ms": [1.0, 2.0, 3.0]}, index=pd.MultiIndex
        ...     .from_tuples([("a", "x"), ("a", "y"), ("b", "x")]))
        >>> [t.caption for t in per_group(frame)]
        ['a', 'b']
    """
    if frame.index.nlevels < 2:
        raise ValueError("per_group splits a table by its first index "
                         "level and needs at least two; this one has "
                         f"{frame.index.nlevels}.")
    first = frame.index.get_level_values(0)
    return [tidy(frame[first == group].droplevel(0)).set_caption(str(group))
            for group in first.unique()]


def _unnamed_rows(index: pd.Index) -> bool:
    """True for the default 0, 1, ..., n-1 index, which means nothing."""
    return (isinstance(index, pd.RangeIndex) and index.start == 0
            and index.step == 1 and index.name is None)


def tidy_display() -> bool:
    """Show every DataFrame of this notebook through `tidy`.

    Called by each chapter's setup cell. Outside IPython (a script, a test)
    it changes nothing and returns False. DataFrames longer than pandas'
    ``display.max_rows`` keep pandas' own shortened view.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False

    def as_html(frame: pd.DataFrame) -> str:
        if len(frame) > pd.get_option("display.max_rows"):
            return frame._repr_html_()
        return tidy(frame).to_html()

    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame,
                                                            as_html)
    return True


def show_code(*functions: Callable[..., Any]) -> Code | FoldedCode:
    """The source of public functions of `helpers`, highlighted, for the
    text to discuss: shown whole up to `SHOWN_LINES` lines, folded under a
    title beyond (a `FoldedCode`).

    Raises:
        ValueError: for a private function (its name starts with ``_``):
            the book shows only what a reader may call.

    Example:
        >>> show_code(number).data.splitlines()[0]
        'def number(value: Any) -> str:'
    """
    if not functions:
        raise TypeError("show_code takes one or more functions to show.")
    for function in functions:
        name = getattr(function, "__name__", None)
        if name is None or not callable(function):
            raise TypeError(f"show_code takes functions or classes, got "
                            f"{type(function).__name__}.")
        if name.startswith("_"):
            raise ValueError(f"{name} is private: show only functions a "
                             "reader may call, or make it public first.")
    from IPython.display import Code

    source = "\n\n".join(inspect.getsource(f).rstrip() for f in functions)
    code = Code(source, language="python")
    lines = source.count("\n") + 1
    if lines <= SHOWN_LINES:
        return code
    names = ", ".join(f"`{f.__name__}`" for f in functions)
    return FoldedCode(f"The source of {names} ({lines} lines): open to "
                      "read it", code)


# A listing longer than this is folded under a title: the page shows only
# teaching code of a readable length, and the rest on a click.
SHOWN_LINES = 15


class FoldedCode:
    """Highlighted source folded under a title (`show_code` for a long
    listing); ``data`` is the source, as `IPython.display.Code`'s is.

    Example:
        >>> from IPython.display import Code
        >>> folded = FoldedCode("The source of `f`", Code("x = 1"))
        >>> folded.data, "<summary>The source of <code>f</code>" in (
        ...     folded._repr_html_())
        ('x = 1', True)
    """

    def __init__(self, title: str, code: Any) -> None:
        self.title, self.code, self.data = title, code, code.data

    def _repr_html_(self) -> str:
        import html
        import re
        # a name in backticks reads as code, as it would in the prose
        title = re.sub(r"`([^`]+)`", r"<code>\1</code>",
                       html.escape(self.title))
        return (f"<details><summary>{title}</summary>"
                f"{self.code._repr_html_()}</details>")

    def __repr__(self) -> str:
        return f"{self.title}\n{self.data}"


class Folded:
    """Text folded away under a title that says what to look for: the
    page shows the title and opens the text on a click; a terminal
    prints both.

    Example:
        >>> "<details>" in Folded("the raw diff", "a\\nb")._repr_html_()
        True
    """

    def __init__(self, title: str, text: str) -> None:
        self.title, self.text = title, text

    def _repr_html_(self) -> str:
        import html
        return (f"<details><summary>{html.escape(self.title)}</summary>"
                f"<pre>{html.escape(self.text)}</pre></details>")

    def __repr__(self) -> str:
        return f"{self.title}\n{self.text}"
