"""The programs chapter 2 runs on a GPU, at the sizes it picks there, and
how often (`helpers.xla.gpu_floors`), for the how-to page's table of
Colab's GPUs: the sweep of ``a @ b`` (with the fusion autotuner on and
off, and CuPy's product, which moves the same bytes), every fix at every
K and dtype, and exercise 2.1's check.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from helpers.workbook.ch01_measuring.gpu_workload import MEASURE, ceilings
from helpers.workbook.ch02_fusion import exercises, fixes
from helpers.xla.gpu_floors import Program

# The chapter's GPU sizes (`machine.sizes(gpu=...)` in its cells).
BATCH = (1000, 1000)
KS = [5, 10, 16, 20, 24, 25, 32, 35, 40, 45, 50, 64]
DTYPES = ("float32", "float64")
CUPY_CALLS = 24  # bench.benchmark's defaults


def _inputs(k: int, dtype: str) -> tuple[jax.ShapeDtypeStruct, ...]:
    return (jax.ShapeDtypeStruct((*BATCH, 3, k), dtype),
            jax.ShapeDtypeStruct((*BATCH, k, 1), dtype))


def _at(k: int, dtype: str) -> list[Program]:
    """The sweep's and the fixes' programs at one K and dtype."""
    a, b = _inputs(k, dtype)
    stored = jax.eval_shape(fixes.to_batch_minor, a, b)
    sweep = 2 * MEASURE + CUPY_CALLS  # autotuner on, off; CuPy
    programs = [Program(f"a @ b, K={k}, {dtype}", fixes.matmul, (a, b),
                        sweep, dtype=dtype)]
    for name, fn in fixes.VERSIONS.items():
        if fn in (fixes.matmul, fixes.batch_minor_with_layout_change):
            continue
        programs.append(Program(f"{name}, K={k}, {dtype}", fn, (a, b),
                                MEASURE, dtype=dtype))
    programs += [  # the layout change is two programs; batch-minor reuses
        Program(f"to batch-minor, K={k}, {dtype}", fixes.to_batch_minor,
                (a, b), MEASURE, dtype=dtype),
        Program(f"batch-minor, K={k}, {dtype}", fixes.batch_minor, stored,
                2 * MEASURE, dtype=dtype)]
    return programs


def programs() -> list[Program]:
    """Every program chapter 2 runs on a GPU."""
    return [*ceilings(),
            *(program for k in KS for dtype in DTYPES
              for program in _at(k, dtype)),
            *exercise_checks(2)]


def exercise_checks(checks: int) -> list[Program]:
    """Exercise 2.1's speed check run ``checks`` times (the workshop's
    kit check, the facilitators' wrong attempts): each times an answer
    and ``a @ b``, 44 calls each."""
    a, b = _inputs(25, "float32")
    return [Program("exercise 2.1, an answer", exercises.solution, (a, b),
                    checks * MEASURE),
            Program("exercise 2.1, a @ b", jnp.matmul, (a, b),
                    checks * MEASURE)]
