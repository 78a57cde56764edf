"""`examine(fn, *args)`: look for the field guide's slow patterns in a
reader's own function, without running it on a GPU.

It reads the jaxpr (what the program asks for, and the work of each
loop's step), the program compiled for this machine (donation), and,
where JAX's CUDA plugin is installed beside the book (`make cross`), the
program XLA:GPU compiles for an H100 (loops, kernels per step, reduction
emitters, temporaries). A pattern is slow where its cost on the H100,
from what the book measured there (`helpers.examine.costs`), is large
beside the work around it. Given ``calls``, it also traces the function
for each argument set (retracing) and runs them (an output fed back in).

It leaves the session as it found it: no cache of the caller's is
cleared or filled, and JAX's settings are as they were. Each program is
compiled once for the H100 in a child process kept for the session, so a
second look at the same program answers at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
from jax.extend import core as jax_core

from helpers.examine import costs, in_jaxpr, in_module, retracing
from helpers.examine.findings import Finding, Report
from helpers.xla import crosscompile, flag_registry, gpu_export, hlo

H100 = "compiled for an H100"
GPU_CHECKS = "loops and reductions as XLA:GPU compiles them"
# Programs compiled in this session, by `_program_key`: for this machine
# (text, temporaries, seconds to compile), and for an H100
# (`gpu_export.compiled`, with "compile_s" added).
_LOCAL: dict[str, tuple[str, int | None, float]] = {}
_GPU: dict[str, dict[str, Any]] = {}
_KEPT = 64
# Closed-over constants from this size are compiled as parameters: XLA
# copies a constant's bytes into the program (seconds for 128 MiB), and
# their values change nothing the checker reads.
CONSTANT_BYTES = 16 * 2**20


class ExamineError(ValueError):
    """The function could not be examined; the message says why and what
    to do."""


def examine(fn: Callable[..., Any], *args: Any,
            calls: Sequence[tuple[Any, ...]] | None = None,
            gpu: bool = True, **keywords: Any) -> Report:
    """Find slow patterns in ``fn(*args)``.

    Args:
        fn: a function of arrays, or a jitted one (its static arguments and
            donations are kept).
        *args: example arguments: arrays, pytrees of arrays (NamedTuples
            and dataclasses too), or ``jax.ShapeDtypeStruct``s.
        calls: argument tuples of a sequence of calls: each is traced, to
            find retracing, and run, to find an output fed back in.
        gpu: also compile for an H100 (needs `make cross`; skipped with a
            note where unavailable).

    Returns:
        A `Report`: a table in a notebook, text in a terminal.

    Raises:
        ExamineError: the function, its arguments or the calls cannot be
            examined; the message says what to do.

    Example:
        >>> report = examine(lambda x: jax.pure_callback(
        ...     lambda v: v, x, x), jnp.ones(3), gpu=False)
        >>> report.patterns
        ['host-callback']
    """
    if keywords:
        raise ExamineError(
            f"examine takes the function's arguments by position; it got "
            f"{', '.join(map(repr, keywords))} by name. Bind keyword "
            "arguments first: examine(functools.partial(f, k=3), x), or "
            "examine(lambda x: f(x, k=3), x)." + _did_you_mean(keywords))
    calls = _checked_calls(calls)
    with _as_it_was():
        return _examine(fn, args, calls, gpu)


def _examine(fn: Any, args: tuple[Any, ...],
             calls: list[tuple[Any, ...]], gpu: bool) -> Report:
    jaxpr = _trace(fn, args)
    rates = costs.h100()
    findings: list[Finding] = in_jaxpr.find_all(jaxpr, rates)
    pairs = in_jaxpr.all_pairs(list(in_jaxpr.equations(jaxpr)))
    loops = in_jaxpr.loops(jaxpr)
    key = _program_key(fn, args, jaxpr)
    compiled_fn, compiled_args = _constants_as_arguments(fn, args, jaxpr)
    text, local_temp, local_s = _compile(compiled_fn, compiled_args, key)
    here = f"for {jax.default_backend()}, on this machine"
    outputs = [jax.ShapeDtypeStruct(a.shape, a.dtype)
               for a in jaxpr.out_avals if hasattr(a, "dtype")]
    skipped: list[tuple[str, str]] = []
    if rates is None:
        skipped.append(("each pattern's cost on an H100", "the book's H100 "
                        "recordings of chapters 1 and 3 are not here"))
    program = _gpu_program(compiled_fn, compiled_args, gpu, findings,
                           skipped, key)
    if program is None:
        compiling = (local_s, here)
        findings += in_module.find_memory(
            local_temp, f"compiled for {jax.default_backend()}", args,
            outputs, pairs, rates)
        findings += in_module.find_loops(
            text, f"compiled for {jax.default_backend()}", None, loops,
            rates)
    else:
        min_graph = int(flag_registry.effective(
            "--xla_gpu_graph_min_graph_size"))
        compiling = (program["compile_s"], "for an H100, on this machine")
        findings += in_module.find_memory(program["temp_bytes"], H100, args,
                                          outputs, pairs, rates)
        findings += in_module.find_loops(program["text"], H100, min_graph,
                                         loops, rates)
        findings += in_module.find_kloop_reductions(program["text"], H100,
                                                    rates)
        # the reduction XLA:GPU made of a tiny dot is judged just above
        findings = [dataclasses.replace(f, slow=False)
                    if f.pattern == "tiny-dot" else f for f in findings]
    if calls:
        findings += _retracing(fn, calls, compiling)
    findings += _donation(fn, args, outputs, text, calls)
    findings = [_with_measured_case(f) for f in findings]
    slow = [f for f in findings if f.is_slow]
    notes = [f for f in findings if not f.is_slow]
    return Report(_name(fn), tuple(_ordered(slow)), tuple(notes),
                  tuple(skipped))


def _checked_calls(calls: Any) -> list[tuple[Any, ...]]:
    if calls is None:
        return []
    if isinstance(calls, tuple) or not all(
            isinstance(call, tuple) for call in calls):
        raise ExamineError("calls must be a list of argument tuples, one "
                           "tuple per call: calls=[(x,), (y,)].")
    return list(calls)


@contextlib.contextmanager
def _as_it_was() -> Iterator[None]:
    """JAX's settings and default device as they were on entry, whatever
    a check changed (64-bit types, the default device)."""
    before = {name: getattr(jax.config, name) for name in
              ("jax_enable_x64", "jax_default_device",
               "jax_default_matmul_precision", "jax_numpy_rank_promotion")}
    try:
        yield
    finally:
        for name, value in before.items():
            if getattr(jax.config, name) != value:
                jax.config.update(name, value)


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
            f"{type(error).__name__}: {_first_line(error)}. "
            + _advice(error)) from error
    if str(first) != str(second):
        raise ExamineError(
            f"{_name(fn)} traced to two different programs: it reads and "
            "changes Python state (a global counter, a list it appends "
            "to). jit runs that Python once and reuses the program, so the "
            "change would be frozen; pass the state in and return it.")
    return first


def _advice(error: Exception) -> str:
    """What to do about a trace that failed, by what failed."""
    name = type(error).__name__
    if name == "TracerArrayConversionError" or "__array__" in str(error):
        return ("The function converts a traced array to NumPy "
                "(np.asarray, np.array, a NumPy function): that runs on "
                "the host, outside jit, at every step. Use jax.numpy "
                "instead, or do the conversion outside the function.")
    if name in ("ConcretizationTypeError", "TracerIntegerConversionError",
                "TracerBoolConversionError") or "concrete" in str(error):
        return ("A traced value is used where Python needs a concrete one "
                "(a shape, a range, an if): pass it as a static argument, "
                "jax.jit(f, static_argnums=...), and examine the jitted "
                "function; or use lax.cond and lax.fori_loop for values "
                "that must stay traced.")
    return ("Pass arrays (or jax.ShapeDtypeStruct) of the shapes the "
            "function expects.")


def _did_you_mean(keywords: dict[str, Any]) -> str:
    """A hint for a misspelt option of examine's own (``cals=``)."""
    for word in keywords:
        close = difflib.get_close_matches(word, ["calls", "gpu"], n=1)
        if close:
            return f" Did you mean examine's own {close[0]}=?"
    return ""


def _first_line(error: Exception) -> str:
    """An error's first line, without a closing full stop (the messages
    here add their own)."""
    line = str(error).splitlines()[0] if str(error) else "(no message)"
    return line.rstrip(".")


def _jaxpr(fn: Any, args: tuple[Any, ...]) -> Any:
    if hasattr(fn, "trace"):  # a jitted function keeps its static arguments
        return fn.trace(*args).jaxpr
    # a new function each time, so that JAX's trace cache cannot answer;
    # wrapped, so that JAX's errors name the reader's function, not this
    return jax.make_jaxpr(functools.wraps(fn)(lambda *a: fn(*a)))(*args)


def _program_key(fn: Any, args: tuple[Any, ...], jaxpr: Any) -> str:
    """What identifies a program: its jaxpr, the function's name and,
    for a jitted function, what it donates (which changes the compiled
    program but not the jaxpr)."""
    donated = fn.trace(*args).donate_argnums if hasattr(fn, "trace") else ()
    return hashlib.sha256(
        f"{jaxpr}|{_name(fn)}|{donated}".encode()).hexdigest()


def _constants_as_arguments(fn: Any, args: tuple[Any, ...], jaxpr: Any
                            ) -> tuple[Any, tuple[Any, ...]]:
    """``fn`` and ``args`` to compile: as they are, or, where ``fn``
    closes over `CONSTANT_BYTES` or more, its jaxpr with the constants
    made its first arguments (shapes only), its donations kept."""
    if sum(getattr(c, "nbytes", 0) for c in jaxpr.consts) < CONSTANT_BYTES:
        return fn, args
    inner = jaxpr.jaxpr
    lifted = inner.replace(constvars=[], debug_info=None,
                           invars=[*inner.constvars, *inner.invars])
    donated = fn.trace(*args).donate_argnums if hasattr(fn, "trace") else ()
    run = jax.jit(jax_core.jaxpr_as_fun(jax_core.ClosedJaxpr(lifted, [])),
                  donate_argnums=tuple(len(jaxpr.consts) + i
                                       for i in donated))
    run.__name__ = _name(fn)  # type: ignore[attr-defined]
    return run, tuple(jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype)
                      for v in lifted.invars)


def _kept(cache: dict[str, Any], key: str, value: Any) -> Any:
    """``value`` kept under ``key``, the oldest entry dropped beyond
    `_KEPT`."""
    if len(cache) >= _KEPT:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def _compile(fn: Any, args: tuple[Any, ...], key: str
             ) -> tuple[str, int | None, float]:
    """The program compiled for this machine (its text, temporaries and
    seconds to compile), once per program: compiled ahead of time, outside
    the function's own caches."""
    if key not in _LOCAL:
        start = time.perf_counter()
        try:
            compiled = hlo.compiled(fn, *args)
        except Exception as error:
            raise ExamineError(f"{_name(fn)} traces but does not compile "
                               f"here: {_first_line(error)}") from error
        _kept(_LOCAL, key, (compiled.as_text() or "",
                            in_module.temp_bytes(compiled),
                            time.perf_counter() - start))
    return _LOCAL[key]


def _gpu_program(fn: Any, args: tuple[Any, ...], gpu: bool,
                 found: list[Finding], skipped: list[tuple[str, str]],
                 key: str) -> dict[str, Any] | None:
    """The program XLA:GPU compiles for an H100, once per program, or
    None (why appended to ``skipped``)."""
    if not gpu:
        return None
    if key in _GPU:
        return _GPU[key]
    if any(f.pattern == "host-callback" for f in found):
        skipped.append((GPU_CHECKS, "JAX cannot export a program with a "
                        "host callback for another platform"))
        return None
    why = crosscompile.why_unavailable()
    if why is None:
        # Python scalars trace as arrays, except a jitted function's
        # static arguments, which the export keeps as they are
        arrays = args if hasattr(fn, "trace") else jax.tree.map(
            lambda x: x if hasattr(x, "shape") else jax.numpy.asarray(x),
            args)
        start = time.perf_counter()
        try:
            program = gpu_export.compiled(fn, *arrays, keep_alive=True)
            return _kept(_GPU, key, {**program, "compile_s":
                                     time.perf_counter() - start})
        except Exception as error:  # export can refuse (host callbacks)
            why = _why_not_exported(error)
    skipped.append((GPU_CHECKS, why))
    return None


def _donation(fn: Any, args: tuple[Any, ...], outputs: Any, text: str,
              calls: list[tuple[Any, ...]]) -> list[Finding]:
    """A missing donation: a slow finding where the calls show an output
    fed back in, else the note that shapes match."""
    fed = []
    if len(calls) > 1 and not any(
            isinstance(leaf, jax.ShapeDtypeStruct)
            for call in calls for leaf in jax.tree.leaves(call)):
        try:
            fed = retracing.find_fed_back(fn, calls)
        except Exception as error:  # the reader's function, on their data
            raise ExamineError(f"a call of {_name(fn)} in calls failed: "
                               f"{type(error).__name__}: "
                               f"{_first_line(error)}") from error
    return fed or in_module.find_missing_donation(text, args, outputs)


def _with_measured_case(finding: Finding) -> Finding:
    """The finding, its cost followed by (or, unpriced, replaced with)
    what the reference H100 measured of the field guide's case of the same
    pattern, where that recording is here."""
    case = costs.measured_case(finding.pattern)
    if case is None:
        return finding
    cost = (case if finding.cost in ("", costs.UNPRICED)
            else f"{finding.cost}; {case}")
    return dataclasses.replace(finding, cost=cost)


def _retracing(fn: Any, calls: list[tuple[Any, ...]],
               compiling: tuple[float, str]) -> list[Finding]:
    try:
        return retracing.find_retracing(fn, calls, compiling)
    except Exception as error:
        raise ExamineError(f"a call in calls does not trace: "
                           f"{type(error).__name__}: {_first_line(error)}. "
                           + _advice(error)) from error


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
