"""What a sequence of calls shows: retracing, and outputs fed back in.

JAX's jit caches one executable per *signature*: every argument's shape,
dtype and weak type, the values of static arguments, and the Python
types in the pytree. `find_retracing` traces the function for each call
(``jit(...).trace``: nothing runs, and no cache of the function's grows)
and counts the signatures, so its answer is the same whatever ran before
in the session. `find_fed_back` runs each call once, compiled ahead of
time outside the function's own caches, and finds the arguments of a
call that are the outputs of the call before: a state the function
replaces, whose buffers donation would reuse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from helpers.examine.findings import Finding, count_of
from helpers.examine.costs import seconds

# Donation matters from this many bytes fed back.
DONATION_BYTES = 2**20


def signature(value: Any) -> str:
    """What jit keys its cache on, for one argument, in words."""
    leaves, tree = jax.tree.flatten(value)
    parts = []
    for leaf in leaves:
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            weak = " (weak type)" if getattr(leaf, "weak_type", False) else ""
            parts.append(f"{leaf.dtype}{list(leaf.shape)}{weak}")
        else:  # a Python scalar: traced as a weakly typed array
            parts.append(f"Python {type(leaf).__name__}")
    shown = ", ".join(parts)
    return (shown if jax.tree_util.treedef_is_leaf(tree)
            else f"{shown} in {tree}")


def jitted(fn: Callable[..., Any]) -> Any:
    """``fn`` as jit sees it: itself when jitted (its static arguments and
    donations kept), else jitted here."""
    return fn if hasattr(fn, "trace") else jax.jit(fn)


def cache_key(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple:
    """The parts of jit's cache key a call decides: the pytree, each
    traced argument's type (weak types included), and, where some
    arguments are static, the values of the arguments that are not
    arrays."""
    traced = jitted(fn).trace(*args)
    avals = tuple((tuple(a.shape), str(a.dtype), bool(a.weak_type))
                  for a in traced.jaxpr.in_avals)
    leaves = jax.tree.leaves(args)
    statics = () if len(avals) >= len(leaves) else tuple(
        repr(leaf) for leaf in leaves if not hasattr(leaf, "shape"))
    return str(traced.in_tree), avals, statics


def find_retracing(fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]],
                   compiling: tuple[float, str] | None = None
                   ) -> list[Finding]:
    """The calls of ``calls`` that compile ``fn`` again, and what changed
    in each (``calls``: argument tuples, already checked).
    ``compiling``: how long one compilation of ``fn`` took, in seconds,
    and for what, to price the extra ones."""
    seen: set[tuple] = set()
    changes = []
    previous = None
    for number, args in enumerate(calls):
        key = cache_key(fn, args)
        if key not in seen and previous is not None:
            changes.append(f"call {number + 1}: " + _changed(previous, args))
        seen.add(key)
        previous = args
    if len(calls) < 2 or not changes:
        return []
    extra = len(seen) - 1
    cost = "" if compiling is None else (
        f"compiling: {count_of(extra, 'more compilation')} x "
        f"{seconds(compiling[0])}"
        f" = {seconds(extra * compiling[0])}, one compilation's time "
        f"{compiling[1]}")
    return [Finding("retracing", f"{len(seen)} compilations in {len(calls)} "
                    f"calls; {'; '.join(changes[:3])}"
                    + (" ..." if len(changes) > 3 else ""), "certain",
                    cost=cost)]


def _changed(before: tuple[Any, ...], after: tuple[Any, ...]) -> str:
    if len(before) != len(after):
        return f"{len(before)} arguments, then {len(after)}"
    for index, (a, b) in enumerate(zip(before, after)):
        if signature(a) != signature(b):
            return (f"argument {index} went from {signature(a)} to "
                    f"{signature(b)}")
        if not hasattr(a, "shape") and a != b:
            return f"argument {index} changed value ({a!r} to {b!r})"
    return "a static argument or a closure changed"


def find_fed_back(fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]]
                  ) -> list[Finding]:
    """Arguments of a call that are the previous call's outputs, of at
    least `DONATION_BYTES` and not donated: the function replaces its
    input, and without donation both live at once. Calls whose static
    arguments cannot be told apart from the rest are not run."""
    found = []
    outputs: list[Any] | None = None
    for number, args in enumerate(calls):
        ran = _run(fn, args)
        if ran is None:
            return []
        traced, dynamic, result = ran
        if outputs is not None:
            found += _fed(number, dynamic, outputs, traced)
        outputs = jax.tree_util.tree_flatten_with_path(result)[0]
    return found[:1]


def _run(fn: Callable[..., Any], args: tuple[Any, ...]
         ) -> tuple[Any, tuple[Any, ...], Any] | None:
    """``fn(*args)`` compiled ahead of time (so the function's own jit
    cache stays as it was) and run: its trace, the arguments the
    executable took and its result; None when those arguments cannot be
    picked out of ``args``."""
    traced = jitted(fn).trace(*args)
    dynamic = _dynamic(args, traced)
    if dynamic is None:
        return None
    # copies: a donating function would take the caller's arrays
    dynamic = jax.tree.map(lambda x: jnp.array(x, copy=True)
                           if isinstance(x, jax.Array) else x, dynamic)
    return traced, dynamic, traced.lower().compile()(*dynamic)


def _dynamic(args: tuple[Any, ...], traced: Any) -> tuple[Any, ...] | None:
    """The positional arguments an ahead-of-time executable takes: all of
    them, or those left when the arguments holding no array (the static
    ones) are set aside; None when neither count fits."""
    wanted = len(traced.args_info[0])
    if len(args) == wanted:
        return args
    arrays = tuple(a for a in args if any(
        hasattr(leaf, "shape") for leaf in jax.tree.leaves(a)))
    return arrays if len(arrays) == wanted else None


def _fed(number: int, dynamic: tuple[Any, ...], outputs: list[Any],
         traced: Any) -> list[Finding]:
    """The arrays among the call's (dynamic) arguments that equal one of
    the previous call's outputs (``(path, array)`` pairs), not donated."""
    keystr = jax.tree_util.keystr
    donated = [info.donated for info in jax.tree.leaves(
        traced.args_info[0], is_leaf=lambda x: hasattr(x, "donated"))]
    leaves = jax.tree_util.tree_flatten_with_path(dynamic)[0]
    found = []
    for index, (path, leaf) in enumerate(leaves):
        if not hasattr(leaf, "shape") or leaf.nbytes < DONATION_BYTES:
            continue
        if index < len(donated) and donated[index]:
            continue
        source = next((out_path for out_path, out in outputs
                       if getattr(out, "shape", None) == leaf.shape
                       and out.dtype == leaf.dtype
                       and np.array_equal(np.asarray(out), np.asarray(leaf))),
                      None)
        if source is not None:
            found.append(Finding(
                "no-donation", f"argument `{keystr(path)}` of call "
                f"{number + 1} is output `{keystr(source) or '(whole)'}` "
                f"of call {number} ({leaf.nbytes / 2**20:,.1f} MiB): the "
                "function replaces it, and without donation the old and "
                "the new copy are both in memory during the call",
                "likely", slow=True,
                cost=f"memory, not time: {leaf.nbytes / 2**20:,.1f} MiB "
                "more at the peak (XLA writes the output either way)"))
    return found
