"""Retracing across a sequence of calls: how many times a jitted function
traced and compiled again, and what changed each time.

JAX's jit caches one executable per *signature*: every argument's shape,
dtype and weak type, the values of static arguments, and the Python
types in the pytree. `find_retracing` calls the function with each
argument set, reads the size of jit's cache after each call, and names
the argument whose signature changed when the cache grew.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax

from helpers.examine.findings import Finding


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


def find_retracing(fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]]
                   ) -> list[Finding]:
    """Call ``fn`` (jitted here unless it already is) with each tuple of
    ``calls`` and report the calls that compiled it again.

    Raises:
        TypeError: ``calls`` is not a sequence of argument tuples.
    """
    if not all(isinstance(call, tuple) for call in calls):
        raise TypeError("calls must be a list of argument tuples, e.g. "
                        "[(x,), (y,)]: one tuple per call.")
    # a new wrapper of a plain function: jit shares one cache among all
    # wrappers of the same function, which earlier calls may have filled
    jitted = fn if hasattr(fn, "_cache_size") else jax.jit(lambda *a: fn(*a))
    start = jitted._cache_size()
    sizes, previous = [], None
    changes = []
    for number, args in enumerate(calls):
        jax.block_until_ready(jitted(*args))
        sizes.append(jitted._cache_size())
        if previous is not None and sizes[-1] > sizes[-2]:
            changes.append(f"call {number + 1}: " + _changed(previous, args))
        previous = args
    compiles = sizes[-1] - start if sizes else 0
    if len(calls) < 2 or len(changes) == 0:
        return []
    return [Finding("retracing", f"{compiles} compilations in {len(calls)} "
                    f"calls; {'; '.join(changes[:3])}"
                    + (" ..." if len(changes) > 3 else ""), "certain")]


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
