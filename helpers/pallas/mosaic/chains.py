"""Chains in lanes: scans as one Mosaic GPU kernel, one chain per thread.

Mosaic GPU, Pallas's backend for Hopper and newer, lays every array over
the 128 threads of a warpgroup; it has no layout for the tiny vectors and
matrices of one chain's step (a 12-wide hidden layer). So this module
turns the problem sideways: 128 chains run side by side, one per thread
(a *lane*), and one chain's step is *scalarised*
(`helpers.pallas.mosaic.scalarise`):
each number of the chain's state becomes one 128-wide lane vector, and
every operation of the step becomes elementwise arithmetic on those, which
Mosaic GPU compiles. Each thread then runs exactly one chain's step,
dependent instruction after dependent instruction.

`launch` is the kernel: ``chains`` chains (padded to whole warpgroups,
one per program of the grid), inputs streamed from global memory in
chunks of steps through shared memory, the state in registers from the
first step to the last. `helpers.pallas.scan` and
`helpers.pallas.triton.chains` call it
when they compile for a Hopper GPU; on a CPU with jax 0.12 or newer it
runs in Mosaic GPU's interpreter, which is how its results are tested.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from helpers.pallas.mosaic.scalarise import (
    LANES,
    Scalarised,
    scalarise,
    unsupported_operations,
)

STEPS_PER_CHUNK = 64  # steps of inputs staged in shared memory at a time
# Shared memory one program may use: the H100's 227 KiB per block, less
# room for what Mosaic GPU adds (barriers, alignment).
SMEM_BUDGET = 200 * 1024


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


# --- the kernel --------------------------------------------------------

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
    chunk = _steps_per_chunk(length, init, xs, out_shape[1], consts)
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

    smem: list[Any] = [plgpu.SMEM((a.shape[0], LANES), a.dtype)
                       for a in c_in]
    smem += [plgpu.SMEM((chunk, a.shape[1], LANES), a.dtype) for a in x_in]
    smem += [plgpu.SMEM(flat_consts.shape, flat_consts.dtype)]
    smem += [plgpu.SMEM((chunk, s.shape[1], LANES), s.dtype) for s in y_out]
    smem += [plgpu.Barrier()]
    options: dict[str, Any] = {}
    if interpret:  # jax 0.12 added Mosaic GPU's interpreter; older stubs
        # lack the name, so it is looked up by string
        options["interpret"] = getattr(  # noqa: B009
            plgpu, "InterpretGPUParams")()
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


def _steps_per_chunk(length: int, init: Any, xs: Any, ys: Any,
                     consts: tuple[Any, ...]) -> int:
    """How many steps of inputs and outputs to stage in shared memory at
    a time: `STEPS_PER_CHUNK`, or fewer when their lane vectors would not
    fit in `SMEM_BUDGET` beside the carries and the constants.

    Raises:
        ValueError: not even one step fits.
    """
    fixed = _lane_bytes(init, 1) + _const_bytes(consts)
    per_step = _lane_bytes(xs, 2) + _lane_bytes(ys, 0)
    fits = (SMEM_BUDGET - fixed) // max(per_step, 1)
    if fits < 1:
        raise ValueError(
            f"lanes: one step's inputs and outputs ({per_step} bytes for "
            f"{LANES} chains) and the carries and constants ({fixed} bytes)"
            f" exceed the {SMEM_BUDGET} bytes of shared memory a program "
            "may use; use fused_scan(..., backend='triton').")
    return max(1, min(STEPS_PER_CHUNK, length, fits))


def can_run(fn: Callable[..., Any], init: Any, x0: Any, *consts: Any
            ) -> bool:
    """Whether this module can run ``fn`` as a Mosaic GPU kernel: every
    operation can be scalarised and compiled (`unsupported_operations`)
    and one step fits in shared memory, for the forward loop and for its
    gradient's reverse loop, whose carry also holds the constants'
    cotangents and whose inputs hold the saved carries. ``init`` and
    ``x0`` are one chain's carry and one step's input."""
    if unsupported_operations(fn, init, x0, *consts):
        return False
    y = jax.eval_shape(fn, init, x0, *consts)[1]
    carry, x = _lane_bytes(init, 0), _lane_bytes(x0, 0)
    backward_fixed = carry + 2 * _const_bytes(consts)
    backward_step = carry + 2 * x + _lane_bytes(y, 0)
    return backward_fixed + backward_step <= SMEM_BUDGET


def _lane_bytes(leaves: Any, lead: int) -> int:
    """Shared memory for ``leaves`` as lane vectors, their first ``lead``
    axes (chains, steps) left out."""
    return sum(int(np.prod(jnp.shape(a)[lead:])) * LANES
               * jnp.dtype(jnp.result_type(a)).itemsize
               for a in jax.tree.leaves(leaves))


def _const_bytes(consts: tuple[Any, ...]) -> int:
    """The constants, flattened to float32 and padded as `launch` does."""
    return 4 * (sum(int(np.size(c)) for c in consts) + 32)


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
