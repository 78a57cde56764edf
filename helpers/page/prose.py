"""Numbers glued into the prose: `glue` a value in a cell, cite it in the
text.

MyST-NB's ``glue`` stores a value in the cell's output; the book's text then
writes ``{glue:text}`name:.1f` `` and shows the number the cell computed, so
a re-run that changes the number changes the prose. On Colab, where MyST-NB
is usually absent, `glue` does nothing: the reader sees the cell outputs.

For the reference GPU, `glue_reference` glues a paragraph computed from
the recording (`helpers.measuring.results.reference`), whatever machine
runs the notebook; `glue_result` glues a computed paragraph, or one
notice saying what it waits for when its numbers are not recorded yet.
"""

from __future__ import annotations

import enum
import importlib.util
import math
from collections.abc import Callable
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


def glue_numbers(numbers: dict[str, Any], **formats: str) -> None:
    """Glue each named entry of ``numbers`` as text in its format
    (`glue_text`), for a written paragraph to cite by the same names.

    Example:
        >>> glue_numbers({"copy_gbps": 3005.0, "hidden": 0.43},
        ...              copy_gbps=".4g", hidden=".0%")
    """
    missing = sorted(set(formats) - set(numbers))
    if missing:
        raise KeyError(f"no numbers named {missing}; there are "
                       f"{sorted(numbers)}")
    for name, fmt in formats.items():
        glue_text(name, numbers[name], fmt)


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


def and_list(items: Any) -> str:
    """Items as a sentence lists them: 'a', 'a and b', 'a, b and c'.

    Example:
        >>> and_list([2, 4, 8])
        '2, 4 and 8'
    """
    words = [str(item) for item in items]
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def counted(counts: dict[str, int]) -> str:
    """A count per name as a sentence says it: ``{'kLoop': 3, 'kInput':
    1}`` -> ``'3 kLoop and 1 kInput'``; ``'none'`` when empty.

    Example:
        >>> counted({"kLoop": 3, "kInput": 1}), counted({})
        ('3 kLoop and 1 kInput', 'none')
    """
    return and_list(f"{n} {name}" for name, n in counts.items()) or "none"


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
    None). See `glue_result` for pasting it. The paragraph names the
    device as the text does after naming it once (``'H100'``).

    Args:
        name: the glue key the chapter pastes.
        reference: a `helpers.measuring.results.Result`
        (``results.reference``).
        paragraph: a function of the recording's data and its device's
            name returning the paragraph, or None.
        will_show: what the paragraph will say once recorded.
        needs: what produces the missing numbers.

    Example:
        >>> from helpers.measuring.results import Result
        >>> missing = Result("01_measuring/x", "missing", None, None)
        >>> text = glue_reference("x", missing, lambda d, g: "never",
        ...                       will_show="The copy rate.")
        >>> "Waiting for a GPU recording" in text
        True
    """
    text = None
    if reference.available:
        text = paragraph(reference.data, reference.short_name)
    return glue_result(name, text, will_show=will_show, needs=needs)
