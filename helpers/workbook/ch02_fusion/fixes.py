"""Chapter 2 (fusion): the formulations that try to fix ``a @ b``'s cliff,
and what XLA:GPU compiles each of them to.

``a`` is ``(..., 3, K)`` and ``b`` is ``(..., K, 1)``: a batch of 3xK
matrices times K-vectors. Every version computes the same numbers; they
differ in the reduction they hand to XLA, and in the bytes the compiled
program moves, which `structure_for_gpu` reads from a compilation for an
H100 (`helpers.xla.crosscompile`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import pandas as pd

from helpers.measuring import capability
from helpers.workbook.ch02_fusion import exercises, reductions, row_kernel
from helpers.xla import hlo

Fix = Callable[[jax.Array, jax.Array], jax.Array]


def matmul(a: jax.Array, b: jax.Array) -> jax.Array:
    """The source's version: XLA decides how to reduce over K."""
    return a @ b


padded = exercises.solution  # Exercise 2.1's solution: pad K


def to_batch_minor(a: jax.Array, b: jax.Array
                   ) -> tuple[jax.Array, jax.Array]:
    """(..., 3, K), (..., K, 1) -> (K, 3, batch), (K, batch)."""
    k = a.shape[-1]
    return (a.reshape(-1, 3, k).transpose(2, 1, 0),
            b.reshape(-1, k).T)


def batch_minor(a_t: jax.Array, b_t: jax.Array) -> jax.Array:
    """(K, 3, batch), (K, batch) -> (3, batch): a column reduction."""
    return (a_t * b_t[:, None, :]).sum(0)


def batch_minor_with_transposes(a: jax.Array, b: jax.Array) -> jax.Array:
    """Transpose, reduce, transpose back, in one program. XLA:GPU sees
    through the transposes and compiles the same reduction as ``a @ b``
    (`structure_for_gpu` shows it), so this measures nothing new."""
    out = batch_minor(*to_batch_minor(a, b))
    return out.T.reshape(*a.shape[:-1], 1)


_to_batch_minor = jax.jit(to_batch_minor)
_batch_minor = jax.jit(batch_minor)


def batch_minor_with_layout_change(a: jax.Array, b: jax.Array
                                   ) -> jax.Array:
    """The honest cost of changing the layout when the data does not
    arrive batch-minor: the transposed arrays written to memory by one
    jitted program (its outputs have the standard row-major layout, so
    XLA cannot make the transpose a mere relabelling), then reduced by
    another. Call it unjitted: it is two programs by design."""
    out = _batch_minor(*_to_batch_minor(a, b))
    return out.T.reshape(*a.shape[:-1], 1)


def segment_matmul(a: jax.Array, b: jax.Array) -> jax.Array:
    """Multiply as flat rows of 3K numbers, then sum each segment of K with
    a matrix product by a 3Kx3 matrix of zeros and ones."""
    k = a.shape[-1]
    rows = a.reshape(-1, 3 * k) * jnp.tile(b.reshape(-1, k), (1, 3))
    selector = jnp.repeat(jnp.eye(3, dtype=a.dtype), k, axis=0)  # (3K, 3)
    out = jnp.matmul(rows, selector, precision=jax.lax.Precision.HIGHEST)
    return out.reshape(*a.shape[:-1], 1)


def einsum(a: jax.Array, b: jax.Array) -> jax.Array:
    """The same product spelt as an einsum."""
    return jnp.einsum("...ik,...k->...i", a, b[..., 0])[..., None]


VERSIONS: dict[str, Fix] = {
    "a @ b": matmul, "pad K": padded, "einsum": einsum,
    "segment matmul": segment_matmul,
    "batch-minor + transposes": batch_minor_with_transposes,
    "batch-minor + layout change": batch_minor_with_layout_change,
    "Pallas row kernel": row_kernel.row_product,
    "Pallas row kernel, pieces": functools.partial(row_kernel.row_product,
                                                   pieces=True),
}
# The versions that are Triton kernels, which some GPUs cannot run.
TRITON_VERSIONS = ("Pallas row kernel", "Pallas row kernel, pieces")


def left_out(arch: tuple[int, int] | None = None) -> dict[str, str]:
    """The versions a GPU of compute capability ``arch`` (by default
    this machine's) cannot compile, each with one sentence on why: the
    Pallas row kernels are Triton kernels, which a T4 cannot run. Off a
    GPU none: the kernels run in Pallas's interpreter.

    Example:
        >>> list(left_out((7, 5))), left_out((9, 0))
        (['Pallas row kernel', 'Pallas row kernel, pieces'], {})
    """
    why = capability.lacking("Pallas (Triton backend)", arch)
    return {} if not why else {
        name: f"The {name} is a Triton kernel, which {why}: left out here."
        for name in TRITON_VERSIONS}


def versions_here(arch: tuple[int, int] | None = None) -> dict[str, Fix]:
    """`VERSIONS` less those `left_out` names."""
    missing = left_out(arch)
    return {name: fn for name, fn in VERSIONS.items() if name not in missing}


def structure_for_gpu(k: int, dtype: str = "float32",
                     batch: int = 1_000_000) -> list[dict[str, Any]]:
    """A child function (`helpers.xla.crosscompile.run`): each version of
    `VERSIONS` compiled for an H100 at ``batch`` rows, with its kernels,
    the fusion kinds and roots of its reductions, and the bytes XLA's cost
    analysis says it moves, against the floor (read ``a`` and ``b``
    once, write the result once)."""
    from helpers.xla import crosscompile
    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)  # this child only
    a = jax.ShapeDtypeStruct((batch, 3, k), jnp.dtype(dtype))
    b = jax.ShapeDtypeStruct((batch, k, 1), jnp.dtype(dtype))
    floor = reductions.bytes_moved(batch, k, jnp.dtype(dtype).itemsize)
    rows = []
    for name, fn in VERSIONS.items():
        if fn is batch_minor_with_layout_change:  # two programs
            a_t, b_t = jax.eval_shape(to_batch_minor, a, b)
            programs = [crosscompile.compile_for_gpu(to_batch_minor, a, b),
                        crosscompile.compile_for_gpu(batch_minor, a_t, b_t)]
        else:
            programs = [crosscompile.compile_for_gpu(fn, a, b)]
        texts = [p.as_text() for p in programs]
        rows.append({
            "version": name,
            "kernels": sum(hlo.kernel_count(t) for t in texts),
            "reductions": "/".join(hlo.reduction_kinds(t) for t in texts),
            "bytes / floor": sum(map(least_bytes, programs)) / floor})
    return rows


def least_bytes(compiled: Any) -> int:
    """The fewest bytes a compiled program can move, from XLA's buffer
    assignment (``memory_analysis()``): its arguments read once, its
    outputs written once, and every temporary buffer written once and
    read back at least once."""
    m = compiled.memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes
            + 2 * m.temp_size_in_bytes)


# Shapes for the dot-strength-reduction question: which dots does XLA:GPU
# turn into multiply + reduce, and which does it keep as a matrix product?
DOT_CASES = {
    "3xK matrix times K-vector, batched (the source, K=25)":
        ((1_000_000, 3, 25), (1_000_000, 25, 1)),
    "large matrix times vector (4096x4096 by 4096)":
        ((4096, 4096), (4096,)),
    "vector times vector (4096)": ((4096,), (4096,)),
}


def strength_reduction_for_gpu() -> list[dict[str, Any]]:
    """A child function (`helpers.xla.crosscompile.run`): for each of
    `DOT_CASES`, whether the module compiled for an H100 still computes a
    matrix product (a dot or GEMM kernel) or a multiply and a reduce."""
    from helpers.xla import crosscompile
    rows = []
    for name, (lhs, rhs) in DOT_CASES.items():
        text = crosscompile.compile_for_gpu(
            jnp.matmul, jax.ShapeDtypeStruct(lhs, jnp.float32),
            jax.ShapeDtypeStruct(rhs, jnp.float32)).as_text()
        kept = hlo.matrix_products(text) > 0
        rows.append({"dot": name, "matrix product kept": kept})
    return rows


def by_version(table: pd.DataFrame, ks: tuple[int, int] = (10, 50)
               ) -> pd.DataFrame:
    """Each version's worst and median share of the copy bandwidth over
    ``ks`` (inclusive), per dtype: the sweep's long table in four columns,
    the worst first, since the goal is about the worst K.

    Args:
        table: the sweep's rows (``version``, ``dtype``, ``K``,
            ``achieved``).
        ks: the range of K the summary covers.
    """
    inside = table[table["K"].between(*ks)]
    summary = inside.groupby(["version", "dtype"])["achieved"].agg(
        worst="min", median="median").unstack("dtype")
    summary.columns = [f"{dtype} {stat}" for stat, dtype in summary.columns]
    summary = summary[sorted(summary.columns, key=lambda c: (
        c.split()[0], "median" in c))]
    return summary.sort_values(summary.columns[0], ascending=False)


def against_default(table: pd.DataFrame, version: str,
                    dtype: str = "float32") -> pd.DataFrame:
    """``version``'s time over `a @ b`'s at each K, and whether XLA:GPU
    gave both the same fusion kind (named kind and emitter, as the table's
    ``fusions`` column reads them).

    Example:
        >>> rows = pd.DataFrame({"K": [10, 10], "dtype": ["float32"] * 2,
        ...     "version": ["a @ b", "v"], "ms": [1.0, 1.2],
        ...     "fusions": ["kLoop reduce"] * 2})
        >>> row = against_default(rows, "v").loc[10]
        >>> round(float(row["ratio"]), 2), bool(row["same kind"])
        (1.2, True)
    """
    rows = table[table["dtype"] == dtype].pivot_table(
        index="K", columns="version", values=["ms", "fusions"],
        aggfunc="first")
    return pd.DataFrame({
        "ratio": rows["ms"][version] / rows["ms"]["a @ b"],
        "same kind": rows["fusions"][version] == rows["fusions"]["a @ b"]})
