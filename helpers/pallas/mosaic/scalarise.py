"""One chain's step as elementwise arithmetic on lane vectors.

Mosaic GPU lays an array over the 128 threads of a warpgroup, one element per
thread, and has no layout for the tiny vectors and matrices of one chain's
step. `scalarise` evaluates the step's jaxpr with every number of the chain's
state held as one *lane vector*: a vector with that number for each of 128
chains, one per thread. Elementwise operations stay elementwise; a broadcast,
reshape or transpose only rearranges which lane vector sits where; a dot
product becomes a sum of products and a sum over an axis a sum of lane vectors.
What comes out is only elementwise arithmetic on 128-wide vectors, which Mosaic
GPU compiles, and each thread computes exactly its own chain's step.
`helpers.pallas.mosaic.chains` builds the kernel around it.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from helpers.pallas.jaxprs import CALLS, ELEMENTWISE, evaluate, primitive_names

LANES = 128  # threads of a warpgroup: one chain each
_REDUCE = {"reduce_sum": jnp.add, "reduce_max": jnp.maximum,
           "reduce_min": jnp.minimum}

# A per-chain value: a numpy object array of the chain's shape whose
# entries are lane vectors (LANES,) or, for constants, scalars.
Scalarised = np.ndarray


class Unsupported(NotImplementedError):
    """The step uses an operation this scalariser cannot run; the
    message names it."""


def unsupported_operations(fn: Callable[..., Any], *args: Any) -> set[str]:
    """The operations of ``fn(*args)`` that this scalariser cannot run or
    that Mosaic GPU cannot compile, and ``'float64'`` when an argument is
    one (Mosaic GPU's copies to shared memory, TMA, take no float64)."""
    known = (ELEMENTWISE - mosaic_lacks()) | set(CALLS) | set(_REDUCE) | {
        "broadcast_in_dim", "reshape", "squeeze", "expand_dims",
        "transpose", "dot_general", "iota"}
    missing = primitive_names(jax.make_jaxpr(fn)(*args).jaxpr) - known
    if any(jnp.result_type(leaf) == jnp.float64
           for leaf in jax.tree.leaves(args)):
        missing.add("float64")
    return missing


def mosaic_lacks() -> set[str]:
    """Elementwise operations this jax's Mosaic GPU cannot lower with one
    value per thread, less those `_STAND_INS` rewrites (jax 0.11.2 lacks
    ``log1p``, which ``softplus`` uses, and ``add_any``, which every
    gradient uses). Read from Mosaic GPU's own table of lowering rules;
    an empty set where this jax has no Mosaic GPU."""
    try:
        from jax._src.pallas.mosaic_gpu import lowering
    except ImportError:
        return set()
    rules = [names for (lowering_kind, threads), names
             in lowering.mosaic_lowering_rules.items()
             if lowering_kind.name == "Lane" and threads.name == "Warpgroup"]
    if not rules:
        return set()
    lowered = {primitive.name for primitive in rules[0]}
    return set(ELEMENTWISE - lowered - set(_STAND_INS))


def _log1p(x: jax.Array) -> jax.Array:
    """log(1 + x), accurate for tiny x (Goldberg's correction: the
    rounding of 1 + x cancels in log(u) / (u - 1))."""
    u = 1 + x
    d = u - 1
    return jnp.where(d == 0, x, jnp.log(u) * (x / jnp.where(d == 0, 1, d)))


def _expm1(x: jax.Array) -> jax.Array:
    """exp(x) - 1, accurate for tiny x (Kahan's correction)."""
    u = jnp.exp(x)
    logu = jnp.log(u)
    inner = (u - 1) * (x / jnp.where(logu == 0, 1, logu))
    return jnp.where(u == 1, x, jnp.where(u == 0, -1, inner))


# Elementwise operations written with others, for Mosaic GPU's sake.
_STAND_INS: dict[str, Callable[..., Any]] = {
    "log1p": _log1p, "expm1": _expm1, "add_any": lambda x, y: x + y,
    "copy": lambda x: x, "copy_p": lambda x: x}


# --- one chain's step, scalarised ------------------------------------------

def scalarise(jaxpr: Any, consts: list[Any], args: list[Scalarised]
              ) -> list[Scalarised]:
    """Evaluate ``jaxpr`` on scalarised values; returns its outputs."""
    return evaluate(jaxpr, consts, args, _apply,
                    literal=lambda value: np.array(value, dtype=object))


def _apply(eqn: Any, args: list[Scalarised]) -> list[Scalarised]:
    name, params = eqn.primitive.name, eqn.params
    out_aval = eqn.outvars[0].aval
    if name in CALLS:
        inner = params[CALLS[name]]
        return scalarise(getattr(inner, "jaxpr", inner),
                         getattr(inner, "consts", []), args)
    if name in ELEMENTWISE:
        out = _elementwise(eqn.primitive, params, args, out_aval,
                           [v.aval.dtype for v in eqn.invars])
    elif name == "broadcast_in_dim":
        out = _broadcast(args[0], params["shape"],
                         params["broadcast_dimensions"])
    elif name in ("reshape", "squeeze", "expand_dims"):
        out = args[0].reshape(out_aval.shape)
    elif name == "transpose":
        out = args[0].transpose(params["permutation"])
    elif name == "dot_general":
        out = _dot(args[0], args[1], params["dimension_numbers"],
                   out_aval)
    elif name in _REDUCE:
        out = _reduce(args[0], params["axes"], _REDUCE[name])
    elif name == "iota":
        out = np.broadcast_to(np.arange(params["shape"][
            params["dimension"]]).reshape([-1 if i == params["dimension"]
                                           else 1 for i in range(
                                               len(params["shape"]))]),
            params["shape"]).astype(object)
    else:
        raise Unsupported(
            f"lanes: the step uses {name!r}, which this scalariser does "
            "not run (it runs elementwise operations, broadcasts, "
            "reshapes, transposes, dots and sums, maxima and minima).")
    return list(out) if eqn.primitive.multiple_results else [out]


def _elementwise(primitive: Any, params: dict[str, Any],
                 args: list[Scalarised], out_aval: Any,
                 dtypes: list[Any]) -> Scalarised:
    shape = tuple(out_aval.shape)
    spread = [np.broadcast_to(a, shape) for a in args]
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        operands = [a[index] for a in spread]
        operands = _same_shape(operands, dtypes)
        stand_in = _STAND_INS.get(primitive.name)
        out[index] = stand_in(*operands) if stand_in else \
            primitive.bind(*operands, **params)
    return out


def _same_shape(values: list[Any], dtypes: list[Any]) -> list[Any]:
    """Lane vectors and scalars mixed: each value as an array of its
    operand's dtype, the scalars broadcast to lanes when any value is a
    lane vector."""
    arrays = [jnp.asarray(v, dtype=d) for v, d in zip(values, dtypes)]
    if not any(a.ndim == 1 for a in arrays):
        return arrays
    return [a if a.ndim == 1 else jnp.broadcast_to(a, (LANES,))
            for a in arrays]


def _broadcast(x: Scalarised, shape: tuple[int, ...],
               dims: tuple[int, ...]) -> Scalarised:
    expanded = [1] * len(shape)
    for source, target in enumerate(dims):
        expanded[target] = x.shape[source]
    return np.broadcast_to(x.reshape(expanded), shape)


def _dot(lhs: Scalarised, rhs: Scalarised, numbers: Any,
         out_aval: Any) -> Scalarised:
    (lhs_c, rhs_c), (lhs_b, rhs_b) = numbers
    lhs_free = [d for d in range(lhs.ndim) if d not in (*lhs_c, *lhs_b)]
    rhs_free = [d for d in range(rhs.ndim) if d not in (*rhs_c, *rhs_b)]
    lhs_t = lhs.transpose((*lhs_b, *lhs_free, *lhs_c))
    rhs_t = rhs.transpose((*rhs_b, *rhs_free, *rhs_c))
    nb, nc = len(lhs_b), len(lhs_c)
    batch = lhs_t.shape[:nb]
    lfree, rfree = lhs_t.shape[nb:lhs_t.ndim - nc], rhs_t.shape[
        nb:rhs_t.ndim - nc]
    contracted = lhs_t.shape[lhs_t.ndim - nc:]
    out = np.empty(tuple(out_aval.shape), dtype=object)
    for b in np.ndindex(*batch):
        for i in np.ndindex(*lfree):
            for j in np.ndindex(*rfree):
                out[(*b, *i, *j)] = tree_sum(
                    [lhs_t[(*b, *i, *k)] * rhs_t[(*b, *j, *k)]
                     for k in np.ndindex(*contracted)], _add)
    return out


def _add(a: Any, b: Any) -> Any:
    return a + b


def tree_sum(values: list[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """Combine ``values`` in pairs, then the pairs' results in pairs, and
    so on: ceil(log2 n) dependent steps instead of n - 1 one after the
    other. A chain's step waits for each dependent operation in turn, so
    the depth of its sums, not their count, is what costs it time.

    Example:
        >>> tree_sum([1, 2, 3, 4, 5], lambda a, b: a + b)
        15
    """
    if not values:
        raise ValueError("tree_sum needs at least one value.")
    level = list(values)
    while len(level) > 1:
        paired = [combine(a, b) for a, b in zip(level[::2], level[1::2])]
        level = paired + level[len(paired) * 2:]
    return level[0]


def _reduce(x: Scalarised, axes: tuple[int, ...],
            combine: Callable[[Any, Any], Any]) -> Scalarised:
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = x.transpose((*kept, *axes))
    shape = moved.shape[:len(kept)]
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        out[index] = tree_sum(list(moved[index].ravel()), combine)
    return out
