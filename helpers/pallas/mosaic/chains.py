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

import dataclasses
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from helpers.pallas.loop import Loop, cut
from helpers.pallas.mosaic import lanes
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

@dataclasses.dataclass(frozen=True)
class _Step:
    """One chain's step, traced once: its jaxpr, the arrays it closes over
    as scalars (the same for every chain), and the trees and one-chain
    shapes of its carry, input and output."""

    jaxpr: Any
    captured: list[Any]
    carry_tree: Any
    carry1: Any
    x_tree: Any
    x1: Any
    y_leaves: list[Any]
    y_tree: Any
    const_shapes: list[tuple[int, ...]]
    const_dtypes: list[Any]


@dataclasses.dataclass(frozen=True)
class _Layout:
    """How the chains are laid out: ``blocks`` programs of `LANES` chains
    each; inputs and outputs staged ``chunk`` steps at a time through
    shared memory, ``chunks * chunk`` steps in all (the loop's length
    rounded up); ``carry_rows`` and ``x_rows`` numbers per chain of each
    carry and input leaf, ``y_rows`` of each output leaf."""

    loop: Loop
    chains: int
    blocks: int
    chunk: int
    chunks: int
    carry_rows: tuple[int, ...]
    x_rows: tuple[int, ...]
    y_rows: tuple[int, ...]

    @property
    def steps(self) -> int:
        return self.chunks * self.chunk

    @property
    def width(self) -> int:
        """Chains padded to whole programs: the lanes of every array."""
        return self.blocks * LANES


def launch(loop: Loop, init: Any, xs: Any, consts: tuple[Any, ...], *,
           interpret: bool = False) -> tuple[Any, Any]:
    """``chains`` independent scans of ``loop.fn(carry, x, *consts)`` as
    one Mosaic GPU kernel, one chain per thread.

    Args:
        loop: one chain's step, ``(carry, x, *consts) -> (carry, y)``, its
            number of steps and direction.
        init: carries, every leaf ``(chains, ...)``.
        xs: inputs, every leaf ``(chains, length, ...)``.
        consts: arrays every chain shares (weights).
        interpret: run in Mosaic GPU's interpreter (jax 0.12 or newer).

    Returns:
        ``(final, ys)`` with the leading chain axis.
    """
    from jax.experimental.pallas import mosaic_gpu as plgpu

    step = _trace(loop, init, xs, consts)
    layout = _layout(loop, step, init, xs, consts)
    carries = [lanes.lanes_last(a, layout.width)
               for a in jax.tree.leaves(init)]
    inputs = [lanes.steps_lanes_last(a, layout.width, layout.steps,
                                     loop.reverse)
              for a in jax.tree.leaves(xs)]
    flat_consts = _flat_consts(consts)
    y_out = [jax.ShapeDtypeStruct((layout.steps, rows, layout.width),
                                  s.dtype)
             for rows, s in zip(layout.y_rows, step.y_leaves)]
    options: dict[str, Any] = {}
    if interpret:  # jax 0.12 added Mosaic GPU's interpreter; older stubs
        # lack the name, so it is looked up by string
        options["interpret"] = getattr(  # noqa: B009
            plgpu, "InterpretGPUParams")()
    # One value per thread: the Lane semantics of Mosaic GPU.
    params = plgpu.CompilerParams(
        lowering_semantics=plgpu.LoweringSemantics.Lane)
    outs = plgpu.kernel(
        _kernel(step, layout), grid=(layout.blocks,), grid_names=("block",),
        out_type=(*[jax.ShapeDtypeStruct(a.shape, a.dtype)
                    for a in carries], *y_out),
        scratch_types=_scratch(layout, carries, inputs, flat_consts, y_out),
        compiler_params=params, **options)(*carries, *inputs, flat_consts)
    return _results(loop, step, layout, init, outs)


def _trace(loop: Loop, init: Any, xs: Any, consts: tuple[Any, ...]
           ) -> _Step:
    """Trace one chain's step on one chain's shapes."""
    carry1 = jax.tree.map(lambda a: jax.ShapeDtypeStruct(
        a.shape[1:], a.dtype), init)
    x1 = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[2:], a.dtype),
                      xs)
    closed, out_shape = jax.make_jaxpr(loop.fn, return_shape=True)(
        carry1, x1, *consts)
    y_leaves, y_tree = jax.tree.flatten(out_shape[1])
    return _Step(
        jaxpr=closed.jaxpr,
        # Arrays the step closes over, as scalars (the same for every
        # chain).
        captured=[np.asarray(c).astype(object) for c in closed.consts],
        carry_tree=jax.tree.structure(init), carry1=carry1,
        x_tree=jax.tree.structure(xs), x1=x1,
        y_leaves=y_leaves, y_tree=y_tree,
        const_shapes=[jnp.shape(c) for c in consts],
        const_dtypes=[jnp.result_type(c) for c in consts])


def _layout(loop: Loop, step: _Step, init: Any, xs: Any,
            consts: tuple[Any, ...]) -> _Layout:
    chains = jax.tree.leaves(init)[0].shape[0]
    chunk = _steps_per_chunk(loop.length, init, xs,
                             jax.tree.unflatten(step.y_tree, step.y_leaves),
                             consts)
    return _Layout(
        loop=loop, chains=chains, blocks=-(-chains // LANES), chunk=chunk,
        chunks=-(-loop.length // chunk),
        carry_rows=tuple(int(np.prod(a.shape[1:]))
                         for a in jax.tree.leaves(init)),
        x_rows=tuple(int(np.prod(a.shape[2:])) for a in jax.tree.leaves(xs)),
        y_rows=tuple(int(np.prod(s.shape)) for s in step.y_leaves))


def _flat_consts(consts: tuple[Any, ...]) -> jax.Array:
    """Every constant, flattened to float32 into one vector."""
    flat = jnp.concatenate([jnp.ravel(c).astype(jnp.float32) for c in consts]
                           + [jnp.zeros(1, jnp.float32)])
    # Mosaic GPU copies whole multiples of 128 bytes (32 float32s).
    return jnp.pad(flat, (0, -flat.size % 32))


def _scratch(layout: _Layout, carries: list[Any], inputs: list[Any],
             flat_consts: Any, y_out: list[Any]) -> list[Any]:
    """Shared memory: the carries, a chunk of inputs and of outputs, the
    constants, and a barrier for the copies."""
    from jax.experimental.pallas import mosaic_gpu as plgpu
    chunk = layout.chunk
    smem: list[Any] = [plgpu.SMEM((a.shape[0], LANES), a.dtype)
                       for a in carries]
    smem += [plgpu.SMEM((chunk, a.shape[1], LANES), a.dtype) for a in inputs]
    smem += [plgpu.SMEM(flat_consts.shape, flat_consts.dtype)]
    smem += [plgpu.SMEM((chunk, s.shape[1], LANES), s.dtype) for s in y_out]
    return smem + [plgpu.Barrier()]


@dataclasses.dataclass(frozen=True)
class _LaneRefs:
    """The kernel's refs by role: in global memory, the carries, inputs,
    constants, final carries and outputs; in shared memory, the same
    staged, and the barrier."""

    carries: tuple[Any, ...]
    inputs: tuple[Any, ...]
    consts: Any
    finals: tuple[Any, ...]
    ys: tuple[Any, ...]
    carries_s: tuple[Any, ...]
    inputs_s: tuple[Any, ...]
    consts_s: Any
    ys_s: tuple[Any, ...]
    barrier: Any

    @classmethod
    def split(cls, refs: tuple[Any, ...], n_c: int, n_x: int, n_y: int
              ) -> _LaneRefs:
        (carries, inputs, consts, finals, ys, carries_s, inputs_s, consts_s,
         ys_s, barrier, _) = cut(refs, (n_c, n_x, 1, n_c, n_y, n_c, n_x, 1,
                                        n_y, 1))
        return cls(carries, inputs, consts[0], finals, ys, carries_s,
                   inputs_s, consts_s[0], ys_s, barrier[0])


def _kernel(step: _Step, layout: _Layout) -> Callable[..., None]:
    """The kernel: each program loads its `LANES` chains' carries and the
    constants, runs the steps chunk by chunk, and stores the carries."""
    from jax.experimental.pallas import mosaic_gpu as plgpu
    counts = (len(layout.carry_rows), len(layout.x_rows),
              len(layout.y_rows))

    def kernel(*all_refs: Any) -> None:
        refs = _LaneRefs.split(all_refs, *counts)
        window = plgpu_ds(jax.lax.axis_index("block") * LANES)
        for g, s in zip(refs.carries, refs.carries_s):
            plgpu.copy_gmem_to_smem(g.at[:, window], s, refs.barrier)
            plgpu.barrier_wait(refs.barrier)
        plgpu.copy_gmem_to_smem(refs.consts, refs.consts_s, refs.barrier)
        plgpu.barrier_wait(refs.barrier)
        consts = lanes.read_consts(refs.consts_s, step.const_shapes,
                              step.const_dtypes)
        state = tuple(s[e] for s, rows in zip(refs.carries_s,
                                              layout.carry_rows)
                      for e in range(rows))
        state = jax.lax.fori_loop(
            0, layout.chunks, lambda j, state: _run_chunk(
                step, layout, refs, consts, window, j, state), state)
        start = 0
        for s, rows in zip(refs.carries_s, layout.carry_rows):
            for e in range(rows):
                s[e] = state[start + e]
            start += rows
        plgpu.commit_smem()
        for g, s in zip(refs.finals, refs.carries_s):
            plgpu.copy_smem_to_gmem(s, g.at[:, window])
        plgpu.wait_smem_to_gmem(0)

    return kernel


def _run_chunk(step: _Step, layout: _Layout, refs: _LaneRefs,
               consts: list[Scalarised], window: Any, j: Any,
               state: tuple[Any, ...]) -> tuple[Any, ...]:
    """Chunk ``j``: stage its inputs, run its steps, write its outputs."""
    from jax.experimental.pallas import mosaic_gpu as plgpu
    rows = plgpu_ds(j * layout.chunk, layout.chunk)
    for g, s in zip(refs.inputs, refs.inputs_s):
        plgpu.copy_gmem_to_smem(g.at[rows, :, window], s, refs.barrier)
        plgpu.barrier_wait(refs.barrier)
    state = jax.lax.fori_loop(
        0, layout.chunk, lambda t, state: _one_step(
            step, layout, refs, consts, j, t, state), state)
    plgpu.commit_smem()
    for g, s in zip(refs.ys, refs.ys_s):
        plgpu.copy_smem_to_gmem(s, g.at[rows, :, window])
    plgpu.wait_smem_to_gmem(0)
    return state


def _one_step(step: _Step, layout: _Layout, refs: _LaneRefs,
              consts: list[Scalarised], j: Any, t: Any,
              state: tuple[Any, ...]) -> tuple[Any, ...]:
    """Step ``t`` of chunk ``j``, scalarised: every number of the state is
    a lane vector. Steps past the loop's length (padding of the last
    chunk) leave the state as it was."""
    carry = lanes.unflatten(state, step.carry_tree, step.carry1)
    x = jax.tree.unflatten(step.x_tree, [
        lanes.from_rows(s, t, a.shape)
        for s, a in zip(refs.inputs_s, jax.tree.leaves(step.x1))])
    outs = scalarise(step.jaxpr, step.captured,
                     [*jax.tree.leaves(carry), *jax.tree.leaves(x),
                      *consts])
    n_carry = len(layout.carry_rows)
    for s, y in zip(refs.ys_s, outs[n_carry:]):
        for e, value in enumerate(np.ravel(y)):
            s[t, e] = lanes.as_lanes(value)
    valid = j * layout.chunk + t < layout.loop.length
    return tuple(jnp.where(valid, lanes.as_lanes(new), old) for new, old in
                 zip([v for c in outs[:n_carry] for v in np.ravel(c)],
                     state))


def _results(loop: Loop, step: _Step, layout: _Layout, init: Any,
             outs: Any) -> tuple[Any, Any]:
    """The kernel's outputs with the chains first again, padding cut."""
    carry_leaves = jax.tree.leaves(init)
    n_c = len(carry_leaves)
    final = [lanes.chains_first(o, a.shape[1:], layout.chains)
             for o, a in zip(outs[:n_c], carry_leaves)]
    ys = [lanes.ys_chains_first(o, s.shape, layout.chains, loop.length,
                           loop.reverse)
          for o, s in zip(outs[n_c:], step.y_leaves)]
    return (jax.tree.unflatten(step.carry_tree, final),
            jax.tree.unflatten(step.y_tree, ys))


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


