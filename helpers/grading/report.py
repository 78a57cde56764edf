"""What a check found: one `Outcome` per criterion, gathered in a `Report`.

An outcome passes, fails, or is not graded here (``'skip'``): a criterion
that needs a GPU, or four of them, says what it needs instead of passing.
A report is *passed* only when every criterion was graded and passed; one
whose graded criteria all passed but that skipped some is *passed where
graded*, and the workshop dashboard counts it apart.

A report displays as an HTML table in Jupyter, Colab and the static book,
and as plain text in a terminal; ``report.panel()`` is the ipywidgets
version with a button that reveals the hints one at a time.
"""

from __future__ import annotations

import dataclasses
import html
import traceback
from typing import Any, Literal

from helpers.page.tables import Folded
from helpers.page.widgets import with_static_view

# How each status reads in HTML: words in colour, which every font shows
# (emoji marks come out as empty boxes where no emoji font is installed).
_MARK = {"pass": "<b style='color:#1a7f37'>pass</b>",
         "fail": "<b style='color:#b35900'>fail</b>",
         "skip": "<b style='color:#57606a'>not graded here</b>"}
# A report's status, from its outcomes.
PASSED, NOT_YET = "passed", "not yet"
PASSED_WHERE_GRADED, NOT_GRADED = "passed where graded", "not graded here"
STATUSES = (PASSED, NOT_YET, PASSED_WHERE_GRADED, NOT_GRADED)

# What one criterion found: passed, failed, or not graded here.
Status = Literal["pass", "fail", "skip"]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The result of one criterion.

    Attributes:
        criterion: what was checked, in words.
        status: ``'pass'``, ``'fail'`` or ``'skip'`` (not graded here).
        detail: what was found (numbers, counts, what a skip needs).
        hint: what to try when it failed.
        error: the full text of an exception the learner's code raised
            (shown folded), or ``''``.
    """

    criterion: str
    status: Status
    detail: str
    hint: str = ""
    error: str = ""

    def __post_init__(self) -> None:
        if self.status not in _MARK:
            raise ValueError(f"status must be one of {sorted(_MARK)}, got "
                             f"{self.status!r}")


TRACED_VALUE_HINT = ("Compiled code sees arrays without their values: "
                     "return a JAX array instead of float(), int() or "
                     ".item(), and use jnp.where or lax.cond instead of an "
                     "if on a value.")


NAME_HINT = ("`{name}` is not defined where your function runs: import it "
             "in the cell above (the chapter's imports cell has it), or "
             "define it there, and run the check again.")


def learner_error(criterion: str, err: BaseException, hint: str = ""
                  ) -> Outcome:
    """A failed `Outcome` for an exception the learner's code raised: its
    first line in the detail, the whole traceback kept in ``error``.
    Criteria call it rather than let the exception escape the check.

    A traced value turned into a Python one (``float(x)``, ``if x > 0``,
    ``.item()``) gets that said first, before the criterion's hint, which
    may be about something else: the fix is always the same. A name the
    function uses but cannot find (``NameError``: an answer pasted without
    its imports) gets only that said: the criterion's hint would mislead."""
    first_line = (str(err).splitlines() or [""])[0]
    if isinstance(err, NameError):  # the criterion's hint is about else
        hint = NAME_HINT.format(name=getattr(err, "name", None) or
                                "the name")
    elif _is_tracer_conversion(err):
        hint = " ".join(part for part in (TRACED_VALUE_HINT, hint) if part)
    return Outcome(criterion, "fail", f"your function raised "
                   f"{type(err).__name__}: {first_line}", hint,
                   error=short_paths("".join(
                       traceback.format_exception(err))))


def short_paths(text: str) -> str:
    """A traceback without the reader's own folders: a file of the book's
    checkout reads ``./helpers/...``, a file of the Python installation
    ``site-packages/jax/...``, so a report reads the same on every
    machine and shows no one's home directory.

    Example:
        >>> import sysconfig
        >>> where = sysconfig.get_paths()["purelib"]
        >>> short_paths(f'File "{where}/jax/_src/api.py", line 1')
        'File "site-packages/jax/_src/api.py", line 1'
    """
    import os
    import sysconfig

    from helpers.measuring import machine
    folders = {sysconfig.get_paths()[key]: "site-packages"
               for key in ("purelib", "platlib")}
    folders[machine.repo_root()] = "."  # after the .venv inside it
    for folder, short in folders.items():
        text = text.replace(folder.rstrip(os.sep) + os.sep, short + "/")
    return text


def _is_tracer_conversion(err: BaseException) -> bool:
    """True for JAX's errors on turning a traced array into a Python
    value (ConcretizationTypeError and the conversion errors beside it),
    raised directly or as the cause of a clearer one
    (`helpers.xla.hlo.compiled` re-raises them as a TypeError)."""
    import jax
    kinds = tuple(getattr(jax.errors, name) for name in (
        "ConcretizationTypeError", "TracerArrayConversionError",
        "TracerBoolConversionError", "TracerIntegerConversionError")
        if hasattr(jax.errors, name))
    link: BaseException | None = err
    while link is not None:
        if isinstance(link, kinds):
            return True
        link = link.__cause__ or link.__context__
    return False


def not_graded(criterion: str, needs: str) -> Outcome:
    """A skipped `Outcome`: ``criterion`` cannot be graded on this machine
    because it ``needs`` something (``'a GPU'``, ``'four GPUs'``)."""
    return Outcome(criterion, "skip", f"not graded here: needs {needs}")


@dataclasses.dataclass(frozen=True)
class Report:
    """What `helpers.grading.exercises.Exercise.check` found.

    Attributes:
        title: the exercise.
        outcomes: one per criterion.
        hints: the exercise's progressive hints, mildest first.
    """

    title: str
    outcomes: tuple[Outcome, ...]
    hints: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        """``'passed'`` (every criterion graded and passed), ``'not yet'``
        (one failed), ``'passed where graded'`` (none failed, some could
        not be graded here) or ``'not graded here'`` (none could be)."""
        statuses = {o.status for o in self.outcomes}
        if "fail" in statuses or not statuses:
            return NOT_YET
        if "skip" not in statuses:
            return PASSED
        return PASSED_WHERE_GRADED if "pass" in statuses else NOT_GRADED

    @property
    def passed(self) -> bool:
        """True only when every criterion was graded here and passed."""
        return self.status == PASSED

    @property
    def failed(self) -> bool:
        """True when a criterion failed."""
        return self.status == NOT_YET

    def failed_hints(self) -> list[str]:
        """The hints of the failed criteria, then the exercise's hints
        (none when nothing failed)."""
        if not self.failed:
            return []
        own = [o.hint for o in self.outcomes if o.status == "fail" and o.hint]
        return list(dict.fromkeys(own + list(self.hints)))

    def text(self) -> str:
        """The report as plain text."""
        lines = [f"{self.title}: {self.status.upper()}"]
        for i, o in enumerate(self.outcomes):
            lines.append(f"  [{o.status}] {o.criterion}: {o.detail}")
            if o.error:  # folded away in HTML; named here, not dumped
                lines.append(f"    the full error: "
                             f"print(report.outcomes[{i}].error)")
        lines += [f"  hint {i}: {h}"
                  for i, h in enumerate(self.failed_hints(), 1)]
        return "\n".join(lines)

    def html(self) -> str:
        """The report as HTML; errors and hints fold away in <details>."""
        colour = {PASSED: "#1a7f37", NOT_YET: "#b35900"}.get(self.status,
                                                             "#57606a")
        # a list, not a table: a criterion and its detail read at any
        # width, however long the detail (an error's first line can be)
        items = "".join(
            f"<li>{_MARK[o.status]} <b>{html.escape(o.criterion)}</b>: "
            f"{html.escape(o.detail)}{_folded_error(o)}</li>"
            for o in self.outcomes)
        hints = "".join(
            f"<details><summary>Hint {i}</summary>{html.escape(h)}"
            "</details>" for i, h in enumerate(self.failed_hints(), 1))
        return (f"<div><b>{html.escape(self.title)}</b>: "
                f"<b style='color:{colour}'>{self.status}</b>"
                f"<ul style='list-style: none; padding-left: 0'>{items}</ul>"
                f"{hints}</div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None
                          ) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __str__(self) -> str:
        return self.text()

    def panel(self) -> Any:
        """An ipywidgets panel: the report, and a button revealing hints
        one at a time (the static book draws `html`). Falls back to the
        Report itself without ipywidgets.
        """
        try:
            import ipywidgets as widgets
        except ImportError:
            return self
        hints = self.failed_hints()
        body = widgets.HTML(self.html() if not hints else
                            self.html().split("<details><summary>Hint")[0])
        shown = widgets.HTML("")
        button = widgets.Button(description="Show a hint",
                                disabled=not hints)
        state = {"n": 0}

        def reveal(_: Any) -> None:
            state["n"] += 1
            shown.value = "<br>".join(
                f"<b>Hint {i}</b>: {html.escape(h)}"
                for i, h in enumerate(hints[:state["n"]], 1))
            button.disabled = state["n"] >= len(hints)

        button.on_click(reveal)
        # Without a kernel the button could not reveal anything: the
        # static book shows the report with its hints folded instead.
        return with_static_view(widgets.VBox([body, button, shown]),
                                self.html())


def _folded_error(outcome: Outcome) -> str:
    if not outcome.error:
        return ""
    return Folded("Full error", outcome.error)._repr_html_()
