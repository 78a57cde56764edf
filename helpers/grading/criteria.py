"""The kinds of criterion the book's exercises are built from.

A criterion takes the learner's function and returns an `Outcome`. Five
kinds cover most of the book:

* `matches_reference`: the numbers agree with a reference implementation,
  on several inputs, whatever natural form the answer takes
  (`helpers.grading.answer_forms.leaves`);
* `hlo_fact`: the compiled HLO has a property (a fusion kind, a count),
  read from this machine's module or from the one XLA:GPU compiles for an
  H100;
* `time_below`: on a GPU, the median time is under a target;
* `faster_than`: on a GPU, faster than the starter, judged by a rank test
  on interleaved runs;
* `as_fast_as`: on a GPU, no more than a margin slower than the starter
  by device time (a fix that changes how a kernel is emitted).

A criterion that cannot run on this machine is *not graded here* and says
what it needs. Each criterion carries its ``description`` so that a check
can name it even when grading it fails unexpectedly.
"""

from __future__ import annotations

import copy
import functools
import traceback
from collections.abc import Mapping
from typing import Any, Callable, Sequence

import jax
import numpy as np

from helpers.grading.answer_forms import (
    WrongAnswer,
    as_mapping,
    computes_nothing,
    leaves,
)
from helpers.grading.report import Outcome, learner_error, not_graded
from helpers.measuring import bench, machine
from helpers.xla import crosscompile, gpu_export, hlo

Criterion = Callable[[Callable[..., Any]], Outcome]


def described(description: str) -> Callable[[Criterion], Criterion]:
    """Decorator: attach ``description`` (the criterion in words) to a
    criterion function, for reports of a criterion that breaks."""
    def attach(criterion: Criterion) -> Criterion:
        criterion.description = description  # type: ignore[attr-defined]
        return criterion
    return attach


def description_of(criterion: Criterion) -> str:
    """The criterion in words: its ``description``, else its name."""
    return getattr(criterion, "description", None) or \
        criterion.__name__.strip("_").replace("_", " ")


def on_first_use(value: Any) -> Callable[[], Any]:
    """A function returning ``value``; or, when ``value`` is itself a
    function, its result, computed once on first use. Test data that costs
    a compilation is then made when a check first needs it, not when the
    chapter imports the exercise."""
    if callable(value):
        return functools.cache(value)
    return lambda: value


def matches_reference(reference: Callable[..., Any],
                      cases: Sequence[tuple[Any, ...]]
                      | Callable[[], Sequence[tuple[Any, ...]]], *,
                      rtol: float = 1e-5, atol: float = 1e-6,
                      hint: str = "Compare your output with the reference "
                                  "on a small input, element by element."
                      ) -> Criterion:
    """A criterion: ``fn(*case)`` agrees with ``reference(*case)`` for all
    cases, every output array within ``rtol``/``atol``.

    Answers are compared in their natural forms: a list of booleans and a
    boolean array agree, as do a dict and a pandas Series (same keys), or
    a float and a JAX scalar.

    Args:
        reference: the correct implementation; its answers are computed
            once, on the first check.
        cases: argument tuples to try (use several, with random data and
            the edge cases), or a function making them on first use.
        rtol, atol: tolerances for `numpy.allclose`.
        hint: shown when the numbers disagree.
    """
    if not callable(cases) and not cases:
        raise ValueError("matches_reference needs at least one case.")
    name = "numbers match the reference"
    get_cases = on_first_use(cases)

    @functools.cache
    def reference_answers() -> list[Any]:
        # Once, on first use: a reference that compiles on every call (an
        # eager loop does) would otherwise compile again for every check.
        return [reference(*args) for args in get_cases()]

    @described(name)
    def criterion(fn: Callable[..., Any]) -> Outcome:
        worst = 0.0
        for i, (args, want) in enumerate(zip(get_cases(),
                                                 reference_answers())):
            try:  # a copy: an answer that sorts its input in place must
                value = fn(*copy.deepcopy(args))  # not change the cases
            except Exception as err:  # the learner's code may fail anyhow
                return learner_error(name, err, hint)
            try:
                error = _relative_error(value, want, rtol, atol)
            except WrongAnswer as err:
                return Outcome(name, "fail", f"case {i}: {err}", hint)
            worst = max(worst, error)
        return Outcome(name, "pass", f"{len(get_cases())} cases agree "
                       f"(largest relative error {relative(worst)})")

    return criterion


# Parts of the whole a relative error below 0.1% is said in, largest first,
# each from the smallest error it says (0.01 millionths, not 10 billionths).
_PARTS = ((1e-6, 1e-8, "millionth"), (1e-9, 1e-11, "billionth"),
          (1e-12, 0.0, "trillionth"))


def relative(error: float) -> str:
    """A relative error as a reader says it: a percentage from 0.1% up,
    millionths, billionths or trillionths below, never an exponent.

    Example:
        >>> relative(0.453), relative(1e-5), relative(1.2e-7), relative(0.0)
        ('45.3%', '10 millionths', '0.12 millionths', '0')
        >>> relative(1e-12), relative(3e-15)
        ('1 trillionth', '0.003 trillionths')
    """
    if error == 0:
        return "0"
    if error >= 1e-3:
        return f"{error * 100:.3g}%"
    for size, smallest, name in _PARTS:
        if error >= smallest:
            parts = error / size
            count = f"{parts:.0f}" if parts >= 100 else f"{parts:.2g}"
            return f"{count} {name}{'' if count == '1' else 's'}"
    raise ValueError(f"a relative error is 0 or more, got {error}")


def _relative_error(value: Any, want: Any, rtol: float, atol: float
                    ) -> float:
    """The largest relative error of an answer against the reference's,
    read in its natural form (`helpers.grading.answer_forms`).

    Raises:
        WrongAnswer: saying how the answer differs: its form, the number
            or shape of its arrays, or numbers outside the tolerances.
    """
    if isinstance(want, Mapping):
        value = as_mapping(value, keys=list(want))
    got, wanted = leaves(value), leaves(want)
    if len(got) != len(wanted):
        raise WrongAnswer(f"returned {len(got)} arrays, expected "
                          f"{len(wanted)}")
    worst = 0.0
    for g, w in zip(got, wanted):
        if g.shape != w.shape:
            raise WrongAnswer(f"shape {g.shape}, expected {w.shape}")
        if not w.size:
            continue
        error = float(np.max(np.abs(g - w) / (np.abs(w) + atol)))
        if not np.allclose(g, w, rtol=rtol, atol=atol):
            raise WrongAnswer(f"largest relative error {relative(error)} "
                              f"(allowed {relative(rtol)})")
        worst = max(worst, error)
    return worst


def hlo_fact(description: str, predicate: Callable[[str], bool | str],
             args: tuple[Any, ...] | Callable[[], tuple[Any, ...]], *,
             hint: str = "",
             for_h100: bool = False) -> Criterion:
    """A criterion on the compiled HLO of ``fn(*args)``.

    Args:
        description: the fact in words, e.g. "one kInput fusion".
        predicate: receives the compiled HLO text; returns True when the
            fact holds, or False (or a string saying what was found).
        args: example arguments to compile with (with ``for_h100``,
            ``jax.ShapeDtypeStruct``s of any size will do), or a function
            making them on first use.
        hint: shown when the fact does not hold.
        for_h100: read the module XLA:GPU compiles for an H100
            (`helpers.xla.crosscompile`, no GPU needed) instead of this
            machine's; not graded, saying why, where that cannot run.
    """
    get_args = on_first_use(args)

    @described(description)
    def criterion(fn: Callable[..., Any]) -> Outcome:
        if for_h100 and not crosscompile.available():
            return not_graded(description, "XLA:GPU's compiler, which "
                              "this machine lacks: "
                              + str(crosscompile.why_unavailable()))
        if (empty := computes_nothing(description, fn, get_args())):
            return empty
        compiled_text = (gpu_export.compiled_text if for_h100
                         else hlo.compiled_text)
        try:
            text = compiled_text(fn, *get_args())
        except Exception as err:
            return learner_error(description, err, hint)
        try:
            verdict = predicate(text)
        except Exception as err:  # the grader's fault, not the learner's
            return Outcome(description, "fail", "the check could not read "
                           f"the compiled module: {type(err).__name__}: "
                           f"{err}", "Tell the workshop's facilitator: "
                           "this is a bug in the exercise.",
                           error="".join(traceback.format_exception(err)))
        if verdict is True:
            return Outcome(description, "pass", "holds in the compiled HLO")
        found = verdict if isinstance(verdict, str) else "it does not hold"
        return Outcome(description, "fail", found, hint)

    return criterion


def jaxpr_fact(description: str, predicate: Callable[[Any], bool | str],
               args: tuple[Any, ...] | Callable[[], tuple[Any, ...]], *,
               hint: str = "") -> Criterion:
    """A criterion on the jaxpr of ``fn(*args)``: what the program says,
    before any compiler decides how to run it, so the same on every
    machine.

    Args:
        description: the fact in words, e.g. "no noise drawn in a loop".
        predicate: receives the ``ClosedJaxpr``; returns True when the
            fact holds, or False (or a string saying what was found).
        args: example arguments, or a function making them on first use.
        hint: shown when the fact does not hold.
    """
    get_args = on_first_use(args)

    @described(description)
    def criterion(fn: Callable[..., Any]) -> Outcome:
        try:
            closed = jax.make_jaxpr(fn)(*get_args())
        except Exception as err:
            return learner_error(description, err, hint)
        if not closed.out_avals and \
                (empty := computes_nothing(description, fn, get_args())):
            return empty
        verdict = predicate(closed)
        if verdict is True:
            return Outcome(description, "pass", "holds in the jaxpr")
        found = verdict if isinstance(verdict, str) else "it does not hold"
        return Outcome(description, "fail", found, hint)

    return criterion


def _off_gpu(description: str) -> Outcome | None:
    """A timed criterion's outcome where this machine has no GPU: not
    graded, saying what it needs; None on a GPU."""
    if machine.on_gpu():
        return None
    return not_graded(description, "a GPU (the speed target is a GPU's)")


def time_below(target_s: float | Callable[[], float],
               args: tuple[Any, ...] | Callable[[], tuple[Any, ...]], *,
               repeat: int = 20,
               hint: str = "Profile it: where does the time go?"
               ) -> Criterion:
    """A criterion, GPU only: the median time of ``fn(*args)`` is below a
    target (seconds, or a function computing one, e.g. from a reference).
    Not graded on a CPU."""
    description = "runs fast enough on the GPU"
    get_args = on_first_use(args)

    @described(description)
    def criterion(fn: Callable[..., Any]) -> Outcome:
        if (skipped := _off_gpu(description)) is not None:
            return skipped
        target = target_s() if callable(target_s) else target_s
        try:
            timing = bench.benchmark(jax.jit(fn), *get_args(),
                                     repeat=repeat)
        except Exception as err:
            return learner_error(description, err, hint)
        detail = (f"median {bench.format_seconds(timing.median)}, target "
                  f"{bench.format_seconds(target)}")
        if 0 < timing.median <= target:
            return Outcome(description, "pass", detail)
        return Outcome(description, "fail", detail, hint)

    return criterion


def faster_than(baseline: Callable[..., Any],
                args: tuple[Any, ...] | Callable[[], tuple[Any, ...]], *,
                alpha: float = 0.01, repeat: int = 30,
                hint: str = "Count the kernels each version launches."
                ) -> Criterion:
    """A criterion, GPU only: ``fn(*args)`` beats ``baseline(*args)``.

    Both are jitted and timed with their runs interleaved
    (`bench.interleaved`); `stats.compare` must call the learner's version
    faster at ``alpha``. The target is relative, so it holds on any GPU
    without a number recorded on another one. Not graded on a CPU.
    """
    description = "faster than the starter on the GPU"
    get_args = on_first_use(args)

    @described(description)
    def criterion(fn: Callable[..., Any]) -> Outcome:
        if (skipped := _off_gpu(description)) is not None:
            return skipped
        try:
            timings = bench.interleaved(
                {"yours": jax.jit(fn), "starter": jax.jit(baseline)},
                *get_args(), repeat=repeat)
        except Exception as err:
            return learner_error(description, err, hint)
        # SciPy: imported when a GPU grades
        from helpers.measuring import stats
        result = stats.compare(timings["yours"].times,
                               timings["starter"].times, alpha=alpha)
        detail = (f"median {bench.format_seconds(result.median_a)} vs the "
                  f"starter's {bench.format_seconds(result.median_b)} "
                  f"(p = {result.p_value:.2g})")
        if result.verdict == stats.Verdict.A_FASTER:
            return Outcome(description, "pass", detail)
        return Outcome(description, "fail", detail, hint)

    return criterion


def as_fast_as(baseline: Callable[..., Any],
               args: tuple[Any, ...] | Callable[[], tuple[Any, ...]], *,
               within: float = 0.10, baseline_name: str = "the starter",
               hint: str = "Look at the fusion kinds again."
               ) -> Criterion:
    """A criterion, GPU only: ``fn(*args)`` takes at most ``1 + within``
    times ``baseline(*args)``'s device time.

    For a fix that must change *how* the compiler emits a kernel without
    losing speed: the autotuner may already run the baseline fast, so
    "faster" would ask for more than the GPU can give. Both run under one
    profile (`device_time.measure_all`), so the host's part of a call,
    which differs between GPU hosts, is left out. The target is relative,
    so it holds on any GPU. Not graded on a CPU. ``baseline_name`` is how
    the report names the baseline (the learner edits the starter's cell,
    so "the starter" may read as their own code).
    """
    description = (f"within {within:.0%} of {baseline_name}'s device time "
                   "on the GPU")
    get_args = on_first_use(args)

    @described(description)
    def criterion(fn: Callable[..., Any]) -> Outcome:
        if (skipped := _off_gpu(description)) is not None:
            return skipped
        from helpers.measuring import device_time
        both = [get_args()]
        try:
            timings = device_time.measure_all(
                {"yours": (jax.jit(fn), both),
                 "starter": (jax.jit(baseline), both)})
        except Exception as err:
            return learner_error(description, err, hint)
        ratio = timings["yours"].median / timings["starter"].median
        detail = (f"{bench.format_seconds(timings['yours'].median)} against "
                  f"{baseline_name}'s "
                  f"{bench.format_seconds(timings['starter'].median)} "
                  f"({ratio:.2f} times)")
        if ratio <= 1 + within:
            return Outcome(description, "pass", detail)
        return Outcome(description, "fail", detail, hint)

    return criterion
