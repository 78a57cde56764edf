"""What the page shows: numbers glued into prose, tidy tables, code.

`glue` a value in a cell, cite it in the text.

MyST-NB's ``glue`` stores a value in the cell's output; the book's text then
writes ``{glue:text}`name:.1f` `` and shows the number the cell computed, so
a re-run that changes the number changes the prose. On Colab, where MyST-NB
is usually absent, `glue` does nothing: the reader sees the cell outputs.

`tidy_display` makes every DataFrame print rounded and without a
meaningless index; `show_code` shows a helper's source highlighted.
"""

from __future__ import annotations

import enum
import importlib.util
import inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:  # imported where used: pandas' Styler needs jinja2
    from IPython.display import Code
    from pandas.io.formats.style import Styler


def glue(name: str, value: Any) -> Any:
    """Store ``value`` for the prose under ``name`` and return it.

    Args:
        name: the key the text cites, e.g. ``'enqueue_us'``.
        value: a number or string (numpy scalars become Python numbers).

    Example:
        >>> ratio = glue("speedup", 3.2)
    """
    if not name.replace("_", "").isalnum():
        raise ValueError(f"glue name {name!r} must be letters, digits and "
                         "'_' so the text can cite it.")
    if hasattr(value, "item"):
        value = value.item()
    if importlib.util.find_spec("myst_nb") is not None:
        from myst_nb import glue as myst_glue

        myst_glue(name, value, display=False)
    return value


# What `glue_text` writes where a recorded number is missing; the goals
# table and the browser test look for it.
MISSING = "(no recording yet)"


def glue_text(name: str, value: Any, fmt: str = ".3g", *,
              missing: str = MISSING) -> str:
    """Glue ``value`` formatted as text, or ``missing`` when it is None.

    For numbers that exist only on some machines (a GPU measurement, a
    recording not yet made): the prose cites ``{glue:text}`name` `` and
    reads the number, or says plainly that there is none.

    Example:
        >>> glue_text("k25_ms", None)
        '(no recording yet)'
    """
    text = missing if value is None else format(value, fmt)
    glue(name, text)
    return text


def glue_markdown(name: str, text: str) -> str:
    """Glue a sentence that carries its own markup (code names in
    backticks), for the prose to cite as ``{glue:md}`name` ``.

    Example:
        >>> glue_markdown("story", "The pass `dce` merged them.")
        'The pass `dce` merged them.'
    """
    if not isinstance(text, str):
        raise TypeError(f"glue_markdown takes a str, got "
                        f"{type(text).__name__}; use glue_text for numbers.")
    if importlib.util.find_spec("myst_nb") is not None:
        from IPython.display import Markdown
        glue(name, Markdown(text))
    elif not name.replace("_", "").isalnum():
        raise ValueError(f"glue name {name!r} must be letters, digits and "
                         "'_' so the text can cite it.")
    return text


# What a table cell shows for a value that does not exist here.
MISSING_CELL = "—"


def number(value: Any) -> str:
    """A number as a table shows it: three significant figures, plain
    between 0.001 and a million (whole numbers without decimals),
    scientific outside; a missing value (None, NaN) as a dash.

    Example:
        >>> [number(v) for v in (1651.23, 18.75, 0.000285, 2.0e-7, 3, True)]
        ['1651', '18.8', '0.000285', '2e-07', '3', 'True']
        >>> [number(v) for v in (None, float("nan"))]
        ['—', '—']
    """
    if value is None:
        return MISSING_CELL
    if isinstance(value, (bool, int, str)):
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
    styled = frame.style.format(number)
    if _unnamed_rows(frame.index):
        styled = styled.hide(axis="index")
    return styled


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


def show_code(*functions: Callable[..., Any]) -> Code:
    """The source of public functions of `helpers`, highlighted, for the
    text to discuss.

    Raises:
        ValueError: for a private function (its name starts with ``_``):
            the book shows only what a reader may call.

    Example:
        >>> show_code(glue).data.splitlines()[0]
        'def glue(name: str, value: Any) -> Any:'
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
    return Code(source, language="python")


class Needs(enum.Enum):
    """What a result that is not on the page waits for, and how to get it.

    Each member is the notice's title and the sentence saying what
    produces the result.
    """

    GPU_RECORDING = ("Waiting for a GPU recording",
                     "`make record` on a machine with a CUDA GPU records it "
                     "(see the Reproducibility chapter).")
    GPU_COMPILER = ("Waiting for XLA:GPU's compiler",
                    "`make cross` installs it on x86-64 Linux (JAX's CUDA "
                    "plugin, in a side folder); no GPU is needed.")

    @property
    def title(self) -> str:
        return self.value[0]

    @property
    def remedy(self) -> str:
        return self.value[1]


WAITING_TITLE = Needs.GPU_RECORDING.title


def fill(template: str, **values: Any) -> str | None:
    """``template`` with ``values`` put in (`str.format`), or None when any
    value is None or NaN (pandas' missing value): the paragraph needs a
    number that does not exist here.

    Hand the result to `glue_result`. Braces meant for MyST (a role such as
    ``{cite}``) are doubled in the template.

    Example:
        >>> fill("K = 25 took {ratio:.1f}x as long.", ratio=3.04)
        'K = 25 took 3.0x as long.'
        >>> fill("K = 25 took {ratio:.1f}x as long.", ratio=None) is None
        True
    """
    if any(_missing(value) for value in values.values()):
        return None
    try:
        return template.format(**values)
    except KeyError as missing:
        raise KeyError(f"the template names {missing} but fill was not "
                       f"given it; pass {missing.args[0]}=...") from None


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def glue_result(name: str, text: str | None, *, will_show: str,
                needs: Needs = Needs.GPU_RECORDING) -> str:
    """Glue a paragraph that states a result recorded on the reference GPU
    (or compiled for it), or, without it, one notice saying what it will
    show.

    The chapter pastes the block where the paragraph goes::

        ```{glue:md} name
        :format: myst
        ```

    so a reader sees either the finished sentence or the notice, never a
    sentence with blanks in it.

    Args:
        name: the glue key the chapter pastes.
        text: the paragraph, numbers filled in (MyST markup allowed; see
            `fill`), or None when a number it needs is missing.
        will_show: what the paragraph will say once recorded, in a
            sentence (``"How long the whole call takes ..."``).
        needs: what produces the missing numbers (a `Needs`).

    Example:
        >>> notice = glue_result("gpu_wall", None,
        ...                      will_show="Which version is faster.")
        >>> print(notice.splitlines()[0])
        :::{admonition} Waiting for a GPU recording
        >>> "Which version is faster. `make record`" in notice
        True
    """
    if not will_show.strip():
        raise ValueError("will_show must say what the result will show, "
                         "so the notice is not empty.")
    if not isinstance(needs, Needs):
        raise TypeError(f"needs must be a book.Needs member (e.g. "
                        f"Needs.GPU_COMPILER), got {needs!r}.")
    if text is None:
        text = (f":::{{admonition}} {needs.title}\n:class: note\n"
                f"{will_show.strip()} {needs.remedy}\n:::")
    return glue_markdown(name, text)


def glue_reference(name: str, reference: Any,
                   paragraph: Callable[[Any, str], str | None], *,
                   will_show: str, needs: Needs = Needs.GPU_RECORDING
                   ) -> str:
    """Glue the paragraph ``paragraph(data, device)`` writes from the
    reference GPU's recording, or one notice when there is no recording
    (or it lacks a number the paragraph needs: ``paragraph`` returned
    None). See `glue_result` for pasting it.

    Args:
        name: the glue key the chapter pastes.
        reference: a `helpers.recorded.Result` (``recorded.reference``).
        paragraph: a function of the recording's data and its device's
            name returning the paragraph, or None.
        will_show: what the paragraph will say once recorded.
        needs: what produces the missing numbers.

    Example:
        >>> from helpers.recorded import Result
        >>> missing = Result("01_measuring/x", "missing", None, None)
        >>> text = glue_reference("x", missing, lambda d, g: "never",
        ...                       will_show="The copy rate.")
        >>> "Waiting for a GPU recording" in text
        True
    """
    text = None
    if reference.available:
        text = paragraph(reference.data, reference.device)
    return glue_result(name, text, will_show=will_show, needs=needs)
