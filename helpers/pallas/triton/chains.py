"""Many independent chains of one scan, side by side in each GPU program.

(On Hopper and newer the Mosaic GPU path does this natively, one chain per
thread, `helpers.pallas.mosaic.chains`; what follows is the Triton path.)

``jax.vmap`` of `helpers.pallas.scan.fused_scan` over 10,000 chains gives a
Pallas grid of 10,000 programs, each running one chain with a whole block
of threads (Triton's default is four warps, 128 threads) of which one
chain's tiny state keeps only a few busy. `fused_chains` instead puts
``chains_per_program`` chains side by side in each program, as the
leading axis of every array the step sees (``jax.vmap`` of the step,
inside the kernel), and runs each program on one warp: 32 threads, each
with its own chain or chains. The grid then has ``chains /
chains_per_program`` programs.

The step sees one chain at a time, exactly as in `fused_scan`; only the
layout of the work changes. Gradients are not provided: differentiate
`fused_scan` under ``jax.vmap`` instead.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from helpers.pallas import backends
from helpers.pallas.loop import Loop, Refs, run_in_kernel
from helpers.pallas.mosaic import chains as mosaic_chains
from helpers.pallas.scan import Step, hoist_constants
from helpers.pallas.triton import padding


def fused_chains(step: Step, init: Any, xs: Any, *,
                 chains_per_program: int = 64, num_warps: int = 1,
                 backend: backends.Backend | None = None,
                 interpret: bool | None = None) -> tuple[Any, Any]:
    """``jax.vmap(lambda c, x: jax.lax.scan(step, c, x))(init, xs)``, as
    one kernel with ``chains_per_program`` chains in each program.

    Args:
        step: ``(carry, x) -> (carry, y)`` for one chain.
        init: the chains' initial carries: every leaf has a leading axis
            of the number of chains.
        xs: per-chain inputs: every leaf is ``(chains, steps, ...)``.
        chains_per_program: Triton: chains side by side in one program,
            a power of two (Triton's rule for array sides).
        num_warps: Triton: warps (of 32 threads) per program.
        backend: ``'mosaic'``, ``'triton'`` or None (by the GPU's
            capability, `helpers.pallas.backends`). Mosaic GPU runs 128 chains
            per program, one per thread (`helpers.pallas.mosaic.chains`).
        interpret: run the backend's interpreter (default: unless on a
            GPU that can compile it).

    Returns:
        ``(final_carries, ys)``, each leaf with the leading chain axis.
    """
    if chains_per_program < 1 or chains_per_program & (
            chains_per_program - 1):
        raise ValueError(f"chains_per_program must be a power of two (a "
                         f"Triton array side); got {chains_per_program}.")
    chains, length = _sizes(init, xs)
    carry0 = jax.tree.map(lambda leaf: leaf[0], init)
    x0 = jax.tree.map(lambda leaf: leaf[0, 0], xs)
    fn, consts = hoist_constants(step, carry0, x0)
    how = backends.choose(backend, interpret, lambda: mosaic_chains.can_run(
        fn, carry0, x0, *consts))
    if how.backend == "mosaic":
        return mosaic_chains.launch(Loop(fn, length), init, xs, consts,
                                    interpret=how.interpret)
    interpret = how.interpret
    blocks = -(-chains // chains_per_program)
    total = blocks * chains_per_program

    def per_block(carry: Any, x: Any, *constants: Any) -> Any:
        return jax.vmap(lambda c, v: fn(c, v, *constants))(carry, x)

    block_carry = jax.tree.map(lambda leaf: leaf[:chains_per_program],
                               _pad_chains(init, total))
    block_x = jax.tree.map(lambda leaf: leaf[:chains_per_program, 0],
                           _pad_chains(xs, total))
    padded_step = padding.pad_function(per_block, block_carry, block_x,
                                       *consts)
    _, y_shape = jax.eval_shape(per_block, block_carry, block_x, *consts)
    carry_shape = jax.eval_shape(lambda c: c, block_carry)

    # Steps first, so that step i of a block is one slab: (steps, chains,..)
    steps_first = jax.tree.map(lambda leaf: jnp.moveaxis(leaf, 1, 0),
                               _pad_chains(xs, total))
    final, ys = _launch(
        Loop(padded_step, length),
        _Grid(chains_per_program, blocks, num_warps, interpret),
        jax.tree.map(lambda leaf: padding.pad_array(leaf, 1),
                     _pad_chains(init, total)),
        jax.tree.map(lambda leaf: padding.pad_array(leaf, 2), steps_first),
        tuple(padding.pad_array(c) for c in consts), y_shape)
    final = jax.tree.map(lambda leaf, s: padding.unpad_array(
        leaf, s.shape[1:])[:chains], final, carry_shape)
    ys = jax.tree.map(lambda leaf, s: jnp.moveaxis(padding.unpad_array(
        leaf, s.shape[1:]), 0, 1)[:chains], ys, y_shape)
    return final, ys


def _sizes(init: Any, xs: Any) -> tuple[int, int]:
    counts = {jnp.shape(leaf)[0] for leaf in jax.tree.leaves(init)}
    shapes = {jnp.shape(leaf)[:2] for leaf in jax.tree.leaves(xs)}
    if len(counts) != 1 or len(shapes) != 1:
        raise ValueError("every leaf of init needs the same leading axis "
                         "(the chains), and every leaf of xs the same two "
                         f"leading axes (chains, steps); got {counts} and "
                         f"{shapes}.")
    (chains,), ((xs_chains, length),) = counts, shapes
    if chains != xs_chains:
        raise ValueError(f"init has {chains} chains but xs has "
                         f"{xs_chains}.")
    return chains, length


def _pad_chains(tree: Any, total: int) -> Any:
    """Repeat the last chain so the count fills whole programs."""
    def pad(leaf: jax.Array) -> jax.Array:
        extra = total - leaf.shape[0]
        return leaf if extra == 0 else jnp.concatenate(
            [leaf, jnp.repeat(leaf[-1:], extra, axis=0)])
    return jax.tree.map(pad, tree)


@dataclasses.dataclass(frozen=True)
class _Grid:
    """How the chains are spread over the kernel: ``blocks`` programs of
    ``per_program`` chains, ``num_warps`` warps each; ``interpret`` runs
    Pallas's interpreter instead."""

    per_program: int
    blocks: int
    num_warps: int
    interpret: bool


def _launch(loop: Loop, grid: _Grid, init: Any, xs: Any,
            consts: tuple[Any, ...], y_shape: Any) -> tuple[Any, Any]:
    """The `pallas_call`: a grid of ``grid.blocks`` programs, each running
    the loop on its ``grid.per_program`` chains side by side."""
    init_leaves, carry_tree = jax.tree.flatten(init)
    xs_leaves, xs_tree = jax.tree.flatten(xs)
    y_leaves, y_tree = jax.tree.flatten(y_shape)
    padded_y = [padding.padded_shape(s.shape) for s in y_leaves]
    counts = (len(init_leaves), len(xs_leaves), len(consts),
              len(init_leaves), len(y_leaves))

    def kernel(*refs: Any) -> None:
        run_in_kernel(loop, Refs.split(refs, counts), carry_tree, xs_tree)

    compiler_params = None
    if not grid.interpret:
        from jax.experimental.pallas import triton as pltriton
        compiler_params = pltriton.CompilerParams(num_warps=grid.num_warps)
    blocks = _Blocks(loop.length, grid.per_program)
    outs = pl.pallas_call(
        kernel, grid=(grid.blocks,), interpret=grid.interpret,
        out_shape=([jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
                    for leaf in init_leaves]
                   + [jax.ShapeDtypeStruct(
                       (loop.length, grid.blocks * grid.per_program,
                        *shape[1:]), s.dtype)
                      for shape, s in zip(padded_y, y_leaves)]),
        in_specs=([blocks.of_chains(v.shape) for v in init_leaves]
                  + [blocks.of_steps(v.shape) for v in xs_leaves]
                  + [blocks.whole(c.shape) for c in consts]),
        out_specs=([blocks.of_chains(v.shape) for v in init_leaves]
                   + [blocks.of_steps((loop.length, *shape))
                      for shape in padded_y]),
        compiler_params=compiler_params)(*init_leaves, *xs_leaves, *consts)
    n_carry = len(init_leaves)
    final = jax.tree.unflatten(carry_tree, outs[:n_carry])
    ys = jax.tree.unflatten(y_tree, outs[n_carry:])
    return final, ys


@dataclasses.dataclass(frozen=True)
class _Blocks:
    """Which part of each array a program sees: its ``per_program``
    chains of the carries and of every step's inputs and outputs, and the
    constants whole."""

    length: int
    per_program: int

    def of_chains(self, shape: tuple[int, ...]) -> pl.BlockSpec:
        """``(chains, ...)``: this program's chains."""
        rest = shape[1:]
        zeros = (0,) * len(rest)
        return pl.BlockSpec((self.per_program, *rest),
                            lambda j: (j, *zeros))

    def of_steps(self, shape: tuple[int, ...]) -> pl.BlockSpec:
        """``(steps, chains, ...)``: every step of this program's chains."""
        rest = shape[2:]
        zeros = (0,) * len(rest)
        return pl.BlockSpec((self.length, self.per_program, *rest),
                            lambda j: (0, j, *zeros))

    @staticmethod
    def whole(shape: tuple[int, ...]) -> pl.BlockSpec:
        """An array every program reads whole (the constants)."""
        zeros = (0,) * len(shape)
        return pl.BlockSpec(shape, lambda j: zeros)
