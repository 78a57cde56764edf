"""The programs chapter 3 runs on a GPU, and how often
(`helpers.xla.gpu_floors`), for the how-to page's table of Colab's GPUs.

Every loop carries one number of state, so a floor (bytes and FLOPs) is
next to nothing: the chapter's time on a GPU goes to launching kernels,
which a floor leaves out. What this list adds to the table is what
compiles on which GPU (the one-kernel loop picks Mosaic GPU on a Hopper,
Triton below it) and the compilations' seconds.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp

from helpers.workbook.ch03_launches import variants
from helpers.xla.gpu_floors import Program

LOOP_BUDGET_S = 1.0  # the chapter's max_seconds for each loop's timing
TIMED = 26  # variants.measure: a first call, 3 warm-ups, 20, 2 profiled
# The chapter's sweeps (its cells' UNROLLS and GRID).
UNROLLS = [1, 2, 4, 8, 16, 32, 64]
GRID = dict(steps_options=[1000, 8000], unrolls=[1, 4, 16, 64],
            hiddens=[12, 128])
CHAINS = 10_000  # the goals' many chains
GOAL_CALLS = 14  # 1 + 3 + 10


def _weights(dtype: str = "float32", hidden: int = variants.HIDDEN) -> Any:
    shapes = jax.eval_shape(functools.partial(
        variants.init_weights, hidden=hidden), jax.random.key(0))
    return jax.tree.map(lambda w: jax.ShapeDtypeStruct(w.shape, dtype),
                        shapes)


def _key() -> Any:
    return jax.eval_shape(lambda: jax.random.key(1))


def _loop(variant: Callable[..., Any], steps: int, **static: Any
          ) -> Callable[..., Any]:
    """``variant`` with its step count (and unroll) fixed: the programs
    take the weights and a key."""
    if variant is variants.while_traced:
        return lambda w, k: variant(w, k, jnp.int32(steps))
    return lambda w, k: variant(w, k, steps, **static)


def _chains(steps: int) -> list[Program]:
    """The goals' programs of `CHAINS` chains."""
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(2),
                                                   CHAINS))
    def vmapped(variant: Callable[..., Any]) -> Callable[..., Any]:
        return lambda w, k: variants.many_chains(variant, w, k, steps)
    side_by_side = functools.partial(variants.fused_side_by_side,
                                     steps=steps)
    builds: dict[str, Callable[..., Any]] = {
        "many chains, fused_scan": vmapped(variants.fused),
        "many chains, 64 per program (Triton)": functools.partial(
            side_by_side, backend="triton"),
        "many chains, one per thread (Mosaic GPU)": functools.partial(
            side_by_side, backend="mosaic"),
        "many chains, scan": vmapped(variants.scan_hoisted)}
    return [Program(name, build, (_weights(), keys), calls=GOAL_CALLS,
                    budget_s=LOOP_BUDGET_S)
            for name, build in builds.items()]


def programs() -> list[Program]:
    """Every program chapter 3 runs on a GPU (its exercises' loops of 200
    steps aside)."""
    steps = variants.STEPS
    loops = [Program(f"{name}, {dtype}", _loop(variant, steps),
                     (_weights(dtype), _key()), dtype=dtype, calls=TIMED,
                     budget_s=LOOP_BUDGET_S)
             for dtype in variants.DTYPES
             for name, variant in variants.VARIANTS.items()]
    unrolled = [Program(f"scan, unroll {unroll}",
                        _loop(variants.scan_hoisted, steps, unroll=unroll),
                        (_weights(), _key()), calls=TIMED,
                        budget_s=LOOP_BUDGET_S)
                for unroll in UNROLLS]
    grid = [Program(f"grid: {n} steps, hidden {hidden}, unroll {unroll}",
                    _loop(variants.scan_hoisted, n, unroll=unroll),
                    (_weights(hidden=hidden), _key()), calls=GOAL_CALLS,
                    budget_s=LOOP_BUDGET_S / 2)
            for n in GRID["steps_options"] for hidden in GRID["hiddens"]
            for unroll in GRID["unrolls"]]
    return [*loops, *unrolled, *grid, *_chains(steps)]
