"""Arrays laid out for chains in lanes (`helpers.pallas.mosaic.chains`).

In global memory every array has the chains as its minor axis, so one
step's number for `LANES` chains is one contiguous row of `LANES`
values; inside the kernel, one chain's state is a numpy object array of
lane vectors (`helpers.pallas.mosaic.scalarise`). These functions move
arrays between the caller's layout (chains first), the kernel's (chains
last) and the scalarised one.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from helpers.pallas.mosaic.scalarise import LANES, Scalarised


def as_lanes(value: Any) -> Any:
    """A lane vector: ``value`` itself, or a scalar broadcast to all
    `LANES` chains."""
    return value if jnp.ndim(value) == 1 else jnp.broadcast_to(
        jnp.asarray(value), (LANES,))


def read_consts(ref: Any, shapes: list[tuple[int, ...]],
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


def objects(values: Any, shape: tuple[int, ...]) -> Scalarised:
    """Lane vectors (tracers) in a numpy object array of ``shape``,
    without numpy trying to convert them."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out.reshape(shape)


def unflatten(state: tuple[Any, ...], tree: Any, shapes: Any) -> Any:
    """The flat state (one lane vector per number) as the carry's tree of
    scalarised arrays of ``shapes``."""
    leaves, start = [], 0
    for s in jax.tree.leaves(shapes):
        size = int(np.prod(s.shape))
        leaves.append(objects(state[start:start + size], s.shape))
        start += size
    return jax.tree.unflatten(tree, leaves)


def from_rows(ref: Any, t: Any, shape: tuple[int, ...]) -> Scalarised:
    """Step ``t``'s input of ``shape`` from a staged chunk ``ref``
    ``(steps, elements, lanes)``, scalarised."""
    size = int(np.prod(shape))
    return objects([ref[t, e] for e in range(size)], shape)


def lanes_last(a: jax.Array, width: int) -> jax.Array:
    """(chains, ...) -> (elements, width): chains padded by repeating the
    last one, as the minor axis."""
    flat = a.reshape(a.shape[0], -1)
    flat = jnp.concatenate([flat, jnp.repeat(flat[-1:], width
                                             - flat.shape[0], 0)])
    return flat.T


def steps_lanes_last(a: jax.Array, width: int, steps: int,
                      reverse: bool) -> jax.Array:
    """(chains, length, ...) -> (steps, elements, width)."""
    flat = a.reshape(a.shape[0], a.shape[1], -1)
    if reverse:
        flat = flat[:, ::-1]
    flat = jnp.pad(flat, ((0, width - flat.shape[0]),
                          (0, steps - flat.shape[1]), (0, 0)))
    return flat.transpose(1, 2, 0)


def chains_first(out: jax.Array, shape: tuple[int, ...],
                 chains: int) -> jax.Array:
    """(elements, width) -> (chains, *shape): padding chains dropped."""
    return out.T[:chains].reshape(chains, *shape)


def ys_chains_first(out: jax.Array, shape: tuple[int, ...], chains: int,
                     length: int, reverse: bool) -> jax.Array:
    """(steps, elements, width) -> (chains, length, *shape), in the
    caller's step order."""
    ys = out[:length].transpose(2, 0, 1)[:chains].reshape(
        chains, length, *shape)
    return ys[:, ::-1] if reverse else ys
