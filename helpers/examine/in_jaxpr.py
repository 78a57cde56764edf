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

import jax
from jax.extend import core as jax_core

from helpers.examine import costs
from helpers.examine.findings import Finding, count_of

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
# batch dimensions counts as tiny (chapter 2's (3, K) @ (K, 1)), when it
# also sums fewer elements than a warp's 32 (a longer row reduces at the
# speed of memory whatever the emitter). (A dot that sums one or two
# elements, an outer product, is not one: XLA writes it as a multiply.)
TINY = 8
WARP = 32
# What an operation must move before its layout costs a reader time: 16
# MB is 5 µs at the H100's copy bandwidth.
MATTERS_BYTES = 16 * 2**20
# A scatter contends when more updates than this land on each slot, on
# average: they are added one after another.
CROWDED = 8
# An all-pairs result (an outer product, attention's scores, a distance
# matrix) has at least this many times the elements of its operands
# together: attention's scores are T / 2H times q and k, 4 at 1024 tokens
# of 128-wide heads. It matters from ALL_PAIRS_BYTES: written and read
# back whole, 64 MiB is 45 µs at the H100's copy bandwidth.
EXPANDS = 4
ALL_PAIRS_BYTES = 64 * 2**20
# Decompositions need their matrix whole: an all-pairs array shaped like
# one's operand (a Gaussian process's kernel matrix before its Cholesky
# factor) cannot be made a block at a time.
DECOMPOSITIONS = {"cholesky", "lu", "qr", "geqrf", "householder_product",
                  "eigh", "eig", "svd", "schur", "hessenberg",
                  "tridiagonal"}


@dataclasses.dataclass(frozen=True)
class Equation:
    """One jaxpr equation, whether a loop encloses it, and how many times
    it runs for one call (None: a while loop's count, known only when it
    runs)."""

    eqn: Any
    in_loop: bool
    runs: int | None = 1

    @property
    def name(self) -> str:
        return str(self.eqn.primitive.name)

    def __str__(self) -> str:
        """The primitive and its operands' types, e.g.
        ``scatter-add(f32[64], i32[1000,1], f32[1000])``."""
        operands = ", ".join(str(v.aval).split("{")[0]
                             for v in self.eqn.invars)
        return f"{self.name}({operands})"


def equations(jaxpr: Any, in_loop: bool = False, runs: int | None = 1
              ) -> Iterator[Equation]:
    """Every equation of ``jaxpr`` (a Jaxpr or ClosedJaxpr) and of the
    jaxprs nested in its equations' parameters."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in jaxpr.eqns:
        yield Equation(eqn, in_loop, runs)
        name = eqn.primitive.name
        inner = in_loop or name in LOOPS
        inner_runs = (None if runs is None or name == "while" else
                      runs * int(eqn.params["length"]) if name == "scan"
                      else runs)
        for value in eqn.params.values():
            for sub in _jaxprs(value):
                yield from equations(sub, inner, inner_runs)


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


def find_float64(eqs: list[Equation], rates: costs.Rates | None = None
                 ) -> list[Finding]:
    """Equations computing in float64 (or complex128). The cost counted
    is half their results' bytes, which float32 would not write and read
    back: an upper bound, since XLA keeps the results of fused operations
    in registers (calls are left out: their bodies count)."""
    wide = [e for e in eqs if _dtypes(e.eqn) & {"float64", "complex128"}]
    if not wide:
        return []
    extra = sum(_nbytes(e.eqn.outvars) * (e.runs or 1) for e in wide
                if not any(next(_jaxprs(p), None) is not None
                           for p in e.eqn.params.values())) / 2
    cost = "" if rates is None or not extra else costs.traffic(
        extra, 2, rates, "the half of the float64 results float32 would "
        "not write and read back, where they reach memory", "up to") + (
        "; float64 arithmetic is slower still")
    equations = count_of(len(wide), "equation")
    return [Finding("float64", f"{equations} in float64, "
                    f"e.g. `{wide[0]}`", "likely", cost=cost)]


def find_scatter(eqs: list[Equation]) -> list[Finding]:
    """Scatter-adds (segment_sum, .at[].add) with neither sorted nor
    unique indices that put many updates on each slot: they are added
    one after another."""
    found = []
    for e in eqs:
        if not e.name.startswith("scatter") or e.name == "scatter" or (
                e.eqn.params.get("indices_are_sorted")
                or e.eqn.params.get("unique_indices")):
            continue
        crowding = _updates_per_slot(e.eqn)
        if crowding is not None and crowding[0] / crowding[1] >= CROWDED:
            updates, slots = crowding
            found.append(Finding(
                "scatter-contention", f"`{e}`: {updates:,} updates into "
                f"{slots:,} slots, about {updates / slots:,.0f} on each, "
                "added one after another; its indices neither sorted nor "
                "unique", "likely", cost=costs.UNPRICED))
    return found


def _updates_per_slot(eqn: Any) -> tuple[int, int] | None:
    """How many index tuples a scatter adds, and into how many slots of
    its operand (the dimensions it indexes, and its batch dimensions: a
    take_along_axis's gradient scatters each row into its own row); None
    where it cannot tell."""
    numbers = eqn.params.get("dimension_numbers")
    operand, indices = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
    indexed = getattr(numbers, "scatter_dims_to_operand_dims", None)
    if numbers is None or indexed is None or not indices:
        return None
    batch = tuple(getattr(numbers, "operand_batching_dims", ()) or ())
    updates = math.prod(indices[:-1]) if len(indices) > 1 else 1
    slots = math.prod(operand[d] for d in (*indexed, *batch)) or 1
    return updates, slots


def all_pairs(eqs: list[Equation]) -> list[tuple[str, int]]:
    """Equations whose result is an all-pairs array of at least
    `ALL_PAIRS_BYTES`: `EXPANDS` times its operands' elements or more,
    made from two or more of them (``x[:, None] * x[None, :]``,
    ``q @ k.T``) of arrays (not scalars). A random draw from a key is
    large too, but pairs nothing. Calls (jit, custom derivatives, loops)
    are skipped: `equations` walks their bodies; so is an array shaped
    like a decomposition's operand (`DECOMPOSITIONS`). Each comes with its
    bytes."""
    whole = {tuple(v.aval.shape) for e in eqs if e.name in DECOMPOSITIONS
             for v in e.eqn.invars if hasattr(v.aval, "shape")}
    found = []
    for e in eqs:
        operands = [v.aval for v in e.eqn.invars
                    if math.prod(getattr(v.aval, "shape", ())) > 1]
        if len(operands) < 2 or any(
                next(_jaxprs(p), None) is not None
                for p in e.eqn.params.values()):
            continue
        for out in e.eqn.outvars:
            size = math.prod(out.aval.shape)
            nbytes = size * out.aval.dtype.itemsize
            if nbytes >= ALL_PAIRS_BYTES and size >= EXPANDS * sum(
                    math.prod(a.shape) for a in operands) and tuple(
                    out.aval.shape) not in whole:
                found.append((f"`{e}` makes "
                              f"{str(out.aval).split('{')[0]}, "
                              f"{nbytes / 2**20:,.0f} MiB", nbytes))
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
                                 f" keys: `{e}`", "likely",
                                 cost=costs.UNPRICED))
    return found


def _nbytes(variables: Any) -> int:
    return sum(math.prod(v.aval.shape) * v.aval.dtype.itemsize
               for v in variables if hasattr(v.aval, "dtype"))


def find_tiny_dots(eqs: list[Equation], rates: costs.Rates | None = None
                   ) -> list[Finding]:
    """Batched dot_generals that sum a short row into a few elements per
    batch (chapter 2's (3, K) @ (K, 1) with K under a warp), moving enough
    bytes for it to matter. XLA:GPU rewrites such a dot as a multiply and
    a reduction: where its module for the H100 is read, the reduction's
    emitter decides (`helpers.examine.in_module.find_kloop_reductions`)
    and the checker keeps this as a note."""
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
        moved = _nbytes([*e.eqn.invars, *e.eqn.outvars])
        tiny_output = (bool(lb) and batch >= 64 and inner < WARP
                       and free[0] * free[1] <= TINY)
        if tiny_output and moved >= MATTERS_BYTES:
            found.append(Finding(
                "tiny-dot", f"{batch:,} product"
                f"{'' if batch == 1 else 's'} of {free[0]} x {inner} "
                f"by {inner} x {free[1]}, {costs.quantity(moved, 'B')} "
                f"moved: `{e}`", "possible",
                cost="" if rates is None else costs.traffic(
                    moved, 1, rates, "its bytes, the least it takes")))
    return found


def find_in_loops(eqs: list[Equation], rates: costs.Rates | None = None
                  ) -> list[Finding]:
    """Random-number generation, collectives and callbacks inside loops,
    and callbacks anywhere, priced with ``rates`` where they are here."""
    found = []
    for e in eqs:
        if e.in_loop and e.name in RANDOM:
            found.append(Finding(
                "random-in-loop", f"`{e}` inside a loop body{_runs(e)}",
                "certain", cost="" if rates is None else "at least one "
                "kernel a step for the draw, against one before the loop; "
                + costs.launches(1, e.runs, rates)))
        if e.in_loop and e.name in COLLECTIVES:
            found.append(Finding(
                "collective-in-loop", f"`{e}` inside a loop body{_runs(e)}",
                "certain", cost="no H100 measurement of a collective's "
                "latency"))
        if e.name in CALLBACKS:
            where = "inside a loop body" if e.in_loop else "in the program"
            found.append(Finding(
                "host-callback", f"`{e.name}` {where}{_runs(e)}", "certain",
                cost="" if rates is None else "at least a round trip to "
                "the host each time; " + costs.round_trips(
                    e.runs, rates, "a call")))
    return found


def _runs(e: Equation) -> str:
    """How many times an equation runs a call, for the evidence."""
    if e.runs is None:
        return ", every step of a loop of unknown count"
    return f", {e.runs:,} times a call" if e.runs > 1 else ""


@dataclasses.dataclass(frozen=True)
class Loop:
    """A loop of the program: ``scan`` (its length known when tracing) or
    ``while`` (its trip count maybe not), and one step's work."""

    kind: str
    trips: int | None
    work: costs.Work


def loops(jaxpr: Any) -> list[Loop]:
    """Every loop in ``jaxpr`` and in the jaxprs nested in it whose step
    XLA can cost on its own, with the work of one step by XLA's cost
    analysis of its body (a loop nested in a body counts in that body's
    work). A body that does not lower alone (a collective over an axis of
    an enclosing shard_map, a loop inside a Pallas kernel) is left out."""
    found = []
    for e in equations(jaxpr):
        if e.name not in LOOPS:
            continue
        body = e.eqn.params["jaxpr" if e.name == "scan" else "body_jaxpr"]
        work = _work(body)
        if work is not None:
            trips = int(e.eqn.params["length"]) if e.name == "scan" \
                else None
            found.append(Loop(e.name, trips, work))
    return found


def _work(body: Any) -> costs.Work | None:
    """One step's flops and bytes: XLA's cost analysis of the body,
    lowered on its own (no compilation); None where it does not lower."""
    try:
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype)
                 for a in body.in_avals]
        analysis = jax.jit(jax_core.jaxpr_as_fun(body)).lower(
            *specs).cost_analysis() or {}
    except Exception:  # the body needs what encloses it
        return None
    if isinstance(analysis, (list, tuple)):  # one dict per device, once
        analysis = analysis[0] if analysis else {}
    return costs.Work(flops=float(analysis.get("flops", 0.0)),
                      bytes=float(analysis.get("bytes accessed", 0.0)))


def _one_per_pattern(found: list[Finding]) -> list[Finding]:
    """The first finding of each pattern, its evidence counting the rest."""
    by_pattern: dict[str, list[Finding]] = {}
    for f in found:
        by_pattern.setdefault(f.pattern, []).append(f)
    return [group[0] if len(group) == 1 else dataclasses.replace(
        group[0], evidence=f"{len(group)} times; first: {group[0].evidence}")
        for group in by_pattern.values()]


def find_all(jaxpr: Any, rates: costs.Rates | None = None
             ) -> list[Finding]:
    """Every jaxpr pattern in ``jaxpr``, priced with the H100's
    ``rates`` where the pattern has a price (`helpers.examine.costs`)."""
    eqs = list(equations(jaxpr))
    return _one_per_pattern([
        *find_in_loops(eqs, rates), *find_tiny_dots(eqs, rates),
        *find_scatter(eqs), *find_sort_64(eqs), *find_float64(eqs, rates),
        *find_tf32(eqs)])
