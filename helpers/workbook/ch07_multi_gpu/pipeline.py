"""Chapter 7: circular pipeline parallelism with shard_map.

JAX's GPU performance guide has an example of a *circular* pipeline: the
layers are split into ``stages`` (one per device), ``microbatches`` enter
stage 0 one per iteration, each stage hands its result to the next (the
"forward edge" 0 -> 1 -> ... -> D-1), and the last stage hands it back to
stage 0 (the "back edge" D-1 -> 0) for another pass, ``repeats`` times in
all. The loop runs ``repeats * microbatches + stages - 1`` iterations;
stage 0 takes a returning microbatch only after all microbatches have
entered, so the schedule needs ``microbatches >= stages``.

Here the same schedule is written with `jax.shard_map`: each device runs the
loop for its own stage, and the edges are passed in as functions, so the
same code runs with `ppermute` (which any backend runs) or with
`psend`/`precv` (GPU only; deprecated since jax 0.12, see
`helpers.multi_device.sendrecv`).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from helpers.multi_device import sendrecv

Edge = Callable[[jax.Array], jax.Array]
AXIS = "stage"


def init(key: jax.Array, stages: int, microbatches: int, batch: int,
         width: int) -> tuple[jax.Array, jax.Array]:
    """Random weights, one ``(width, width)`` matrix per stage, and the
    microbatches ``(microbatches, batch, width)``."""
    k_w, k_x = jax.random.split(key)
    weights = jax.random.normal(k_w, (stages, width, width)) / width ** 0.5
    inputs = jax.random.normal(k_x, (microbatches, batch, width))
    return weights, inputs


def stage_fn(w: jax.Array, x: jax.Array, layers: int) -> jax.Array:
    """One stage's work: ``layers`` times tanh(x @ w)."""
    for _ in range(layers):
        x = jnp.tanh(x @ w)
    return x


def reference(weights: jax.Array, inputs: jax.Array, repeats: int,
              layers: int) -> jax.Array:
    """What the pipeline computes, on one device: every microbatch through
    all stages in order, ``repeats`` times."""
    x = inputs
    for _ in range(repeats):
        for w in weights:
            x = stage_fn(w, x, layers)
    return x


def ppermute_edges(stages: int) -> tuple[Edge, Edge]:
    """The forward and back edges as collective permutes."""
    forward = [(s, s + 1) for s in range(stages - 1)]

    def to_next(y: jax.Array) -> jax.Array:
        return jax.lax.ppermute(y, AXIS, forward)

    def to_first(y: jax.Array) -> jax.Array:
        return jax.lax.ppermute(y, AXIS, [(stages - 1, 0)])

    return to_next, to_first


def psend_edges(stages: int) -> tuple[Edge, Edge]:
    """The forward edge as a psend and its matching precv (GPU only), the
    back edge as a collective permute. Neither transfer's pairs form a
    cycle, and each psend has its precv, so neither deadlock rule of
    `helpers.multi_device.sendrecv` is broken."""
    forward = [(s, s + 1) for s in range(stages - 1)]

    def to_next(y: jax.Array) -> jax.Array:
        sent = sendrecv.psend(y, AXIS, forward)
        like = jax.ShapeDtypeStruct(y.shape, y.dtype)
        return sendrecv.precv(sent, like, AXIS, forward)

    return to_next, ppermute_edges(stages)[1]


def stage_loop(w: jax.Array, inputs: jax.Array, *, repeats: int,
               layers: int, edges: tuple[Edge, Edge]) -> jax.Array:
    """One device's part of the pipeline; returns its output buffer."""
    to_next, to_first = edges
    stages = jax.lax.axis_size(AXIS)
    stage = jax.lax.axis_index(AXIS)
    micro = inputs.shape[0]

    def iteration(carry: tuple[jax.Array, ...], i: jax.Array
                  ) -> tuple[tuple[jax.Array, ...], None]:
        received, returned, outputs = carry
        # Stage 0 starts new microbatches first, then returning ones.
        start = jnp.where(i < micro, inputs[i % micro], returned[i % micro])
        y = stage_fn(w[0], jnp.where(stage == 0, start, received), layers)
        done = (i - (stages - 1)) % micro  # slot of what the last stage did
        outputs = outputs.at[done].set(
            jnp.where(stage == stages - 1, y, outputs[done]))
        back = to_first(y)
        returned = returned.at[done].set(
            jnp.where(stage == 0, back, returned[done]))
        return (to_next(y), returned, outputs), None

    zeros = jnp.zeros_like(inputs)
    steps = jnp.arange(repeats * micro + stages - 1)
    start: tuple[jax.Array, ...] = (zeros[0], zeros, zeros)
    (_, _, outputs), _ = jax.lax.scan(iteration, start, steps)
    return outputs[None]


def pipeline(mesh: jax.sharding.Mesh, *, repeats: int, layers: int,
             edges: tuple[Edge, Edge] | None = None) -> Callable[..., Any]:
    """The jitted circular pipeline on a 1-D mesh whose axis is
    ``'stage'``. ``fn(weights, inputs)`` returns every stage's output buffer,
    ``(stages, *inputs.shape)``; the last stage's, ``[-1]``, is the
    pipeline's result. (Taking ``[-1]`` inside the jitted function would add
    collectives that move it, which would muddle the compiled module.)

    Raises:
        ValueError: the mesh's axis is not ``'stage'``.
    """
    if mesh.axis_names != (AXIS,):
        raise ValueError(f"pipeline() needs a 1-D mesh with axis {AXIS!r}; "
                         f"got axes {mesh.axis_names}.")
    stages = mesh.shape[AXIS]
    edges = edges or ppermute_edges(stages)

    def run(weights: jax.Array, inputs: jax.Array) -> jax.Array:
        if inputs.shape[0] < stages:
            raise ValueError(f"the circular schedule needs at least as many"
                             f" microbatches as stages; got "
                             f"{inputs.shape[0]} for {stages} stages.")
        body = jax.shard_map(
            lambda w, x: stage_loop(w, x, repeats=repeats, layers=layers,
                                    edges=edges),
            mesh=mesh, in_specs=(P(AXIS), P()), out_specs=P(AXIS),
            check_vma=False)
        return body(weights, inputs)

    return jax.jit(run)
