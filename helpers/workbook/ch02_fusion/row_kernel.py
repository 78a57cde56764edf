"""Chapter 2 (fusion): the batched product ``a @ b`` as one Pallas kernel
that reads each row once, in the layout the data arrives in.

``a`` is ``(..., 3, K)`` and ``b`` is ``(..., K, 1)``, row-major: each
batch element's 3K numbers of ``a`` are contiguous, and so are its K of
``b``. A program of the kernel owns ``rows`` consecutive batch elements,
a contiguous stretch of memory, and loads it as tiles of ``rows`` by the
next power of two at or above K (Triton's arrays have power-of-two
sides), masked to the real K: neighbouring threads read neighbouring
addresses, each byte is read once, and the sums over K stay in registers.
Nothing is written but the 3 results per element, so the kernel moves
exactly the floor's bytes.

The masked lanes of a padded tile load nothing and still take their
place in every instruction: at K = 33 a 64-wide tile is nearly half dead.
With ``pieces=True`` the kernel instead splits a row into pieces whose
widths are powers of two (35 = 32 + 2 + 1, `power_of_two_pieces`) and
loads each piece as a tile of its own, so no column of a tile is masked
(rows past the batch's end still are).

It is written for Pallas's Triton backend (deprecated since jax 0.11.0,
`helpers.pallas.backends`); without a GPU it runs in Pallas's interpreter.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from helpers.measuring import machine
from helpers.xla import crosscompile

ROWS = 128  # batch elements per program: a power of two (Triton's rule)


def power_of_two_pieces(k: int) -> tuple[tuple[int, int], ...]:
    """``(offset, width)`` of each piece a row of ``k`` numbers splits
    into when every width is a power of two: K's binary digits, widest
    first.

    Example:
        >>> power_of_two_pieces(35)
        ((0, 32), (32, 2), (34, 1))
    """
    if k < 1:
        raise ValueError(f"a row has at least one number; got K = {k}.")
    pieces, offset = [], 0
    for bit in reversed(range(k.bit_length())):
        if k & (1 << bit):
            pieces.append((offset, 1 << bit))
            offset += 1 << bit
    return tuple(pieces)


def row_program(a_ref: Any, b_ref: Any, out_ref: Any, *, n: int, k: int,
                tiles: tuple[tuple[int, int], ...], rows: int) -> None:
    """One program: ``rows`` batch elements, ``a_ref`` as (n, 3K),
    ``b_ref`` as (n, K), ``out_ref`` as (n rounded up to whole programs,
    3). Each row is loaded as the ``(offset, width)`` tiles ``tiles``; a
    tile that reaches past K is masked there, and rows past ``n`` are
    masked in every tile."""
    # Imported at use: importing this module (and chapter 2's fixes) needs
    # no Pallas Triton backend, which jax deprecated in 0.11.0.
    from jax.experimental.pallas import triton as plgpu

    row = pl.program_id(0) * rows + jnp.arange(rows)
    # Rows past the end read the last row's address, masked: never read.
    # They write to the output's padding, sliced off after the kernel.
    at_row = jnp.minimum(row, n - 1)[:, None]
    sums: list[Any] = [0, 0, 0]
    for offset, width in tiles:
        col = offset + jnp.arange(width)
        live = row[:, None] < n
        if offset + width > k:  # a padded tile: its columns past K
            live = live & (col[None, :] < k)
        at_col = jnp.minimum(col, k - 1)[None, :]
        b = plgpu.load(b_ref.at[at_row, at_col], mask=live, other=0)
        for i in range(3):
            a = plgpu.load(a_ref.at[at_row, i * k + at_col], mask=live,
                           other=0)
            sums[i] = sums[i] + jnp.sum(a * b, axis=1)
    for i in range(3):
        plgpu.store(out_ref.at[row, i], sums[i])


def _whole_programs(n: int, rows: int) -> int:
    """The largest power of two from ``rows`` down to a warp's 32 that
    divides ``n``, so that the programs cover the rows exactly (padding
    the output costs a copy to slice it off); else ``rows``.

    Example:
        >>> _whole_programs(1_000_000, 128), _whole_programs(1000, 128)
        (64, 128)
    """
    candidate = rows
    while candidate >= 32:
        if n % candidate == 0:
            return candidate
        candidate //= 2
    return rows


def row_product(a: jax.Array, b: jax.Array, *, rows: int = ROWS,
                pieces: bool = False,
                interpret: bool | None = None) -> jax.Array:
    """``a @ b`` for ``a`` of shape (..., 3, K) and ``b`` (..., K, 1), as
    one Pallas kernel reading each row once.

    Args:
        rows: batch elements per program, a power of two.
        pieces: load each row as `power_of_two_pieces` (no masked lane)
            instead of one tile padded to a power of two.
        interpret: run Pallas's interpreter (default: unless on, or
            compiling for, a GPU).
    """
    *batch, three, k = a.shape
    if three != 3 or b.shape != (*batch, k, 1):
        raise ValueError(f"row_product multiplies (..., 3, K) by "
                         f"(..., K, 1); got {a.shape} and {b.shape}.")
    if rows < 1 or rows & (rows - 1):
        raise ValueError(f"rows must be a power of two; got {rows}.")
    n = math.prod(batch)
    rows = _whole_programs(n, rows)
    if interpret is None:
        interpret = not (machine.on_gpu() or crosscompile.compiling_for_gpu())
    # Triton's parameters choose Triton's backend (Mosaic GPU is Pallas's
    # default on Hopper); four warps, 128 threads, a program.
    params = None
    if not interpret:
        from jax.experimental.pallas import triton as plgpu
        params = plgpu.CompilerParams(num_warps=4)
    tiles = (power_of_two_pieces(k) if pieces
             else ((0, 1 << (k - 1).bit_length()),))
    out = pl.pallas_call(
        functools.partial(row_program, n=n, k=k, tiles=tiles, rows=rows),
        out_shape=jax.ShapeDtypeStruct((pl.cdiv(n, rows) * rows, 3),
                                       a.dtype),
        grid=(pl.cdiv(n, rows),),
        interpret=interpret,
        compiler_params=params,
    )(a.reshape(n, 3 * k), b.reshape(n, k))
    return out[:n].reshape(*batch, 3, 1)
