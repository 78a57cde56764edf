"""Chapter 2 (Fusion heuristics): XLA:GPU's reduction rule, and two
exercises.

`reduction_kind` restates in Python the rule XLA:GPU uses to choose how a
reduction is emitted, from xla/service/gpu/reduction_utils.cc
(`GetReductionKindAndContiguousComponents`,
`IsUnnestedReductionFasterThanElemental`,
`IsReductionFromOrToContiguousDimensions`), for arrays in the default
row-major layout. The chapter checks it against the fusion kinds the GPU
compiler actually chose.

Exercise 2.1 asks for a formulation of the batched product whose reduction
the GPU emits with its fast reduction emitter. Exercise 2.2 asks the reader
to predict the fusion kind of ``a @ b`` from K.
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from helpers.xla import hlo

WARP_SIZE = 32  # threads per warp on every NVIDIA GPU


def _consecutive(dims: Sequence[int]) -> bool:
    """In a row-major layout, dims are adjacent in memory when their
    numbers are consecutive."""
    dims = sorted(dims)
    return dims == list(range(dims[0], dims[0] + len(dims)))


def _split(shape: Sequence[int], middle: Sequence[int]) -> list[int]:
    """(major, middle, minor) element counts around the ``middle`` dims."""
    sizes = [1, 1, 1]
    segment = 2  # walk from the minor-most dimension outwards
    for dim in reversed(range(len(shape))):
        if segment == 2 and dim in middle:
            segment = 1
        elif segment == 1 and dim not in middle:
            segment = 0
        sizes[segment] *= shape[dim]
    return sizes


def reduction_shape(shape: Sequence[int], reduced: Sequence[int]
                    ) -> tuple[str, tuple[int, int, int]]:
    """How XLA:GPU sees a reduction: ``('row', (batch, kept, reduced))`` when
    the reduced elements are contiguous in memory, or ``('column',
    (batch, reduced, kept))`` when they are strided.

    Example:
        >>> reduction_shape((1000, 1000, 3, 25), [3])
        ('row', (1, 3000000, 25))
    """
    shape, reduced = list(shape), sorted(reduced)
    if not reduced or any(not 0 <= d < len(shape) for d in reduced):
        raise ValueError(f"reduced dimensions {reduced} must be indices "
                         f"into the shape {tuple(shape)}")
    kept = [d for d in range(len(shape)) if d not in reduced]
    if not kept:
        return "row", (1, 1, int(np.prod(shape)))
    if _consecutive(kept):
        major, middle, minor = _split(shape, kept)
        if middle == 1:
            return "row", (1, 1, major * minor)
        if minor == 1:
            return "column", (1, major, middle)
        return "row", (major, middle, minor)
    major, middle, minor = _split(shape, reduced)
    if minor == 1:
        return "row", (1, major, middle)
    return "column", (major, middle, minor)


def reduction_kind(shape: Sequence[int], reduced: Sequence[int],
                   warp_size: int = WARP_SIZE) -> hlo.FusionKind:
    """The fusion kind XLA:GPU gives a reduce: ``'kInput'`` (its reduction
    emitter, threads cooperate on each output) or ``'kLoop'`` (one thread
    loops over each output's elements).

    The rule applies to a reduce as fusion sees it. Before fusion XLA:GPU
    normalises reductions whose kept and reduced dimensions are both
    scattered (it transposes them first), so for those this reports how
    the reduce would be emitted as written, not what the compiler ends up
    with.

    Example:
        >>> [reduction_kind((10, 3, k), [2]) for k in (16, 25, 35)]
        ['kInput', 'kLoop', 'kInput']
    """
    kept = [d for d in range(len(shape)) if d not in reduced]
    if kept and not (_consecutive(kept) or _consecutive(reduced)):
        return hlo.FusionKind.LOOP
    kind, (_, size_1, size_2) = reduction_shape(shape, reduced)
    if kind == "row":
        # Rows of at least a warp, or small power-of-two rows that pack
        # evenly into one warp.
        fast = size_2 >= warp_size or warp_size % size_2 == 0
    else:
        rows, columns = size_1, size_2
        fast = not (rows < warp_size
                    or (rows < 2 * warp_size and columns < warp_size)
                    or (rows < 4 * warp_size and columns < 8)
                    or (rows < 8 * warp_size and columns < 3))
    return hlo.FusionKind.INPUT if fast else hlo.FusionKind.LOOP


def bytes_moved(batch: int, k: int, itemsize: int) -> int:
    """Bytes (batch, 3, K) @ (batch, K, 1) must move: read both, write
    the (batch, 3) result."""
    return itemsize * batch * (3 * k + k + 3)


def batched_matmul(a: jax.Array, b: jax.Array) -> jax.Array:
    """(..., 3, K) @ (..., K, 1), as written in the source: the product
    whose reduction the chapter follows."""
    return a @ b


def _with_x64(dtypes: Sequence[str]) -> None:
    if "float64" in dtypes:  # a child process of its own: safe to switch
        jax.config.update("jax_enable_x64", True)


def kinds_for_gpu(ks: Sequence[int], dtypes: Sequence[str] = ("float32",),
                 batch: Sequence[int] = (1000, 1000)) -> list[dict]:
    """The fusion kind XLA:GPU gives the reduce of ``a @ b`` for each K and
    dtype, compiled for an H100 (run through `helpers.xla.crosscompile.run`).
    """
    from helpers.xla import crosscompile
    _with_x64(dtypes)
    rows = []
    for dtype in dtypes:
        for k in ks:
            a = jax.ShapeDtypeStruct((*batch, 3, k), jnp.dtype(dtype))
            b = jax.ShapeDtypeStruct((*batch, k, 1), jnp.dtype(dtype))
            text = crosscompile.compile_for_gpu(batched_matmul, a, b).as_text()
            rows.append({"K": k, "dtype": dtype,
                         "kind": hlo.reduction_kinds(text)})
    return rows


def reduce_kinds_for_gpu(cases: Sequence[tuple[Sequence[int],
                                              Sequence[int]]]
                        ) -> list[str]:
    """XLA:GPU's fusion kind for ``x.sum(axis=reduced)`` of each
    ``(shape, reduced)`` case, compiled for an H100: the truth
    `reduction_kind` is tested against."""
    from helpers.xla import crosscompile
    kinds = []
    for shape, reduced in cases:
        x = jax.ShapeDtypeStruct(tuple(shape), jnp.float32)
        text = crosscompile.compile_for_gpu(
            lambda v, axes=tuple(reduced): jnp.tanh(v).sum(axis=axes),
            x).as_text()
        kinds.append(hlo.reduction_kinds(text))
    return kinds


PREDICT_KS = range(2, 81)  # K=1 is no reduction: XLA drops it


def kinds_for_h100(dtype: str = "float32") -> list[dict]:
    """`kinds_for_gpu` for every K in PREDICT_KS in ``dtype``: the
    chapter's table and the exercise's truth make the same call, so a
    test run that keeps results (`helpers.xla.crosscompile.run`) compiles
    them once."""
    from helpers.xla import crosscompile
    return crosscompile.run(kinds_for_gpu, list(PREDICT_KS), [dtype])
