"""Chains in lanes: scans as one Mosaic GPU kernel, one chain per thread.

Mosaic GPU, Pallas's backend for Hopper and newer, lays every array over
the 128 threads of a warpgroup; it has no layout for the tiny vectors and
matrices of one chain's step (a 12-wide hidden layer). So this module
turns the problem sideways: 128 chains run side by side, one per thread
(a *lane*), and one chain's step is *scalarised*: each number of the
chain's state becomes one 128-wide lane vector holding that number for
every chain, and every operation of the step (read from its jaxpr)
becomes elementwise operations on lane vectors: a 12-wide hidden layer
is 12 lane vectors, a dot product is a sum of products. Mosaic GPU
compiles elementwise lane arithmetic, and each thread then runs exactly
one chain's step, dependent instruction after dependent instruction.

`launch` is the kernel: ``chains`` chains (padded to whole warpgroups,
one per program of the grid), inputs streamed from global memory in
chunks of steps through shared memory, the state in registers from the
first step to the last. `helpers.fused` and `helpers.chains` call it
when they compile for a Hopper GPU; on a CPU with jax 0.12 or newer it
runs in Mosaic GPU's interpreter, which is how its results are tested.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jex_core

from helpers.padding import ELEMENTWISE

LANES = 128          # threads of a warpgroup: one chain each
STEPS_PER_CHUNK = 64  # steps of inputs staged in shared memory at a time
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


def available() -> str | None:
    """None when this jax has Mosaic GPU's Pallas API, else why not."""
    try:
        from jax.experimental.pallas import mosaic_gpu  # noqa: F401
    except ImportError as err:
        return f"this jax has no Mosaic GPU backend for Pallas ({err})"
    return None


def interpreter_missing() -> bool:
    """True where Mosaic GPU has no interpreter (jax before 0.12)."""
    try:
        from jax.experimental.pallas import mosaic_gpu
    except ImportError:
        return True
    return not hasattr(mosaic_gpu, "InterpretGPUParams")


def unsupported_operations(fn: Callable[..., Any], *args: Any) -> set[str]:
    """The operations of ``fn(*args)`` this scalariser cannot run."""
    known = ELEMENTWISE | set(_CALLS) | set(_REDUCE) | {
        "broadcast_in_dim", "reshape", "squeeze", "expand_dims",
        "transpose", "dot_general", "iota"}
    from helpers.fused import _primitive_names
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


# --- the kernel ---------------------------------------------------------------

def launch(fn: Callable[..., Any], length: int, reverse: bool, init: Any,
           xs: Any, consts: tuple[Any, ...], *, interpret: bool = False
           ) -> tuple[Any, Any]:
    """``chains`` independent scans of ``fn(carry, x, *consts)`` as one
    Mosaic GPU kernel, one chain per thread.

    Args:
        fn: one chain's step, ``(carry, x, *consts) -> (carry, y)``.
        length: steps.
        reverse: run the steps from last to first.
        init: carries, every leaf ``(chains, ...)``.
        xs: inputs, every leaf ``(chains, length, ...)``.
        consts: arrays every chain shares (weights).
        interpret: run in Mosaic GPU's interpreter (jax 0.12 or newer).

    Returns:
        ``(final, ys)`` with the leading chain axis.
    """
    from jax.experimental.pallas import mosaic_gpu as plgpu

    carry_leaves, carry_tree = jax.tree.flatten(init)
    x_leaves, x_tree = jax.tree.flatten(xs)
    chains = carry_leaves[0].shape[0]
    carry1 = jax.tree.map(lambda a: jax.ShapeDtypeStruct(
        a.shape[1:], a.dtype), init)
    x1 = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[2:], a.dtype),
                      xs)
    closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(
        carry1, x1, *consts)
    y_leaves, y_tree = jax.tree.flatten(out_shape[1])
    # Arrays the step closes over, as scalars (the same for every chain).
    captured = [np.asarray(c).astype(object) for c in closed.consts]
    blocks = -(-chains // LANES)
    chunk = min(STEPS_PER_CHUNK, length)
    chunks = -(-length // chunk)
    steps = chunks * chunk

    # Lanes last: a chain's numbers are the minor axis, so one step's
    # input for 128 chains is one contiguous row of 128 values.
    c_in = [_lanes_last(a, blocks * LANES, 1) for a in carry_leaves]
    x_in = [_steps_lanes_last(a, blocks * LANES, steps, reverse)
            for a in x_leaves]
    flat_consts = jnp.concatenate(
        [jnp.ravel(c).astype(jnp.float32) for c in consts]
        + [jnp.zeros(1, jnp.float32)])
    # Mosaic GPU copies whole multiples of 128 bytes (32 float32s).
    flat_consts = jnp.pad(flat_consts, (0, -flat_consts.size % 32))
    const_shapes = [jnp.shape(c) for c in consts]
    const_dtypes = [jnp.result_type(c) for c in consts]
    y_out = [jax.ShapeDtypeStruct((steps, int(np.prod(s.shape)),
                                   blocks * LANES), s.dtype)
             for s in y_leaves]
    c_out = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in c_in]
    n_c, n_x, n_y = len(c_in), len(x_in), len(y_out)

    def kernel(*refs: Any) -> None:
        c_g, x_g = refs[:n_c], refs[n_c:n_c + n_x]
        k_g = refs[n_c + n_x]
        co_g = refs[n_c + n_x + 1:n_c + n_x + 1 + n_c]
        y_g = refs[n_c + n_x + 1 + n_c:n_c + n_x + 1 + n_c + n_y]
        scratch = refs[n_c + n_x + 1 + n_c + n_y:]
        c_s, x_s = scratch[:n_c], scratch[n_c:n_c + n_x]
        k_s = scratch[n_c + n_x]
        y_s = scratch[n_c + n_x + 1:n_c + n_x + 1 + n_y]
        bar = scratch[-1]
        lanes = jax.lax.axis_index("block") * LANES
        window = plgpu_ds(lanes)
        for g, s in zip(c_g, c_s):
            plgpu.copy_gmem_to_smem(g.at[:, window], s, bar)
            plgpu.barrier_wait(bar)
        plgpu.copy_gmem_to_smem(k_g, k_s, bar)
        plgpu.barrier_wait(bar)
        consts_now = _read_consts(k_s, const_shapes, const_dtypes)
        state = tuple(s[e] for s, shape in zip(c_s, c_in)
                      for e in range(shape.shape[0]))

        def run_chunk(j: Any, state: tuple[Any, ...]) -> tuple[Any, ...]:
            rows = plgpu_ds(j * chunk, chunk)
            for g, s in zip(x_g, x_s):
                plgpu.copy_gmem_to_smem(g.at[rows, :, window], s, bar)
                plgpu.barrier_wait(bar)

            def one_step(t: Any, state: tuple[Any, ...]) -> tuple[Any, ...]:
                carry = _unflatten(state, carry_tree, carry1)
                x = jax.tree.unflatten(x_tree, [
                    _from_rows(s, t, a.shape) for s, a in zip(
                        x_s, jax.tree.leaves(x1))])
                outs = scalarise(closed.jaxpr, captured,
                                 [*jax.tree.leaves(carry),
                                  *jax.tree.leaves(x), *consts_now])
                new_carry = outs[:len(carry_leaves)]
                for s, y in zip(y_s, outs[len(carry_leaves):]):
                    for e, value in enumerate(np.ravel(y)):
                        s[t, e] = _as_lanes(value)
                valid = j * chunk + t < length
                return tuple(
                    jnp.where(valid, _as_lanes(new), old) for new, old in
                    zip([v for c in new_carry for v in np.ravel(c)],
                        state))

            state = jax.lax.fori_loop(0, chunk, one_step, state)
            plgpu.commit_smem()
            for g, s in zip(y_g, y_s):
                plgpu.copy_smem_to_gmem(s, g.at[rows, :, window])
            plgpu.wait_smem_to_gmem(0)
            return state

        state = jax.lax.fori_loop(0, chunks, run_chunk, state)
        start = 0
        for s, shape in zip(c_s, c_in):
            for e in range(shape.shape[0]):
                s[e] = state[start + e]
            start += shape.shape[0]
        plgpu.commit_smem()
        for g, s in zip(co_g, c_s):
            plgpu.copy_smem_to_gmem(s, g.at[:, window])
        plgpu.wait_smem_to_gmem(0)

    smem = [plgpu.SMEM((a.shape[0], LANES), a.dtype) for a in c_in]
    smem += [plgpu.SMEM((chunk, a.shape[1], LANES), a.dtype) for a in x_in]
    smem += [plgpu.SMEM(flat_consts.shape, flat_consts.dtype)]
    smem += [plgpu.SMEM((chunk, s.shape[1], LANES), s.dtype) for s in y_out]
    smem += [plgpu.Barrier()]
    options = {"interpret": plgpu.InterpretGPUParams()} if interpret else {}
    # One value per thread: the Lane semantics of Mosaic GPU.
    params = plgpu.CompilerParams(
        lowering_semantics=plgpu.LoweringSemantics.Lane)
    outs = plgpu.kernel(kernel, out_type=(*c_out, *y_out),
                        scratch_types=smem, grid=(blocks,),
                        grid_names=("block",), compiler_params=params,
                        **options)(
        *c_in, *x_in, flat_consts)
    final = [_chains_first(o, a.shape[1:], chains)
             for o, a in zip(outs[:n_c], carry_leaves)]
    ys = [_ys_chains_first(o, s.shape, chains, length, reverse)
          for o, s in zip(outs[n_c:], y_leaves)]
    return (jax.tree.unflatten(carry_tree, final),
            jax.tree.unflatten(y_tree, ys))


def plgpu_ds(start: Any, size: int = LANES) -> Any:
    from jax.experimental import pallas as pl
    return pl.ds(start, size)


def _as_lanes(value: Any) -> Any:
    return value if jnp.ndim(value) == 1 else jnp.broadcast_to(
        jnp.asarray(value), (LANES,))


def _read_consts(ref: Any, shapes: list[tuple[int, ...]],
                 dtypes: list[Any]) -> list[Scalarised]:
    """Every constant as a scalarised array of scalars read from shared
    memory (each chain shares them, so they are not lane vectors)."""
    out, start = [], 0
    for shape, dtype in zip(shapes, dtypes):
        size = int(np.prod(shape))
        values = np.empty(size, dtype=object)
        for i in range(size):
            values[i] = ref[start + i].astype(dtype)
        out.append(values.reshape(shape))
        start += size
    return out


def _objects(values: Any, shape: tuple[int, ...]) -> Scalarised:
    """Lane vectors (tracers) in a numpy object array of ``shape``,
    without numpy trying to convert them."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out.reshape(shape)


def _unflatten(state: tuple[Any, ...], tree: Any, shapes: Any) -> Any:
    leaves, start = [], 0
    for s in jax.tree.leaves(shapes):
        size = int(np.prod(s.shape))
        leaves.append(_objects(state[start:start + size], s.shape))
        start += size
    return jax.tree.unflatten(tree, leaves)


def _from_rows(ref: Any, t: Any, shape: tuple[int, ...]) -> Scalarised:
    size = int(np.prod(shape))
    return _objects([ref[t, e] for e in range(size)], shape)


def _lanes_last(a: jax.Array, width: int, lead: int) -> jax.Array:
    """(chains, ...) -> (elements, width): chains padded by repeating the
    last one, as the minor axis."""
    flat = a.reshape(a.shape[0], -1)
    flat = jnp.concatenate([flat, jnp.repeat(flat[-1:], width
                                             - flat.shape[0], 0)])
    return flat.T


def _steps_lanes_last(a: jax.Array, width: int, steps: int,
                      reverse: bool) -> jax.Array:
    """(chains, length, ...) -> (steps, elements, width)."""
    flat = a.reshape(a.shape[0], a.shape[1], -1)
    if reverse:
        flat = flat[:, ::-1]
    flat = jnp.pad(flat, ((0, width - flat.shape[0]),
                          (0, steps - flat.shape[1]), (0, 0)))
    return flat.transpose(1, 2, 0)


def _chains_first(out: jax.Array, shape: tuple[int, ...],
                  chains: int) -> jax.Array:
    return out.T[:chains].reshape(chains, *shape)


def _ys_chains_first(out: jax.Array, shape: tuple[int, ...], chains: int,
                     length: int, reverse: bool) -> jax.Array:
    ys = out[:length].transpose(2, 0, 1)[:chains].reshape(
        chains, length, *shape)
    return ys[:, ::-1] if reverse else ys
