"""Floors: how fast could this possibly run on this device?

A kernel must at least move its bytes through memory and do its arithmetic.
Each takes time at the device's best rate, and the larger of the two is the
floor (the roofline model: Williams, Waterman and Patterson, CACM 2009).
We do not trust datasheets for the rates; we measure them here, once:

* copy bandwidth: a large elementwise pass (read N bytes, write N bytes),
  counting both the reads and the writes;
* matmul rate: a large square matrix product, 2 n^3 floating-point
  operations.

Then ``achieved = floor / measured time`` says how close a version came.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp

from helpers import bench, env


@dataclasses.dataclass(frozen=True)
class Ceilings:
    """This device's measured best rates.

    Attributes:
        device: `env.describe()['device']` where they were measured.
        copy_bytes_per_s: bytes read plus bytes written per second.
        matmul_flops_per_s: floating-point operations per second of a
            large matrix product, by dtype name (``'float32'``, ...).
    """

    device: str
    copy_bytes_per_s: float
    matmul_flops_per_s: dict[str, float]

    def __repr__(self) -> str:
        rates = ", ".join(f"{dtype} matmul {rate / 1e12:.3g} TFLOP/s"
                          for dtype, rate in self.matmul_flops_per_s.items())
        return (f"Ceilings({self.device}: copy "
                f"{self.copy_bytes_per_s / 1e9:.4g} GB/s, {rates})")


def back_to_back() -> int:
    """Calls per timing sample when measuring what a device sustains
    (`bench.benchmark`'s ``calls_per_sample``): 10 on a GPU, where a
    blocked call also pays the host's wait (on the first H100 visit,
    blocked calls of ``x + 1`` moved 1.65 TB/s and its kernel 3.0 TB/s),
    and 1 on a CPU, whose results stay as they were."""
    return env.sizes(gpu=10, cpu=1)


def copy_bandwidth(nbytes: int | None = None, *, total: int | None = None,
                   repeat: int = 20) -> float:
    """Measure bytes per second of an elementwise pass over large arrays.

    The kernel is ``x + 1`` on float32, in place (the input is donated): it
    reads every byte once and writes every byte once, so it moves
    ``2 * nbytes``. (A plain copy may be elided by XLA; an add is always a
    real kernel.) Calls rotate among arrays totalling ``total`` bytes, so
    that no call finds its input in a cache left warm by the previous one.

    Args:
        nbytes: size of one input in bytes; by default 256 MiB on a GPU and
            16 MiB on a CPU.
        total: bytes of all the rotated inputs together; by default 1 GiB
            on a GPU and 256 MiB on a CPU, beyond any last-level cache.
        repeat: timed calls.

    Returns:
        Bytes read plus written per second at the median time, calls
        timed back to back on a GPU (`back_to_back`).
    """
    nbytes = nbytes or env.sizes(gpu=2**28, cpu=2**24)
    total = total or env.sizes(gpu=2**30, cpu=2**28)
    if nbytes < 4:
        raise ValueError(f"nbytes must be at least 4, got {nbytes}")
    count = max(1, total // nbytes)
    arrays = [jnp.full(nbytes // 4, i, jnp.float32) for i in range(count)]
    # Donating the input lets the output reuse its buffer, so the time is
    # the kernel's and not the allocator's: on a CPU, x + 1 with fresh
    # outputs of 32 MiB or more was measured far slower than in place.
    add_one = jax.jit(lambda a: a + 1, donate_argnums=0)

    def add_one_in_place(i: int) -> jax.Array:
        arrays[i] = add_one(arrays[i])
        return arrays[i]

    timing = bench.benchmark(add_one_in_place,
                             rotate=[(i,) for i in range(count)],
                             repeat=max(repeat, count), name="copy",
                             calls_per_sample=back_to_back())
    return timing.throughput(bytes=2 * arrays[0].nbytes)["byte/s"]


def matmul_rate(n: int | None = None, dtype: Any = jnp.float32, *,
                precision: str | None = None, repeat: int = 10) -> float:
    """Measure floating-point operations per second of an n x n matmul.

    Args:
        n: matrix size; by default 8192 on a GPU and 1024 on a CPU.
        dtype: element type (float32, bfloat16, float64 ...).
        precision: ``jnp.matmul``'s precision; None is JAX's default,
            which on NVIDIA GPUs with tensor cores (Ampere and newer) lets
            float32 products run as TF32 (docs.jax.dev, "Matmul
            precision"); ``'highest'`` asks for true float32.
        repeat: timed calls.

    Returns:
        ``2 n^3`` over the median time.
    """
    n = n or env.sizes(gpu=8192, cpu=1024)
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    keys = jax.random.split(jax.random.key(0))
    a = jax.random.normal(keys[0], (n, n), dtype)
    b = jax.random.normal(keys[1], (n, n), dtype)
    product = jax.jit(functools.partial(jnp.matmul, precision=precision))
    timing = bench.benchmark(product, a, b, repeat=repeat, name="matmul",
                             calls_per_sample=back_to_back())
    return timing.throughput(flops=2 * n**3)["flop/s"]


HIGHEST = "precision=highest"


@functools.cache
def measure_ceilings(dtypes: tuple[str, ...] = ("float32",), *,
                     n: int | None = None) -> Ceilings:
    """Measure this device's ceilings once per process (cached).

    Each dtype's matmul rate is measured at JAX's default precision, under
    the dtype's name; float32 is measured again with ``precision=
    'highest'``, under ``'float32, precision=highest'``, because on a GPU
    with tensor cores the default is TF32, a different instruction.

    Args:
        dtypes: matmul element types to measure, by name.
        n: matmul size (`matmul_rate`'s default when None). Measure at the
            size a floor is applied to: a small product runs far below the
            large one's rate.
    """
    rates = {d: matmul_rate(n, dtype=jnp.dtype(d)) for d in dtypes}
    if "float32" in dtypes:
        rates[f"float32, {HIGHEST}"] = matmul_rate(n, jnp.float32,
                                                   precision="highest")
    return Ceilings(device=env.describe()["device"],
                    copy_bytes_per_s=copy_bandwidth(),
                    matmul_flops_per_s=rates)


@dataclasses.dataclass(frozen=True)
class Cost:
    """What XLA says one call costs: flops and bytes, None when unknown."""

    flops: float | None
    bytes_accessed: float | None


def cost(fn: Callable[..., Any], *args: Any) -> Cost:
    """XLA's own count of flops and bytes for ``fn(*args)``.

    Reads ``compiled.cost_analysis()``, whose shape changed across jax
    versions (a list with one dict per device before 0.4.30, a dict since)
    and which some backends leave empty.

    Args:
        fn: the function; jitted here if it is not already.
        *args: example arguments (arrays or `jax.ShapeDtypeStruct`).

    Returns:
        A `Cost`; fields are None when XLA did not report them.
    """
    from helpers import hlo

    analysis = hlo.compile(fn, *args).cost_analysis()
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else None
    analysis = analysis or {}
    flops = analysis.get("flops")
    moved = analysis.get("bytes accessed")
    return Cost(flops=float(flops) if flops is not None else None,
                bytes_accessed=float(moved) if moved is not None else None)


@dataclasses.dataclass(frozen=True)
class Floor:
    """The least time a kernel can take, and what limits it.

    Attributes:
        seconds: the larger of the memory and compute times.
        memory_s: bytes over copy bandwidth.
        compute_s: flops over the matmul rate.
        bound: ``'memory'`` or ``'compute'``, whichever is larger.
    """

    seconds: float
    memory_s: float
    compute_s: float
    bound: str


def floor(*, bytes: float = 0.0, flops: float = 0.0,
          ceilings: Ceilings | None = None, dtype: str = "float32") -> Floor:
    """The roofline floor for moving ``bytes`` and computing ``flops``.

    Args:
        bytes: bytes the work must read and write at least once.
        flops: floating-point operations it must do.
        ceilings: measured rates; by default `measure_ceilings()`.
        dtype: which matmul rate counts as the compute ceiling.

    Example:
        >>> c = Ceilings("test", 1e12, {"float32": 1e14})
        >>> floor(bytes=8e9, ceilings=c).seconds
        0.008
    """
    if bytes < 0 or flops < 0:
        raise ValueError(f"bytes and flops must be >= 0; got bytes={bytes}, "
                         f"flops={flops}")
    if bytes == 0 and flops == 0:
        raise ValueError("floor() needs bytes=, flops= or both; a kernel "
                         "that moves nothing and computes nothing has no "
                         "floor.")
    ceilings = ceilings or measure_ceilings((dtype,))
    if dtype not in ceilings.matmul_flops_per_s and flops:
        raise KeyError(f"no measured matmul rate for {dtype!r}; measured: "
                       f"{sorted(ceilings.matmul_flops_per_s)}. Call "
                       f"measure_ceilings(({dtype!r},)).")
    memory_s = bytes / ceilings.copy_bytes_per_s
    compute_s = flops / ceilings.matmul_flops_per_s[dtype] if flops else 0.0
    bound = "memory" if memory_s >= compute_s else "compute"
    return Floor(seconds=max(memory_s, compute_s), memory_s=memory_s,
                 compute_s=compute_s, bound=bound)


def achieved(timing: bench.Timing | float, limit: Floor | float) -> float:
    """Fraction of the floor reached: 1.0 is at the limit, 0.25 is 4x off.

    Args:
        timing: a `Timing` (its median counts) or seconds.
        limit: a `Floor` or seconds.
    """
    seconds = timing.median if isinstance(timing, bench.Timing) else timing
    least = limit.seconds if isinstance(limit, Floor) else limit
    if seconds <= 0:
        raise ValueError(f"measured time must be positive, got {seconds}")
    return least / seconds
