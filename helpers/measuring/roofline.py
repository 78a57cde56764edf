"""Floors: how fast could this possibly run on this device?

A kernel must at least move its bytes through memory and do its arithmetic.
Each takes time at the device's best rate, and the larger of the two is the
floor (the roofline model: Williams, Waterman and Patterson, CACM 2009).
We do not trust datasheets for the rates; we measure them here, once:

* copy bandwidth: a large elementwise pass (read N bytes, write N bytes),
  counting both the reads and the writes;
* matmul rate: a large square matrix product, 2 n^3 floating-point
  operations.

Both are timed by the device's clock (`helpers.measuring.device_time`: the span
of the profiled kernels of a call), not the wall clock, which also counts the
host's part of every call (dispatch, launch, the wait for the result): for a
kernel of a millisecond or less, a sizeable share of the time.

Then ``achieved = floor / measured time`` says how close a version came.
A version cannot beat its floor; a fraction above 1 is a measurement error
(a ceiling timed with the host's overhead in it, a count of bytes larger
than the kernel moves, an input left in a cache), and `share` shows it as
one instead of as a number.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Literal

import jax
import jax.numpy as jnp

from helpers.measuring import bench, device_time, machine


@dataclasses.dataclass(frozen=True)
class Ceilings:
    """This device's measured best rates.

    Attributes:
        device: `machine.describe()['device']` where they were measured.
        copy_bytes_per_s: bytes read plus bytes written per second.
        matmul_flops_per_s: floating-point operations per second of a
            large matrix product, by dtype name (``'float32'``, ...).
        timings: the measurements behind the rates (``'copy'``,
            ``'read'`` and each matmul's name), device time beside wall
            time; empty for ceilings given by hand.
        read_bytes_per_s: bytes read per second by a kernel that reads
            and hardly writes (`read_timing`); None where not measured.
            Reads alone stream faster than a copy's reads and writes, so
            a kernel that mostly reads is judged against this.
    """

    device: str
    copy_bytes_per_s: float
    matmul_flops_per_s: dict[str, float]
    timings: dict[str, device_time.DeviceTiming] = dataclasses.field(
        default_factory=dict, compare=False, repr=False)
    read_bytes_per_s: float | None = None

    def __repr__(self) -> str:
        rates = ", ".join(f"{dtype} matmul {rate / 1e12:.3g} TFLOP/s"
                          for dtype, rate in self.matmul_flops_per_s.items())
        read = ("" if self.read_bytes_per_s is None else
                f"read {self.read_bytes_per_s / 1e9:.4g} GB/s, ")
        return (f"Ceilings({self.device}: copy "
                f"{self.copy_bytes_per_s / 1e9:.4g} GB/s, {read}{rates})")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict for a recording: the rates, and each
        measurement's device, kernel and wall time and host overhead."""
        return {"device": self.device,
                "copy_bytes_per_s": self.copy_bytes_per_s,
                "read_bytes_per_s": self.read_bytes_per_s,
                "matmul_flops_per_s": dict(self.matmul_flops_per_s),
                "timings": {name: timing.to_dict()
                            for name, timing in self.timings.items()}}


def copy_timing(nbytes: int | None = None, *, total: int | None = None,
                repeat: int = 20) -> tuple[device_time.DeviceTiming, int]:
    """Time an elementwise pass over large arrays by the device's clock.

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
        The `DeviceTiming` of one call, and the bytes one call moves.
    """
    nbytes = nbytes or machine.sizes(gpu=2**28, cpu=2**24)
    total = total or machine.sizes(gpu=2**30, cpu=2**28)
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

    timing = device_time.measure(add_one_in_place,
                                 rotate=[(i,) for i in range(count)],
                                 repeat=max(repeat, count), name="copy")
    return timing, 2 * arrays[0].nbytes


def read_timing(nbytes: int | None = None, *, total: int | None = None,
                repeat: int = 20) -> tuple[device_time.DeviceTiming, int]:
    """Time a pass that reads large arrays and hardly writes, by the
    device's clock: the sum of each row of 1024 float32 numbers, which
    reads every byte once and writes one number in 1024. Arguments and
    the rotation among arrays are `copy_timing`'s.

    Returns:
        The `DeviceTiming` of one call, and the bytes one call moves.
    """
    nbytes = nbytes or machine.sizes(gpu=2**28, cpu=2**24)
    total = total or machine.sizes(gpu=2**30, cpu=2**28)
    if nbytes < 4096:
        raise ValueError(f"nbytes must be at least 4096 (one row), got "
                         f"{nbytes}")
    count = max(1, total // nbytes)
    arrays = [jnp.full((nbytes // 4096, 1024), i, jnp.float32)
              for i in range(count)]
    row_sums = jax.jit(lambda a: a.sum(axis=1))
    timing = device_time.measure(lambda i: row_sums(arrays[i]),
                                 rotate=[(i,) for i in range(count)],
                                 repeat=max(repeat, count), name="read")
    rows = arrays[0].shape[0]
    return timing, arrays[0].nbytes + rows * 4


def copy_bandwidth(nbytes: int | None = None, *, total: int | None = None,
                   repeat: int = 20) -> float:
    """Bytes read plus written per second of `copy_timing`'s pass, at the
    median device time (same arguments)."""
    timing, moved = copy_timing(nbytes, total=total, repeat=repeat)
    return timing.throughput(bytes=moved)["byte/s"]


def matmul_timing(n: int | None = None, dtype: Any = jnp.float32, *,
                  precision: str | None = None, repeat: int = 10
                  ) -> device_time.DeviceTiming:
    """Time an n x n matmul by the device's clock.

    Args:
        n: matrix size; by default 8192 on a GPU and 1024 on a CPU.
        dtype: element type (float32, bfloat16, float64 ...).
        precision: ``jnp.matmul``'s precision; None is JAX's default,
            which on NVIDIA GPUs with tensor cores (Ampere and newer) lets
            float32 products run as TF32 (docs.jax.dev, "Matmul
            precision"); ``'highest'`` asks for true float32.
        repeat: timed calls.
    """
    n = n or machine.sizes(gpu=8192, cpu=1024)
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    keys = jax.random.split(jax.random.key(0))
    a = jax.random.normal(keys[0], (n, n), dtype)
    b = jax.random.normal(keys[1], (n, n), dtype)
    product = jax.jit(functools.partial(jnp.matmul, precision=precision))
    return device_time.measure(product, a, b, repeat=repeat,
                               name=f"matmul {n}")


def matmul_rate(n: int | None = None, dtype: Any = jnp.float32, *,
                precision: str | None = None, repeat: int = 10) -> float:
    """``2 n^3`` over the median device time of `matmul_timing` (same
    arguments): floating-point operations per second."""
    n = n or machine.sizes(gpu=8192, cpu=1024)
    timing = matmul_timing(n, dtype, precision=precision, repeat=repeat)
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
        n: matmul size (`matmul_timing`'s default when None). Measure at
            the size a floor is applied to: a small product runs far below
            the large one's rate.
    """
    n = n or machine.sizes(gpu=8192, cpu=1024)
    timings = {d: matmul_timing(n, jnp.dtype(d)) for d in dtypes}
    if "float32" in dtypes:
        timings[f"float32, {HIGHEST}"] = matmul_timing(
            n, jnp.float32, precision="highest")
    rates = {name: t.throughput(flops=2 * n**3)["flop/s"]
             for name, t in timings.items()}
    copy, moved = copy_timing()
    read, read_moved = read_timing()
    return Ceilings(device=machine.describe()["device"],
                    copy_bytes_per_s=copy.throughput(bytes=moved)["byte/s"],
                    matmul_flops_per_s=rates,
                    timings={"copy": copy, "read": read, **timings},
                    read_bytes_per_s=read.throughput(
                        bytes=read_moved)["byte/s"])


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
    from helpers.xla import hlo

    analysis = hlo.compiled(fn, *args).cost_analysis()
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
    bound: Literal["memory", "compute"]

    def __repr__(self) -> str:
        from helpers.measuring.bench import format_seconds
        return (f"Floor({format_seconds(self.seconds)}, {self.bound}-bound: "
                f"memory {format_seconds(self.memory_s)}, compute "
                f"{format_seconds(self.compute_s)})")


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
    return Floor(seconds=max(memory_s, compute_s), memory_s=memory_s,
                 compute_s=compute_s,
                 bound="memory" if memory_s >= compute_s else "compute")


def achieved(timing: bench.Timing | device_time.DeviceTiming | float,
             limit: Floor | float) -> float:
    """Fraction of the floor reached: 1.0 is at the limit, 0.25 is 4x off.

    Args:
        timing: a `Timing` or `DeviceTiming` (its median counts) or
            seconds.
        limit: a `Floor` or seconds.
    """
    seconds = timing if isinstance(timing, (int, float)) else timing.median
    least = limit.seconds if isinstance(limit, Floor) else limit
    if seconds <= 0:
        raise ValueError(f"measured time must be positive, got {seconds}")
    return least / seconds


# What a table shows instead of a fraction of a ceiling above 1.
ABOVE_CEILING = "over ceiling: error"


def share(fraction: float | None) -> float | str | None:
    """A fraction of a ceiling as a page may show it: the number up to 1,
    `ABOVE_CEILING` above it (no version beats its floor: the time, the
    ceiling or the byte count is wrong, and the text says which).

    Example:
        >>> share(0.73), share(1.34)
        (0.73, 'over ceiling: error')
    """
    if fraction is None or fraction != fraction:  # missing, or NaN
        return fraction
    return fraction if fraction <= 1.0 else ABOVE_CEILING
