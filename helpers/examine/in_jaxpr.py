"""Patterns read from a function's jaxpr: what the program asks for,
before any compiler has changed it.

`equations` walks a jaxpr and every jaxpr nested in it (the bodies of
loops, branches, jitted calls, custom derivatives), and says for each
equation whether it runs inside a loop. Each ``find_*`` function turns
the equations into findings.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from helpers.examine.findings import Finding

LOOPS = {"while", "scan"}
# psum_invariant and all_gather_invariant: how shard_map (with its
# varying-axis checks) writes a psum or all_gather of a varying value
COLLECTIVES = {"psum", "pmax", "pmin", "all_gather", "all_to_all",
               "ppermute", "reduce_scatter", "psum_scatter", "psend",
               "precv", "psum_invariant", "all_gather_invariant"}
CALLBACKS = {"pure_callback", "io_callback", "debug_callback",
             "debug_print"}
RANDOM = {"random_split", "random_fold_in", "random_bits",
          "threefry2x32"}
# A dot's output, per operand, at most this many elements outside its
# batch dimensions counts as tiny (chapter 2's (3, K) @ (K, 1)); so does a
# contracted dimension of at most TINY_INNER elements.
TINY = 8
TINY_INNER = 2


@dataclasses.dataclass(frozen=True)
class Equation:
    """One jaxpr equation, and whether a loop encloses it."""

    eqn: Any
    in_loop: bool

    @property
    def name(self) -> str:
        return str(self.eqn.primitive.name)

    def __str__(self) -> str:
        """The primitive and its operands' types, e.g.
        ``scatter-add(f32[64], i32[1000,1], f32[1000])``."""
        operands = ", ".join(str(v.aval).split("{")[0]
                             for v in self.eqn.invars)
        return f"{self.name}({operands})"


def equations(jaxpr: Any, in_loop: bool = False) -> Iterator[Equation]:
    """Every equation of ``jaxpr`` (a Jaxpr or ClosedJaxpr) and of the
    jaxprs nested in its equations' parameters."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in jaxpr.eqns:
        yield Equation(eqn, in_loop)
        inner = in_loop or eqn.primitive.name in LOOPS
        for value in eqn.params.values():
            for sub in _jaxprs(value):
                yield from equations(sub, inner)


def _jaxprs(value: Any) -> Iterator[Any]:
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _jaxprs(item)
    elif hasattr(value, "eqns") or (hasattr(value, "jaxpr")
                                    and hasattr(value, "consts")):
        yield value


def _dtypes(eqn: Any) -> set[str]:
    return {str(v.aval.dtype) for v in (*eqn.invars, *eqn.outvars)
            if hasattr(v.aval, "dtype")}


def find_tf32(eqs: list[Equation]) -> list[Finding]:
    """float32 dot_generals at JAX's default precision."""
    found = []
    for e in eqs:
        if e.name != "dot_general":
            continue
        precision = e.eqn.params.get("precision")
        default = precision is None or all(
            str(p) in ("None", "DEFAULT", "Precision.DEFAULT")
            for p in (precision if isinstance(precision, tuple)
                      else (precision,)))
        inputs = {str(v.aval.dtype) for v in e.eqn.invars}
        if default and inputs == {"float32"}:
            found.append(Finding("tf32-default", f"`{e}` at the default "
                                 "precision", "certain"))
    return found


def find_float64(eqs: list[Equation]) -> list[Finding]:
    """Equations computing in float64 (or complex128)."""
    wide = [e for e in eqs if _dtypes(e.eqn) & {"float64", "complex128"}]
    if not wide:
        return []
    return [Finding("float64", f"{len(wide)} equation(s) in float64, "
                    f"e.g. `{wide[0]}`", "likely")]


def find_scatter(eqs: list[Equation]) -> list[Finding]:
    """Scatter-adds (segment_sum, .at[].add) with neither sorted nor
    unique indices."""
    found = []
    for e in eqs:
        if e.name.startswith("scatter") and e.name != "scatter" and not (
                e.eqn.params.get("indices_are_sorted")
                or e.eqn.params.get("unique_indices")):
            found.append(Finding("scatter-contention", f"`{e}`, its indices "
                                 "neither sorted nor unique", "possible"))
    return found


def find_sort_64(eqs: list[Equation]) -> list[Finding]:
    """Sorts whose keys are 64-bit."""
    found = []
    for e in eqs:
        if e.name != "sort":
            continue
        keys = e.eqn.invars[:e.eqn.params.get("num_keys", 1)]
        wide = [str(k.aval.dtype) for k in keys
                if np.dtype(k.aval.dtype).itemsize == 8]
        if wide:
            found.append(Finding("sort-64-bit", f"sort on {', '.join(wide)}"
                                 f" keys: `{e}`", "likely"))
    return found


def find_tiny_dots(eqs: list[Equation]) -> list[Finding]:
    """Batched dot_generals whose per-batch output is a few elements."""
    found = []
    for e in eqs:
        if e.name != "dot_general":
            continue
        (lc, rc), (lb, rb) = e.eqn.params["dimension_numbers"]
        lhs, rhs = (v.aval.shape for v in e.eqn.invars)
        free = [math.prod(s for i, s in enumerate(shape)
                          if i not in (*c, *b))
                for shape, c, b in ((lhs, lc, lb), (rhs, rc, rb))]
        batch = math.prod(lhs[i] for i in lb)
        inner = math.prod(lhs[i] for i in lc)
        tiny_output = bool(lb) and batch >= 64 and free[0] * free[1] <= TINY
        # an outer product in disguise: large operands, almost nothing
        # summed, so a matrix unit does little but move the output
        tiny_inner = inner <= TINY_INNER and free[0] * free[1] >= 4096
        if tiny_output or tiny_inner:
            found.append(Finding(
                "tiny-dot", f"{batch:,} product(s) of {free[0]} x {inner} "
                f"by {inner} x {free[1]}: `{e}`", "possible"))
    return found


def find_in_loops(eqs: list[Equation]) -> list[Finding]:
    """Random-number generation, collectives and callbacks inside loops,
    and callbacks anywhere."""
    found = []
    for e in eqs:
        if e.in_loop and e.name in RANDOM:
            found.append(Finding("random-in-loop", f"`{e}` inside a "
                                 "loop body", "certain"))
        if e.in_loop and e.name in COLLECTIVES:
            found.append(Finding("collective-in-loop", f"`{e}` inside a "
                                 "loop body", "certain"))
        if e.name in CALLBACKS:
            where = "inside a loop body" if e.in_loop else "in the program"
            found.append(Finding("host-callback", f"`{e.name}` {where}",
                                 "certain"))
    return found


def _one_per_pattern(found: list[Finding]) -> list[Finding]:
    """The first finding of each pattern, its evidence counting the rest."""
    by_pattern: dict[str, list[Finding]] = {}
    for f in found:
        by_pattern.setdefault(f.pattern, []).append(f)
    return [group[0] if len(group) == 1 else dataclasses.replace(
        group[0], evidence=f"{len(group)} times; first: {group[0].evidence}")
        for group in by_pattern.values()]


def find_all(jaxpr: Any) -> list[Finding]:
    """Every jaxpr pattern in ``jaxpr``."""
    eqs = list(equations(jaxpr))
    return _one_per_pattern([
        *find_in_loops(eqs), *find_tiny_dots(eqs), *find_scatter(eqs),
        *find_sort_64(eqs), *find_float64(eqs), *find_tf32(eqs)])
