"""Run a JAX function on arrays padded to powers of two, with equal results.

Pallas's GPU backend compiles through Triton, and Triton only handles
arrays whose every dimension is a power of two: a hidden layer of 12 units
must become 16. Padding the *inputs* with zeros is not enough, because the
function then computes on the padding: ``softplus(0)`` is ``log 2``, not
0, and a sum over a padded axis would add it in.

`pad_function` fixes that by interpreting the function's jaxpr one
operation at a time on padded arrays, remembering each value's true
(logical) shape:

* elementwise operations, broadcasts, transposes and iotas run on the
  padded arrays as they are: the padding may fill with garbage, but it
  never mixes into the logical part;
* operations that *combine* elements along an axis (sums, maxima, dots,
  arg-max) first overwrite the padding of the combined axes with the
  operation's identity (0 for a sum, -inf for a max), so garbage cannot
  reach the logical part;
* a dot that Triton's matrix unit cannot take (a vector, a batch, a side
  under 16) becomes a multiply and a sum, which Triton compiles for any
  shape.

Anything else is refused with the operation's name. The caller pads the
inputs (`pad_array`) and slices the outputs (`unpad_array`).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax

from helpers.pallas.jaxprs import CALLS, ELEMENTWISE, evaluate

# Reductions and the value that leaves each unchanged.
_IDENTITY = {
    "reduce_sum": lambda dtype: 0,
    "reduce_prod": lambda dtype: 1,
    "reduce_max": lambda dtype: _lowest(dtype),
    "reduce_min": lambda dtype: _highest(dtype),
    "argmax": lambda dtype: _lowest(dtype),
    "argmin": lambda dtype: _highest(dtype),
    "reduce_or": lambda dtype: False,
    "reduce_and": lambda dtype: True,
}
# Triton's matrix-multiply instruction needs tiles of at least 16 a side.
MIN_DOT_SIDE = 16


def padded_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Each dimension rounded up to a power of two (1 stays 1).

    Example:
        >>> padded_shape((1, 12, 16))
        (1, 16, 16)
    """
    if any(d < 1 for d in shape):
        raise ValueError(f"cannot pad the shape {shape}: every dimension "
                         "must hold at least one element.")
    return tuple(1 << (d - 1).bit_length() for d in shape)


def pad_array(x: Any, leading: int = 0) -> jax.Array:
    """``x`` zero-padded to `padded_shape`, except its first ``leading``
    dimensions (a scan's step axis, which need not be a power of two)."""
    x = jnp.asarray(x)
    keep, rest = x.shape[:leading], x.shape[leading:]
    target = keep + padded_shape(rest)
    if target == x.shape:
        return x
    return jnp.pad(x, [(0, t - s) for s, t in zip(x.shape, target)])


def unpad_array(x: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """The logical ``shape`` corner of a padded array (trailing dims)."""
    lead = x.ndim - len(shape)
    return x[(slice(None),) * lead + tuple(slice(0, d) for d in shape)]


def pad_function(fn: Callable[..., Any], *example_args: Any
                 ) -> Callable[..., Any]:
    """``fn`` as a function of padded arrays that returns padded arrays.

    Args:
        fn: a JAX function of arrays (pytrees allowed).
        example_args: arguments with the *logical* shapes, to trace ``fn``.

    Returns:
        ``padded_fn(*padded_args)``: the same pytree of outputs as ``fn``,
        each leaf padded; its logical part equals ``fn``'s result.

    Raises:
        NotImplementedError: ``fn`` uses an operation this interpreter
            cannot pad safely; the message names it.
    """
    closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(
        *example_args)
    out_tree = jax.tree.structure(out_shape)

    consts = [pad_array(c) for c in closed.consts]

    def padded_fn(*padded_args: Any) -> Any:
        outs = _eval(closed.jaxpr, consts, jax.tree.leaves(padded_args))
        return jax.tree.unflatten(out_tree, outs)

    return padded_fn


def _eval(jaxpr: Any, consts: Any, args: list[Any]) -> list[Any]:
    """Evaluate ``jaxpr`` on padded values, one equation at a time."""
    return evaluate(jaxpr, consts, args, _apply)


def _apply(eqn: Any, args: list[Any]) -> list[Any]:
    name, params = eqn.primitive.name, eqn.params
    logical = [tuple(getattr(v.aval, "shape", ())) for v in eqn.invars]
    if name in ELEMENTWISE:
        out = eqn.primitive.bind(*args, **params)
    elif name in CALLS:
        inner = params[CALLS[name]]
        inner = getattr(inner, "jaxpr", inner), getattr(inner, "consts", [])
        return _eval(inner[0], inner[1], args)
    elif name in ("broadcast_in_dim", "iota"):
        out = eqn.primitive.bind(*args, **{
            **params, "shape": padded_shape(params["shape"])})
    elif name == "transpose":
        out = eqn.primitive.bind(*args, **params)
    elif name in ("reshape", "squeeze"):
        out = _reshape(args[0], logical[0], eqn.outvars[0].aval.shape)
    elif name in _IDENTITY:
        fill = _IDENTITY[name](args[0].dtype)
        masked = _mask(args[0], logical[0], params["axes"], fill)
        out = eqn.primitive.bind(masked, *args[1:], **params)
    elif name == "dot_general":
        out = _dot(args, logical, params)
    else:
        raise NotImplementedError(
            f"padding to powers of two: the operation {name!r} may mix "
            "padded elements into real ones, and this interpreter does not "
            "know how to keep them apart. Write that part with "
            "elementwise operations, sums, maxima and dots.")
    return list(out) if eqn.primitive.multiple_results else [out]


def _mask(x: jax.Array, logical: tuple[int, ...], axes: Any,
          fill: Any) -> jax.Array:
    """``x`` with its padding along ``axes`` replaced by ``fill``."""
    keep = None
    for axis in axes:
        if x.shape[axis] != logical[axis]:
            inside = lax.broadcasted_iota(jnp.int32, x.shape, axis) \
                < logical[axis]
            keep = inside if keep is None else keep & inside
    return x if keep is None else jnp.where(keep, x, fill)


def _dot(args: list[Any], logical: list[tuple[int, ...]],
         params: dict[str, Any]) -> jax.Array:
    (lhs_c, rhs_c), (lhs_b, rhs_b) = params["dimension_numbers"]
    lhs = _mask(args[0], logical[0], lhs_c, 0)
    rhs = _mask(args[1], logical[1], rhs_c, 0)
    square = (lhs.ndim == rhs.ndim == 2 and not lhs_b and
              min(*lhs.shape, *rhs.shape) >= MIN_DOT_SIDE)
    if square:
        return lax.dot_general(lhs, rhs, **params)
    return _multiply_and_sum(lhs, rhs, (lhs_c, rhs_c), (lhs_b, rhs_b),
                             params.get("preferred_element_type"))


def _multiply_and_sum(lhs: jax.Array, rhs: jax.Array, contract: Any,
                      batch: Any, out_dtype: Any) -> jax.Array:
    """A dot as broadcast-multiply-reduce, in `lax.dot_general`'s output
    order: batch dims, then lhs free dims, then rhs free dims."""
    (lhs_c, rhs_c), (lhs_b, rhs_b) = contract, batch
    lhs_free = [d for d in range(lhs.ndim) if d not in (*lhs_c, *lhs_b)]
    rhs_free = [d for d in range(rhs.ndim) if d not in (*rhs_c, *rhs_b)]
    nb, nl, nr, nc = len(lhs_b), len(lhs_free), len(rhs_free), len(lhs_c)
    # Common layout: (batch..., lhs free..., rhs free..., contracted...).
    lhs = lax.transpose(lhs, (*lhs_b, *lhs_free, *lhs_c))
    rhs = lax.transpose(rhs, (*rhs_b, *rhs_free, *rhs_c))
    shape = (*lhs.shape[:nb + nl], *rhs.shape[nb:nb + nr],
             *lhs.shape[nb + nl:])
    lhs_dims = (*range(nb + nl), *range(nb + nl + nr, nb + nl + nr + nc))
    rhs_dims = (*range(nb), *range(nb + nl, nb + nl + nr + nc))
    product = (lax.broadcast_in_dim(lhs, shape, lhs_dims)
               * lax.broadcast_in_dim(rhs, shape, rhs_dims))
    total = jnp.sum(product, axis=tuple(range(nb + nl + nr, len(shape))))
    return total.astype(out_dtype) if out_dtype is not None else total


def _reshape(x: jax.Array, before: tuple[int, ...],
             after: tuple[int, ...]) -> jax.Array:
    """Reshapes that only add or drop dimensions of size 1."""
    if [d for d in before if d != 1] != [d for d in after if d != 1]:
        raise NotImplementedError(
            f"padding to powers of two: a reshape from {before} to {after} "
            "moves elements across rows, which would mix in the padding. "
            "Keep the step's arrays in one shape, or add and drop only "
            "dimensions of size 1.")
    return jnp.reshape(x, padded_shape(after) if after else ())


def _lowest(dtype: Any) -> Any:
    if jnp.issubdtype(dtype, jnp.floating):
        return -jnp.inf
    return jnp.iinfo(dtype).min if jnp.issubdtype(dtype, jnp.integer) \
        else False


def _highest(dtype: Any) -> Any:
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.inf
    return jnp.iinfo(dtype).max if jnp.issubdtype(dtype, jnp.integer) \
        else True
