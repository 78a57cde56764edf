"""Timing JAX code honestly.

Three facts shape every measurement in this book:

1. JAX dispatches work asynchronously. A call returns as soon as the work
   is queued, so the clock must stop only after every output is ready.
2. The first call of a jitted function traces and compiles it. That time
   is real, but it is not the steady-state cost, so it is kept apart.
3. A single number hides noise. We repeat, keep every sample, and report
   the median with its spread.

`benchmark` does all three and returns a `Timing` that keeps the samples.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import sys
import time
from typing import Any, Callable, Literal, Mapping, Sequence, get_args

import jax
import numpy as np

SPREAD_WARNING = 0.10  # relative IQR above which a Timing warns


@dataclasses.dataclass(frozen=True)
class Timing:
    """Steady-state times of one function, in seconds.

    Attributes:
        name: what was timed.
        times: one sample per timed call (or the mean of a sample's back
            to back calls), in seconds, in the order taken.
        compile_s: seconds of the first call, which traces and compiles a
            jitted function and runs it once; None when not measured.
    """

    name: str
    times: tuple[float, ...]
    compile_s: float | None = None

    def __post_init__(self) -> None:
        if not self.times:
            raise ValueError(f"Timing {self.name!r} has no samples; "
                             "time at least one call (repeat >= 1).")
        bad = [t for t in self.times if not (t >= 0 and math.isfinite(t))]
        if bad:
            raise ValueError(f"Timing {self.name!r} has invalid samples "
                             f"{bad[:3]}; times must be finite and >= 0.")

    @property
    def n(self) -> int:
        """Number of samples."""
        return len(self.times)

    @property
    def median(self) -> float:
        """Median time in seconds: the book's headline statistic."""
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        """Fastest sample in seconds."""
        return min(self.times)

    def quantile(self, q: float) -> float:
        """The ``q``-quantile of the samples (``q`` in [0, 1]), in seconds."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile q must be in [0, 1], got {q}")
        return float(np.quantile(self.times, q))

    @property
    def iqr(self) -> float:
        """Interquartile range (75th minus 25th percentile) in seconds."""
        return self.quantile(0.75) - self.quantile(0.25)

    @property
    def rel_spread(self) -> float:
        """IQR over median: 0.02 means the middle half lies within 2%."""
        return self.iqr / self.median if self.median > 0 else 0.0

    def throughput(self, *, flops: float | None = None,
                   bytes: float | None = None) -> dict[str, float]:
        """Rates achieved at the median time.

        Args:
            flops: floating-point operations one call performs.
            bytes: bytes one call must move through memory.

        Returns:
            ``{'flop/s': ...}`` and/or ``{'byte/s': ...}``.

        Example:
            >>> t = Timing("copy", (0.001, 0.001))
            >>> t.throughput(bytes=2e9)["byte/s"]
            2000000000000.0
        """
        if flops is None and bytes is None:
            raise ValueError("throughput() needs flops=, bytes= or both.")
        if self.median <= 0:
            raise ValueError(f"median time of {self.name!r} is 0; cannot "
                             "compute a rate. Time a larger problem.")
        rates = {}
        if flops is not None:
            rates["flop/s"] = flops / self.median
        if bytes is not None:
            rates["byte/s"] = bytes / self.median
        return rates

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; `Timing.from_dict` reverses it."""
        return {"name": self.name, "times": list(self.times),
                "compile_s": self.compile_s}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Timing":
        """Rebuild a Timing saved with `to_dict`."""
        return cls(name=data["name"], times=tuple(data["times"]),
                   compile_s=data.get("compile_s"))

    def __repr__(self) -> str:
        # The spread is shown where it is large enough to matter (IQR over
        # the median above SPREAD_WARNING): `noisy` says so, and a reader
        # sees the number, not an alarm.
        spread = (f", spread {self.rel_spread:.0%} of the median"
                  if self.noisy else "")
        text = (f"{self.name}: median {format_seconds(self.median)} "
                f"(IQR {format_seconds(self.iqr)}{spread}, min "
                f"{format_seconds(self.min)}, n={self.n})")
        if self.compile_s is not None:
            text += f"; first call {format_seconds(self.compile_s)}"
        return text

    @property
    def noisy(self) -> bool:
        """True when the times spread by more than `SPREAD_WARNING` of the
        median (IQR over median): the machine was busy or the work too
        small, and more ``repeat`` or a larger problem would tighten it."""
        return self.rel_spread > SPREAD_WARNING


def format_seconds(seconds: float) -> str:
    """A time with a readable unit: ``0.00123`` becomes ``'1.23 ms'``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _is_waitable(leaf: Any) -> bool:
    """Arrays we know how to wait for: JAX, NumPy, CuPy, or anything with a
    ``block_until_ready`` method."""
    return (isinstance(leaf, (jax.Array, np.ndarray))
            or hasattr(leaf, "block_until_ready")
            or hasattr(leaf, "__cuda_array_interface__"))


def block(out: Any, name: str = "the function") -> Any:
    """Wait until every array in the pytree ``out`` has been computed.

    `jax.block_until_ready` waits for JAX arrays (and calls
    ``block_until_ready`` on other objects that have it); CuPy arrays are
    waited for by synchronising CuPy's current stream; NumPy arrays are
    already done.

    Raises:
        TypeError: ``out`` holds no arrays, or holds something that is not
            an array (a Python float, say), so there is nothing to wait for.
    """
    leaves = jax.tree.leaves(out)
    if not leaves:
        raise TypeError(
            f"{name} returned {out!r}, which holds no arrays: there is "
            "nothing to wait for, so the time would only measure dispatch. "
            "Return the arrays the function computes.")
    for path, leaf in jax.tree_util.tree_flatten_with_path(out)[0]:
        if not _is_waitable(leaf):
            where = jax.tree_util.keystr(path) or "the output"
            raise TypeError(
                f"{name} returned a {type(leaf).__name__} at {where}; "
                "benchmark needs arrays (jax.Array, numpy or CuPy) so it "
                "can wait until the device has finished. Return jnp arrays "
                "instead of Python numbers.")
    jax.block_until_ready(leaves)
    if any(hasattr(x, "__cuda_array_interface__") for x in leaves):
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            cupy.cuda.get_current_stream().synchronize()
    return out


def benchmark(fn: Callable[..., Any], *args: Any, warmup: int = 3,
              repeat: int = 20, name: str | None = None,
              rotate: Sequence[Sequence[Any]] | None = None,
              clock: Callable[[], float] = time.perf_counter,
              calls_per_sample: int = 1,
              max_seconds: float | None = None) -> Timing:
    """Time ``fn(*args)``: the first call apart, then ``repeat`` samples.

    Each sample waits for every output array before the clock stops, so
    the time covers the device's work and not just the dispatch.

    Args:
        fn: the function to time, usually jitted.
        *args: its arguments (leave empty when ``rotate`` is given).
        warmup: untimed calls after the first, so caches and clocks settle.
        repeat: timed calls; each gives one sample.
        name: label for the result; defaults to ``fn``'s name.
        rotate: several argument tuples used in turn, call ``i`` taking
            ``rotate[i % len(rotate)]``, so that an input small enough to
            stay in a cache does not make every call look fast.
        clock: a function returning seconds; tests pass a fake one.
        calls_per_sample: calls made back to back in each sample, waited
            for together at its end; the sample is their mean. With 1 (the
            default) every call also pays the host's wait for the device;
            with more, the device runs one call while the host dispatches
            the next, so a sample approaches the device's time per call.
        max_seconds: a time budget for the warm-up and the samples
            together (None: no budget). Warm-up stops after a quarter of
            it, and sampling once it is spent and at least
            ``min(repeat, 3)`` samples exist: a call of a second shows its
            median in a few samples, one of microseconds needs many.

    Returns:
        A `Timing` with ``repeat`` samples (fewer when ``max_seconds`` ran
        out) and the first call's time.

    Example:
        >>> f = jax.jit(lambda x: x * 2)
        >>> t = benchmark(f, jnp.ones(1000), repeat=5)
        >>> t.n
        5
    """
    if not callable(fn):
        raise TypeError(f"benchmark needs a function to call; got a "
                        f"{type(fn).__name__}. Pass the function itself, "
                        "not the result of calling it.")
    _check_counts(repeat, warmup)
    arg_sets = _argument_sets(args, rotate)
    label = name or getattr(fn, "__name__", None) or repr(fn)

    start = clock()
    block(fn(*arg_sets[0]), label)
    compile_s = clock() - start

    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds must be a positive number of "
                         f"seconds, or None; got {max_seconds!r}.")
    began = clock() if max_seconds is not None else 0.0

    def spent(share: float) -> bool:
        """True once ``share`` of the time budget is used (never
        without one: the clock is then read only to time the calls)."""
        return max_seconds is not None and \
            clock() - began > share * max_seconds

    for i in range(warmup):
        if spent(0.25):
            break
        block(fn(*arg_sets[(i + 1) % len(arg_sets)]), label)

    if not isinstance(calls_per_sample, int) or calls_per_sample < 1:
        raise ValueError(f"calls_per_sample must be an integer >= 1; got "
                         f"{calls_per_sample!r}.")
    times: list[float] = []
    call = 0
    for _ in range(repeat):
        if len(times) >= min(repeat, 3) and spent(1.0):
            break
        outputs = []
        start = clock()
        for _ in range(calls_per_sample):
            outputs.append(fn(*arg_sets[call % len(arg_sets)]))
            call += 1
        block(_live(outputs), label)
        times.append((clock() - start) / calls_per_sample)
    return Timing(name=label, times=tuple(times), compile_s=compile_s)


def _live(outputs: list[Any]) -> list[Any]:
    """The outputs still alive: one a later call took as a donated input
    is deleted (its buffer now holds that call's result, waited for)."""
    kept = [jax.tree.map(lambda leaf: None if getattr(
        leaf, "is_deleted", lambda: False)() else leaf, out)
        for out in outputs]
    return [out for out in kept if jax.tree.leaves(out)] or outputs[-1:]


def _check_counts(repeat: Any, warmup: Any) -> None:
    """Clear errors for a repeat or warmup that is not a count."""
    for label, value, least in (("repeat", repeat, 1), ("warmup", warmup, 0)):
        if not isinstance(value, int) or value < least:
            raise ValueError(f"{label} must be an integer >= {least}; "
                             f"got {value!r}.")


def _argument_sets(args: tuple[Any, ...],
                   rotate: Sequence[Sequence[Any]] | None
                   ) -> list[tuple[Any, ...]]:
    """The argument tuples `benchmark` cycles through."""
    if rotate is None:
        return [tuple(args)]
    if args:
        raise ValueError("Pass the arguments either positionally or as "
                         "rotate=[(...), (...)], not both.")
    sets = [tuple(s) for s in rotate]
    if not sets:
        raise ValueError("rotate must hold at least one argument tuple.")
    return sets


# The orders in which `interleaved` can call its functions.
Order = Literal["random", "alternating", "blocked"]
ORDERS: tuple[Order, ...] = get_args(Order)


def schedule(names: list[str], calls: int, order: Order, seed: int = 0
             ) -> list[str]:
    """The order in which to make ``calls`` calls of each name.

    Args:
        names: what is timed, e.g. ``['einsum', 'matmul']``.
        calls: calls of each.
        order: ``'random'`` (shuffled), ``'alternating'`` (ABAB...) or
            ``'blocked'`` (AAA...BBB..., the design to avoid).
        seed: seeds the shuffle.

    Example:
        >>> schedule(["a", "b"], 2, "alternating")
        ['a', 'b', 'a', 'b']
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}; got {order!r}.")
    if order == "blocked":
        return [name for name in names for _ in range(calls)]
    mixed = list(names) * calls
    if order == "random":
        np.random.default_rng(seed).shuffle(mixed)
    return mixed


def interleaved(fns: Mapping[str, Callable[..., Any]], *args: Any,
                repeat: int = 20, warmup: int = 3, order: Order = "random",
                seed: int = 0,
                clock: Callable[[], float] = time.perf_counter
                ) -> dict[str, Timing]:
    """Time several functions on the same arguments, runs mixed in time.

    A machine drifts: clocks boost and throttle, caches and other processes
    come and go. Timing version A for a minute and then version B for a
    minute measures the drift as well as the versions. Mixing the runs
    spreads any drift evenly over both, which is what
    `helpers.measuring.stats`'s
    tests assume.

    Args:
        fns: a name for each function to time.
        *args: the arguments every function is called with.
        repeat: timed calls per function.
        warmup: untimed calls per function after its first (compiling) one.
        order: ``'random'`` shuffles all timed calls (the safe default);
            ``'alternating'`` runs ABAB...; ``'blocked'`` runs all of A,
            then all of B (the mistake, kept to show it).
        seed: seeds the shuffle.
        clock: a function returning seconds; tests pass a fake one.

    Returns:
        A `Timing` per name, each sample in the order it was taken.

    Example:
        >>> f = jax.jit(lambda x: x * 2)
        >>> t = interleaved({"a": f, "b": f}, jnp.ones(100), repeat=5)
        >>> sorted(t), t["a"].n
        (['a', 'b'], 5)
    """
    if not fns or not all(callable(f) for f in fns.values()):
        raise TypeError("interleaved needs a dict of name -> function, e.g. "
                        "{'einsum': f, 'matmul': g}.")
    _check_counts(repeat, warmup)
    schedule(list(fns), 1, order)  # checks the order before any work
    first = {}
    for name, f in fns.items():  # compile and warm up each, untimed
        start = clock()
        block(f(*args), name)
        first[name] = clock() - start
        for _ in range(warmup):
            block(f(*args), name)
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    for name in schedule(names, repeat, order, seed):
        start = clock()
        block(fns[name](*args), name)
        times[name].append(clock() - start)
    return {name: Timing(name, tuple(times[name]), first[name])
            for name in names}
