"""One chain's step as elementwise arithmetic on lane vectors.

Mosaic GPU lays an array over the 128 threads of a warpgroup, one element
per thread, and has no layout for the tiny vectors and matrices of one
chain's step. `scalarise` evaluates the step's jaxpr with every number of
the chain's state held as one *lane vector*: a vector with that number for
each of 128 chains, one per thread. Elementwise operations stay
elementwise; a broadcast, reshape or transpose only rearranges which lane
vector sits where; a dot product becomes a sum of products and a sum over
an axis a sum of lane vectors. What comes out is only elementwise
arithmetic on 128-wide vectors, which Mosaic GPU compiles, and each thread
computes exactly its own chain's step. `helpers.lanes` builds the kernel
around it.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jex_core

from helpers.padding import ELEMENTWISE

LANES = 128  # threads of a warpgroup: one chain each
_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr",
          "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
          "remat": "jaxpr", "checkpoint": "jaxpr"}
_REDUCE = {"reduce_sum": jnp.add, "reduce_max": jnp.maximum,
           "reduce_min": jnp.minimum}

# A per-chain value: a numpy object array of the chain's shape whose
# entries are lane vectors (LANES,) or, for constants, scalars.
Scalarised = np.ndarray


class Unsupported(NotImplementedError):
    """The step uses an operation this scalariser cannot run; the
    message names it."""


def unsupported_operations(fn: Callable[..., Any], *args: Any) -> set[str]:
    """The operations of ``fn(*args)`` this scalariser cannot run."""
    known = ELEMENTWISE | set(_CALLS) | set(_REDUCE) | {
        "broadcast_in_dim", "reshape", "squeeze", "expand_dims",
        "transpose", "dot_general", "iota"}
    from helpers.fused import _primitive_names  # fused imports this
    return _primitive_names(jax.make_jaxpr(fn)(*args).jaxpr) - known


# --- one chain's step, scalarised ------------------------------------------

def scalarise(jaxpr: Any, consts: list[Any], args: list[Scalarised]
              ) -> list[Scalarised]:
    """Evaluate ``jaxpr`` on scalarised values; returns its outputs."""
    values: dict[Any, Scalarised] = {}

    def read(var: Any) -> Scalarised:
        if isinstance(var, jex_core.Literal):
            return np.array(var.val, dtype=object)
        return values[var]

    for var, value in zip(jaxpr.constvars, consts):
        values[var] = value
    for var, value in zip(jaxpr.invars, args):
        values[var] = value
    for eqn in jaxpr.eqns:
        outs = _apply(eqn, [read(v) for v in eqn.invars])
        for var, value in zip(eqn.outvars, outs):
            values[var] = value
    return [read(v) for v in jaxpr.outvars]


def _apply(eqn: Any, args: list[Scalarised]) -> list[Scalarised]:
    name, params = eqn.primitive.name, eqn.params
    out_aval = eqn.outvars[0].aval
    if name in _CALLS:
        inner = params[_CALLS[name]]
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
        out[index] = primitive.bind(*_same_shape(operands, dtypes),
                                    **params)
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
                total = None
                for k in np.ndindex(*contracted):
                    term = lhs_t[(*b, *i, *k)] * rhs_t[(*b, *j, *k)]
                    total = term if total is None else total + term
                out[(*b, *i, *j)] = total
    return out


def _reduce(x: Scalarised, axes: tuple[int, ...],
            combine: Callable[[Any, Any], Any]) -> Scalarised:
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = x.transpose((*kept, *axes))
    shape = moved.shape[:len(kept)]
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        values = moved[index].ravel()
        total = values[0]
        for value in values[1:]:
            total = combine(total, value)
        out[index] = total
    return out
