"""The programs chapter 1 runs on a GPU, at the sizes it picks there, and
how often (`helpers.xla.gpu_floors`): what the how-to page's table of
Colab's GPUs predicts from. The counts follow the timing helpers'
defaults (`helpers.measuring.bench`: a first call, 3 warm-ups, 20
samples; `device_time.measure` as many again under the profiler).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from helpers.workbook.ch01_measuring import recording
from helpers.xla.gpu_floors import Program, target_memory

# The chapter's GPU sizes (`machine.sizes(gpu=...)` in its cells; a test
# reads them there).
MATMUL_N = 8192
LARGE_ON_GPU = recording.LARGE_ON_GPU
CACHE_SIZES = [2**k for k in range(20, 31, 2)]  # bytes
ROTATED_BYTES = 2**30  # the arrays rotated through, together
MEASURE = 44  # device_time.measure's calls at its defaults
CEILING_MATMUL = 24  # roofline's matmul timing: repeat=10, profiled


def _f32(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def ceilings(n: int = MATMUL_N) -> list[Program]:
    """`roofline.measure_ceilings`: the matmul at both precisions, the
    copy and the read, as every chapter that measures them runs them."""
    square = _f32(n, n)
    return [
        Program("matmul ceiling", jnp.matmul, (square, square),
                CEILING_MATMUL),
        Program("matmul ceiling, highest",
                lambda a, b: jnp.matmul(a, b, precision="highest"),
                (square, square), CEILING_MATMUL, highest=True),
        Program("copy ceiling", lambda a: a + 1, (_f32(2**26),), MEASURE),
        Program("read ceiling", lambda a: a.sum(axis=1),
                (_f32(2**16, 2**10),), MEASURE)]


def _cache_sweep() -> list[Program]:
    """`x + 1` at each size, on one array (64 calls) and rotating among
    arrays that together hold `ROTATED_BYTES` (4 + 2 x repeat calls)."""
    programs = []
    for size in CACHE_SIZES:
        count = max(2, ROTATED_BYTES // size)
        programs.append(Program(f"x + 1, {size} bytes", lambda v: v + 1,
                                (_f32(size // 4),),
                                64 + 4 + 2 * max(30, count)))
    return programs


def programs() -> list[Program]:
    """Every program chapter 1 runs on a GPU."""
    m = _f32(MATMUL_N, MATMUL_N)
    wide = _f32(MATMUL_N + 8, MATMUL_N + 8)
    return [
        *ceilings(),
        Program("m @ m", jnp.matmul, (m, m), 65),
        Program("tanh(m @ m) * 2", lambda a: jnp.tanh(a @ a) * 2, (m,), 24),
        Program("tanh(m @ m) * 4", lambda a: jnp.tanh(a @ a) * 4, (m,), 1),
        Program("tanh(m @ m) * 4, a new shape",
                lambda a: jnp.tanh(a @ a) * 4, (wide,), 2),
        Program("sin(m) @ m", lambda a: jnp.sin(a) @ a, (m,), 30),
        Program("x + 1, small", lambda v: v + 1, (_f32(2**10),), 268),
        # ten calls queued back to back keep ten outputs alive
        Program("x + 1, large", lambda v: v + 1, (_f32(
            recording.large_elements(target_memory())),), 268,
            live_outputs=10),
        *_cache_sweep(),
        Program("2v + 1", lambda v: 2 * v + 1, (m,), MEASURE),
        Program("v.sum(1)", lambda v: v.sum(1), (m,), MEASURE),
        Program("v @ v", jnp.matmul, (m, m), MEASURE)]
