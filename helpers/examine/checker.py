"""`examine(fn, *args)`: look for the field guide's slow patterns in a
reader's own function, without running it on a GPU.

It reads three things: the jaxpr (what the program asks for), the program
compiled for this machine (memory, donation), and, where JAX's CUDA
plugin is installed beside the book (`make cross`), the program XLA:GPU
compiles for an H100 (loops, kernels per step, reduction emitters). Given
``calls``, it also calls the function with each argument set and reports
retracing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax

from helpers.examine import in_jaxpr, in_module, retracing
from helpers.examine.findings import Finding, Report
from helpers.xla import crosscompile, flag_registry, gpu_export, hlo

H100 = "compiled for an H100"
GPU_CHECKS = "loops and reductions as XLA:GPU compiles them"


class ExamineError(ValueError):
    """The function could not be examined; the message says why and what
    to do."""


def examine(fn: Callable[..., Any], *args: Any,
            calls: Sequence[tuple[Any, ...]] | None = None,
            gpu: bool = True) -> Report:
    """Find slow patterns in ``fn(*args)``.

    Args:
        fn: a function of arrays, or a jitted one (its static arguments and
            donations are kept).
        *args: example arguments: arrays, pytrees of arrays, or
            ``jax.ShapeDtypeStruct``s.
        calls: argument tuples of a sequence of calls, to look for
            retracing (the function is called with each).
        gpu: also compile for an H100 (needs `make cross`; skipped with a
            note where unavailable).

    Returns:
        A `Report`: a table in a notebook, text in a terminal.

    Example:
        >>> report = examine(lambda x: jax.pure_callback(
        ...     lambda v: v, x, x), jnp.ones(3), gpu=False)
        >>> report.patterns
        ['host-callback']
    """
    jaxpr = _trace(fn, args)
    findings: list[Finding] = in_jaxpr.find_all(jaxpr)
    compiled = _compile(fn, args)
    outputs = [jax.ShapeDtypeStruct(a.shape, a.dtype)
               for a in jaxpr.out_avals if hasattr(a, "dtype")]
    text = compiled.as_text() or ""
    findings += in_module.find_memory(compiled, args, outputs)
    findings += in_module.find_missing_donation(text, args, outputs)
    skipped: list[tuple[str, str]] = []
    findings += _loops_and_reductions(fn, args, text, gpu, findings, skipped)
    if calls:
        findings += retracing.find_retracing(fn, calls)
    slow = [f for f in findings if f.about.slow]
    notes = [f for f in findings if not f.about.slow]
    return Report(_name(fn), tuple(_ordered(slow)), tuple(notes),
                  tuple(skipped))


def _loops_and_reductions(fn: Any, args: tuple[Any, ...], text: str,
                          gpu: bool, found: list[Finding],
                          skipped: list[tuple[str, str]]) -> list[Finding]:
    """Loops and reductions as XLA:GPU compiles them for an H100; loops
    as compiled here when that compilation is not asked for or fails
    (its reason appended to ``skipped``)."""
    gpu_text = None
    if gpu and any(f.pattern == "host-callback" for f in found):
        skipped.append((GPU_CHECKS, "JAX cannot export a program with a "
                        "host callback for another platform"))
    elif gpu:
        gpu_text = _gpu_text(fn, args, skipped)
    if gpu_text is None:
        return in_module.find_loops(
            text, f"compiled for {jax.default_backend()}", None)
    min_graph = int(flag_registry.effective("--xla_gpu_graph_min_graph_size"))
    return (in_module.find_loops(gpu_text, H100, min_graph)
            + in_module.find_kloop_reductions(gpu_text, H100))


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _trace(fn: Any, args: tuple[Any, ...]) -> Any:
    """The function's jaxpr, traced twice: a function whose program
    changes between two traces depends on Python state it changes (a
    counter, a list it appends to), which jit would freeze at the first
    trace."""
    if not callable(fn):
        raise ExamineError(f"examine needs a function, got "
                           f"{type(fn).__name__}: pass the function itself "
                           "and its arguments, examine(f, x, y).")
    try:
        first, second = (_jaxpr(fn, args) for _ in range(2))
    except Exception as error:  # a reader's code can raise anything
        raise ExamineError(
            f"{_name(fn)} does not trace with these arguments: "
            f"{type(error).__name__}: {str(error).splitlines()[0]}. "
            "Pass arrays (or jax.ShapeDtypeStruct) of the shapes the "
            "function expects.") from error
    if str(first) != str(second):
        raise ExamineError(
            f"{_name(fn)} traced to two different programs: it reads and "
            "changes Python state (a global counter, a list it appends "
            "to). jit runs that Python once and reuses the program, so the "
            "change would be frozen; pass the state in and return it.")
    return first


def _jaxpr(fn: Any, args: tuple[Any, ...]) -> Any:
    if hasattr(fn, "trace"):  # a jitted function keeps its static arguments
        return fn.trace(*args).jaxpr
    # a new function each time, so that JAX's trace cache cannot answer
    return jax.make_jaxpr(lambda *a: fn(*a))(*args)


def _compile(fn: Any, args: tuple[Any, ...]) -> Any:
    try:
        return hlo.compile(fn, *args)
    except Exception as error:
        raise ExamineError(f"{_name(fn)} traces but does not compile here: "
                           f"{str(error).splitlines()[0]}") from error


def _gpu_text(fn: Any, args: tuple[Any, ...],
              skipped: list[tuple[str, str]]) -> str | None:
    why = crosscompile.why_unavailable()
    if why is None:
        # Python scalars trace as arrays, except a jitted function's
        # static arguments, which the export keeps as they are
        arrays = args if hasattr(fn, "trace") else jax.tree.map(
            lambda x: x if hasattr(x, "shape") else jax.numpy.asarray(x),
            args)
        try:
            return gpu_export.compiled_text(fn, *arrays)
        except Exception as error:  # export can refuse (host callbacks)
            why = _why_not_exported(error)
    skipped.append((GPU_CHECKS, why))
    return None


def _why_not_exported(error: Exception) -> str:
    """Why the H100 export failed, in words: the one failure the book
    knows by name (a shard_map, whose inputs the export cannot place on
    its mesh), else the kind of error, with its first sentence kept for
    the report's folded details rather than the sentence."""
    if "shard_map" in str(error):
        cause = ("the export places every input on one device, and a "
                 "shard_map asks for its inputs on its own mesh")
    else:
        cause = (f"JAX's export stopped with a {type(error).__name__}: "
                 f"{_first_sentence(error)}")
    return (f"it could not be compiled for an H100 here ({cause}); a run "
            "on a GPU checks it")


def _first_sentence(error: Exception) -> str:
    """An error's first sentence: what went wrong, without the advice that
    follows it (which concerns the export, not the reader's code)."""
    line = str(error).splitlines()[0] if str(error) else ""
    return line.split(". ")[0].rstrip(".")


def _ordered(findings: list[Finding]) -> list[Finding]:
    """Certain findings first, each pattern's findings together."""
    rank = {"certain": 0, "likely": 1, "possible": 2}
    return sorted(findings, key=lambda f: (rank[f.confidence], f.pattern))
