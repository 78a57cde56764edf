"""Numbers in prose: `glue` a value in a cell, cite it in the text.

MyST-NB's ``glue`` stores a value in the cell's output; the book's text then
writes ``{glue:text}`name:.1f` `` and shows the number the cell computed, so
a re-run that changes the number changes the prose. On Colab, where MyST-NB
is usually absent, `glue` does nothing: the reader sees the cell outputs.
"""

from __future__ import annotations

import importlib.util
from typing import Any


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


def glue_text(name: str, value: Any, fmt: str = ".3g", *,
              missing: str = "(no recording yet)") -> str:
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
