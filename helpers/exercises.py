"""Auto-checked exercises: grade a learner's function, show pass/fail + hints.

An `Exercise` is a list of criteria. Each criterion takes the learner's
function and returns an `Outcome` (pass, fail or skip, with a detail and a
hint). Four kinds cover the book:

* `matches_reference`: the numbers agree with a reference implementation;
* `hlo_fact`: the compiled HLO has a property (a fusion kind, a count),
  read from this machine's module or from the one XLA:GPU compiles for an
  H100;
* `time_below`: on a GPU, the median time is under a target (skipped with
  a stated reason on a CPU);
* `faster_than`: on a GPU, faster than the starter, judged by a rank test
  on interleaved runs (skipped with a stated reason on a CPU).

``exercise.check(fn)`` returns a `Report` that displays as an HTML table in
Jupyter, Colab and the static book, and as plain text in a terminal.
``report.panel()`` is the interactive ipywidgets version with a button that
reveals the hints one at a time.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any, Callable, Sequence

import jax
import numpy as np

from helpers import bench, crosscompile, env, hlo, stats
from helpers.widgets import with_static_view

Criterion = Callable[[Callable[..., Any]], "Outcome"]
_MARK = {"pass": "✅", "fail": "❌", "skip": "⏭️"}


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The result of one criterion.

    Attributes:
        criterion: what was checked, in words.
        status: ``'pass'``, ``'fail'`` or ``'skip'``.
        detail: what was found (numbers, counts, the reason for a skip).
        hint: what to try when it failed.
    """

    criterion: str
    status: str
    detail: str
    hint: str = ""

    def __post_init__(self) -> None:
        if self.status not in _MARK:
            raise ValueError(f"status must be one of {sorted(_MARK)}, got "
                             f"{self.status!r}")


def learner_error(criterion: str, err: Exception, hint: str) -> Outcome:
    """A failed `Outcome` saying what the learner's code raised (its first
    line), with a hint. Criteria call it when the learner's function fails
    instead of letting the exception escape the check."""
    first_line = (str(err).splitlines() or [""])[0]
    return Outcome(criterion, "fail", f"your function raised "
                   f"{type(err).__name__}: {first_line}", hint)


def matches_reference(reference: Callable[..., Any],
                      cases: Sequence[tuple[Any, ...]], *,
                      rtol: float = 1e-5, atol: float = 1e-6,
                      hint: str = "Compare your output with the reference "
                                  "on a small input, element by element."
                      ) -> Criterion:
    """A criterion: ``fn(*case)`` agrees with ``reference(*case)`` for all
    cases, every output leaf within ``rtol``/``atol``.

    Args:
        reference: the correct implementation.
        cases: argument tuples to try (use several, with random data).
        rtol, atol: tolerances for `numpy.allclose`.
        hint: shown when the numbers disagree.
    """
    if not cases:
        raise ValueError("matches_reference needs at least one case.")
    name = "numbers match the reference"

    def criterion(fn: Callable[..., Any]) -> Outcome:
        worst = 0.0
        for i, args in enumerate(cases):
            try:
                got = jax.tree.leaves(fn(*args))
            except Exception as err:  # the learner's code may fail anyhow
                return learner_error(name, err, hint)
            want = jax.tree.leaves(reference(*args))
            if len(got) != len(want):
                return Outcome(name, "fail", f"case {i}: returned "
                               f"{len(got)} arrays, expected {len(want)}",
                               hint)
            for g, w in zip(got, want):
                # Booleans become 0/1 so that differences can be measured.
                g, w = (a.astype(float) if a.dtype == bool else a
                        for a in (np.asarray(g), np.asarray(w)))
                if g.shape != w.shape:
                    return Outcome(name, "fail", f"case {i}: shape "
                                   f"{g.shape}, expected {w.shape}", hint)
                if not np.allclose(g, w, rtol=rtol, atol=atol):
                    err = np.max(np.abs(g - w) / (np.abs(w) + atol))
                    return Outcome(name, "fail", f"case {i}: largest "
                                   f"relative error {err:.2e} (allowed "
                                   f"{rtol:.0e})", hint)
                if w.size:
                    worst = max(worst, float(np.max(
                        np.abs(g - w) / (np.abs(w) + atol))))
        return Outcome(name, "pass", f"{len(cases)} cases agree (largest "
                       f"relative error {worst:.1e})")

    return criterion


def hlo_fact(description: str, predicate: Callable[[str], bool | str],
             args: tuple[Any, ...], *, hint: str = "",
             for_h100: bool = False) -> Criterion:
    """A criterion on the compiled HLO of ``fn(*args)``.

    Args:
        description: the fact in words, e.g. "one kInput fusion".
        predicate: receives the compiled HLO text; returns True when the
            fact holds, or False (or a string saying what was found).
        args: example arguments to compile with (with ``for_h100``,
            ``jax.ShapeDtypeStruct``s of any size will do).
        hint: shown when the fact does not hold.
        for_h100: read the module XLA:GPU compiles for an H100
            (`helpers.crosscompile`, no GPU needed) instead of this
            machine's; skipped, with the reason, where that cannot run.
    """
    def criterion(fn: Callable[..., Any]) -> Outcome:
        if for_h100 and not crosscompile.available():
            return Outcome(description, "skip", "cannot compile for a GPU "
                           "here: " + crosscompile.why_unavailable())
        compiled_text = (crosscompile.compiled_text if for_h100
                         else hlo.compiled_text)
        try:
            text = compiled_text(fn, *args)
        except Exception as err:
            return learner_error(description, err, hint)
        verdict = predicate(text)
        if verdict is True:
            return Outcome(description, "pass", "holds in the compiled HLO")
        found = verdict if isinstance(verdict, str) else "it does not hold"
        return Outcome(description, "fail", found, hint)

    return criterion


def time_below(target_s: float | Callable[[], float],
               args: tuple[Any, ...], *, repeat: int = 20,
               hint: str = "Profile it: where does the time go?"
               ) -> Criterion:
    """A criterion, GPU only: the median time of ``fn(*args)`` is below a
    target (seconds, or a function computing one, e.g. from a reference).
    On a CPU it is skipped, with the reason."""
    description = "runs fast enough on the GPU"

    def criterion(fn: Callable[..., Any]) -> Outcome:
        if not env.on_gpu():
            return Outcome(description, "skip", "no GPU here: the time "
                           "target applies to a GPU only")
        target = target_s() if callable(target_s) else target_s
        try:
            timing = bench.benchmark(jax.jit(fn), *args, repeat=repeat)
        except Exception as err:
            return learner_error(description, err, hint)
        detail = (f"median {bench.format_seconds(timing.median)}, target "
                  f"{bench.format_seconds(target)}")
        status = "pass" if timing.median <= target else "fail"
        return Outcome(description, status, detail,
                       hint if status == "fail" else "")

    return criterion


def faster_than(baseline: Callable[..., Any], args: tuple[Any, ...], *,
                alpha: float = 0.01, repeat: int = 30,
                hint: str = "Count the kernels each version launches."
                ) -> Criterion:
    """A criterion, GPU only: ``fn(*args)`` beats ``baseline(*args)``.

    Both are jitted and timed with their runs interleaved
    (`bench.interleaved`); `stats.compare` must call the learner's version
    faster at ``alpha``. The target is relative, so it holds on any GPU
    without a number recorded on another one. On a CPU it is skipped, with
    the reason.
    """
    description = "faster than the starter on the GPU"

    def criterion(fn: Callable[..., Any]) -> Outcome:
        if not env.on_gpu():
            return Outcome(description, "skip", "no GPU here: the speed "
                           "target applies to a GPU only")
        try:
            timings = bench.interleaved(
                {"yours": jax.jit(fn), "starter": jax.jit(baseline)},
                *args, repeat=repeat)
        except Exception as err:
            return learner_error(description, err, hint)
        result = stats.compare(timings["yours"].times,
                               timings["starter"].times, alpha=alpha)
        detail = (f"median {bench.format_seconds(result.median_a)} vs the "
                  f"starter's {bench.format_seconds(result.median_b)} "
                  f"(p = {result.p_value:.2g})")
        if result.verdict == "a faster":
            return Outcome(description, "pass", detail)
        return Outcome(description, "fail", detail, hint)

    return criterion


@dataclasses.dataclass(frozen=True)
class Report:
    """What `Exercise.check` found.

    Attributes:
        title: the exercise.
        outcomes: one per criterion.
        hints: the exercise's progressive hints, mildest first.
    """

    title: str
    outcomes: tuple[Outcome, ...]
    hints: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """True when no criterion failed and at least one passed."""
        statuses = [o.status for o in self.outcomes]
        return "fail" not in statuses and "pass" in statuses

    def failed_hints(self) -> list[str]:
        """The hints of the failed criteria, then the exercise's hints."""
        own = [o.hint for o in self.outcomes if o.status == "fail" and o.hint]
        return own + list(self.hints) if not self.passed else []

    def text(self) -> str:
        """The report as plain text."""
        verdict = "PASSED" if self.passed else "NOT YET"
        lines = [f"{self.title}: {verdict}"]
        lines += [f"  [{o.status}] {o.criterion}: {o.detail}"
                  for o in self.outcomes]
        lines += [f"  hint {i}: {h}"
                  for i, h in enumerate(self.failed_hints(), 1)]
        return "\n".join(lines)

    def html(self) -> str:
        """The report as HTML; hints fold away in <details> elements."""
        colour = "#1a7f37" if self.passed else "#b35900"
        verdict = "passed" if self.passed else "not yet"
        rows = "".join(
            f"<tr><td>{_MARK[o.status]}</td><td>{html.escape(o.criterion)}"
            f"</td><td>{html.escape(o.detail)}</td></tr>"
            for o in self.outcomes)
        hints = "".join(
            f"<details><summary>Hint {i}</summary>{html.escape(h)}"
            "</details>" for i, h in enumerate(self.failed_hints(), 1))
        return (f"<div><b>{html.escape(self.title)}</b>: "
                f"<b style='color:{colour}'>{verdict}</b>"
                f"<table>{rows}</table>{hints}</div>")

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
                            self.html().split("<details>")[0])
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


@dataclasses.dataclass(frozen=True)
class Exercise:
    """An exercise: a title, criteria, and progressive hints.

    Example:
        >>> ex = Exercise("Double it", [matches_reference(
        ...     lambda x: 2 * x, [(np.arange(3.0),)])])
        >>> ex.check(lambda x: x + x).passed
        True
    """

    title: str
    criteria: Sequence[Criterion]
    hints: Sequence[str] = ()

    def check(self, fn: Callable[..., Any]) -> Report:
        """Grade ``fn`` against every criterion."""
        if not callable(fn):
            raise TypeError(f"{self.title}: pass your function itself to "
                            f"check(), not a {type(fn).__name__}.")
        if not self.criteria:
            raise ValueError(f"{self.title} has no criteria to check.")
        outcomes = tuple(criterion(fn) for criterion in self.criteria)
        return Report(self.title, outcomes, tuple(self.hints))
