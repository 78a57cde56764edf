"""The device's own time for a call, read from the profiler.

A wall-clock timing of a blocked call counts everything between the
Python call and the moment the host notices the result: dispatch, the
launch, the kernels, and the wait. The host's part is paid on every call,
and for a kernel of a millisecond or less it is a large share of the time:
timed that way, such a kernel looks much slower than it is. On a GPU the
measurement of record is therefore the *device time*: what the profiler
saw the device do.

`measure` runs a function under `jax.profiler.trace`, each call inside an
annotation of its own and waited for, and reads back, per call:

- **span**: from the start of its first kernel to the end of its last (the
  time the device was given to this call, gaps between kernels included);
- **kernel time**: the sum of its kernels' durations (the gaps left out);

and beside them the **wall time** of the same calls with the profiler off
(`helpers.measuring.bench.benchmark`), and the host's **overhead**, wall minus
span, as a number of its own. "Kernels" are the device events on a GPU
(kernels, copies, memsets, one per stream row); on a CPU, where XLA:CPU runs
its compiled steps (thunks) on host threads, they are the thunk events, each
named after its HLO instruction.

`per_call` is the part that reads a profile: a pure function of a trace
table and the calls' time windows, so a recorded GPU trace can be read
again on any machine, and tested.
"""

from __future__ import annotations

import dataclasses
import tempfile
from typing import Any, Callable, Mapping, Sequence

import jax
import pandas as pd

from helpers.measuring import bench
from helpers.profiler import trace

CALL_MARK = "device_time call"  # the annotation around each profiled call
GRAPH_ARG = "cuda_graph_id"  # a kernel event's argument inside a CUDA graph


def kernel_events(events: pd.DataFrame) -> pd.DataFrame:
    """The events that are the device's work: device events on a GPU;
    without any, the XLA:CPU thunks (host events whose arguments name an
    HLO module and instruction). A thunk that encloses others on its
    thread (a while loop's, say) is left out, so no time counts twice.

    Args:
        events: a frame from `helpers.profiler.trace.load`.
    """
    on_device = trace.device_events(events)
    if not on_device.empty:
        return on_device
    thunks = events[events["args"].map(
        lambda a: isinstance(a, dict) and "hlo_op" in a and "hlo_module" in a)]
    return _outermost(thunks)


def _outermost(events: pd.DataFrame) -> pd.DataFrame:
    """The events not inside another event of the same thread."""
    keep = []
    for _, part in events.groupby("thread", sort=False):
        reach = float("-inf")
        for index, row in part.sort_values(
                ["start_us", "dur_us"], ascending=[True, False]).iterrows():
            end = row["start_us"] + row["dur_us"]
            if end <= reach:
                continue  # within an earlier, longer event
            keep.append(index)
            reach = max(reach, end)
    return events.loc[sorted(keep)]


def call_windows(events: pd.DataFrame, mark: str = CALL_MARK
                 ) -> list[tuple[float, float]]:
    """The (start, end) in µs of each annotated call, in call order.

    Args:
        events: a frame from `helpers.profiler.trace.load`.
        mark: the annotation's name before the call number.

    Raises:
        ValueError: the profile holds no such annotations.
    """
    marked = events[events["name"].str.startswith(f"{mark} ")]
    if marked.empty:
        raise ValueError(f"the profile has no annotations named '{mark} "
                         "<n>': was it written by device_time.measure, or "
                         "with each call inside jax.profiler."
                         f"TraceAnnotation('{mark} <n>')?")
    order = marked["name"].str.removeprefix(f"{mark} ").astype(int)
    ends = marked["start_us"] + marked["dur_us"]
    return [(float(s), float(e)) for _, s, e in sorted(
        zip(order, marked["start_us"], ends))]


PER_CALL_COLUMNS = ["call", "kernels", "kernel_us", "span_us", "in_graph"]


def per_call(events: pd.DataFrame, windows: Sequence[tuple[float, float]]
             ) -> pd.DataFrame:
    """Each call's kernels, summed and spanned.

    A kernel belongs to the call whose window holds its start: a call
    waited for before the next begins cannot have kernels in another's
    window. Kernels outside every window (work before or after the calls)
    are left out.

    Args:
        events: a frame from `helpers.profiler.trace.load`.
        windows: (start, end) in µs of each call, in order.

    Returns:
        One row per call: ``call`` (0, 1, ...), ``kernels`` (events),
        ``kernel_us`` (their durations summed), ``span_us`` (first start
        to last end: with kernels on overlapping streams this is less
        than the sum) and ``in_graph`` (the share of its kernels that ran
        inside a CUDA graph).

    Raises:
        ValueError: no windows, or a call with no kernel in its window
            (on a CPU, a function XLA did not compile: nothing to time).
    """
    if len(windows) == 0:
        raise ValueError("per_call needs at least one call window.")
    kernels = kernel_events(events)
    if kernels.empty:
        raise ValueError(
            "the profile holds no kernel events: no device events (GPU) "
            "and no XLA:CPU thunks. Did the calls run jitted JAX code?")
    starts = kernels["start_us"].to_numpy()
    ends = starts + kernels["dur_us"].to_numpy()
    in_graph = kernels["args"].map(
        lambda a: isinstance(a, dict) and GRAPH_ARG in a).to_numpy()
    rows = []
    for call, (low, high) in enumerate(windows):
        inside = (starts >= low) & (starts <= high)
        if not inside.any():
            raise ValueError(
                f"call {call} ran no kernel in its window ({low:.1f} to "
                f"{high:.1f} µs): its work may have been done before the "
                "profile started (a cached result) or on another device.")
        rows.append({"call": call, "kernels": int(inside.sum()),
                     "kernel_us": float((ends - starts)[inside].sum()),
                     "span_us": float(ends[inside].max()
                                      - starts[inside].min()),
                     "in_graph": float(in_graph[inside].mean())})
    return pd.DataFrame(rows, columns=PER_CALL_COLUMNS)


@dataclasses.dataclass(frozen=True)
class DeviceTiming:
    """Device time, kernel time and wall time of one function, per call.

    Attributes:
        name: what was timed.
        span: per call, first kernel start to last kernel end (seconds).
        kernel: per call, the kernels' durations summed (seconds).
        wall: per call, blocked wall clock with the profiler off.
        kernels_per_call: the median number of kernel events per call.
        in_graph: the share of the kernels that ran inside a CUDA graph.
        kernels_from: ``'device events'`` (a GPU) or ``'XLA:CPU
            thunks'`` (a CPU, whose "device" is the host's own cores).
    """

    name: str
    span: bench.Timing
    kernel: bench.Timing
    wall: bench.Timing
    kernels_per_call: float
    in_graph: float
    kernels_from: str

    @property
    def median(self) -> float:
        """The device time of record: the median span, in seconds."""
        return self.span.median

    @property
    def overhead_s(self) -> float:
        """The host's part of a blocked call: median wall minus median
        span, in seconds (measured, so it can come out negative when the
        profiler slowed the device's part more than the host's)."""
        return self.wall.median - self.span.median

    def throughput(self, *, flops: float | None = None,
                   bytes: float | None = None) -> dict[str, float]:
        """Rates at the median device time (see `bench.Timing.throughput`).
        """
        return self.span.throughput(flops=flops, bytes=bytes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; `DeviceTiming.from_dict` reverses it."""
        return {"name": self.name, "span": self.span.to_dict(),
                "kernel": self.kernel.to_dict(),
                "wall": self.wall.to_dict(),
                "kernels_per_call": self.kernels_per_call,
                "in_graph": self.in_graph,
                "kernels_from": self.kernels_from,
                "overhead_s": self.overhead_s}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "DeviceTiming":
        """Rebuild a DeviceTiming saved with `to_dict`."""
        return cls(name=data["name"],
                   span=bench.Timing.from_dict(data["span"]),
                   kernel=bench.Timing.from_dict(data["kernel"]),
                   wall=bench.Timing.from_dict(data["wall"]),
                   kernels_per_call=data["kernels_per_call"],
                   in_graph=data["in_graph"],
                   kernels_from=data["kernels_from"])

    def __repr__(self) -> str:
        fmt = bench.format_seconds
        text = (f"{self.name}: device {fmt(self.median)} (span; kernels "
                f"{fmt(self.kernel.median)}, {self.kernels_per_call:g} per "
                f"call), wall {fmt(self.wall.median)}, host overhead "
                f"{'-' if self.overhead_s < 0 else ''}"
                f"{fmt(abs(self.overhead_s))}; "
                f"n={self.span.n}, {self.kernels_from}")
        if self.in_graph:
            text += f", {self.in_graph:.0%} of kernels in CUDA graphs"
        return text


def measure(fn: Callable[..., Any], *args: Any, repeat: int = 20,
            warmup: int = 3, rotate: Sequence[Sequence[Any]] | None = None,
            name: str | None = None, profiled: int | None = None,
            max_seconds: float | None = None) -> DeviceTiming:
    """Time ``fn(*args)`` by the device's clock, and by the wall clock.

    First `bench.benchmark` times ``repeat`` blocked calls with the
    profiler off (it also compiles and warms up); then the same calls run
    under `jax.profiler.trace`, each inside its own annotation and waited
    for, and `per_call` reads their kernels back.

    Args:
        fn: the function to time, usually jitted.
        *args: its arguments (leave empty when ``rotate`` is given).
        repeat: calls timed each way.
        warmup: untimed calls after the first.
        rotate: argument tuples used in turn (see `bench.benchmark`).
        name: label for the result; defaults to ``fn``'s name.
        profiled: calls timed under the profiler (default ``repeat``):
            fewer for a call of thousands of kernels, whose profile grows
            with every one (a loop of 8000 steps of 5 kernels is 40,000
            events a call).
        max_seconds: a time budget for the calls timed without the
            profiler (see `bench.benchmark`); the profiled calls are then
            no more than those timed.

    Returns:
        A `DeviceTiming`.

    Raises:
        RuntimeError: a profile is already being taken (jax.profiler
            allows one at a time).

    Example:
        >>> f = jax.jit(lambda x: x + 1)
        >>> t = measure(f, jax.numpy.ones(1000), repeat=3)
        >>> t.span.n, t.kernels_per_call
        (3, 1.0)
    """
    arg_sets = [tuple(args)] if rotate is None else [tuple(s) for s in rotate]
    label = name or getattr(fn, "__name__", None) or repr(fn)
    return measure_all({label: (fn, arg_sets)}, repeat=repeat,
                       warmup=warmup, profiled=profiled,
                       max_seconds=max_seconds)[label]


def measure_all(cases: Mapping[str, tuple[Callable[..., Any],
                                          Sequence[Sequence[Any]]]], *,
                repeat: int = 20, warmup: int = 3,
                profiled: int | None = None,
                max_seconds: float | None = None
                ) -> dict[str, DeviceTiming]:
    """`measure` for several functions, their profiled calls in one
    profile: a sweep of many small cases pays the profiler's start and
    stop once instead of once a case.

    Args:
        cases: a name for each case, and its function and argument tuples
            (one tuple, or several used in turn, like ``rotate``).
        repeat, warmup, profiled, max_seconds: as for `measure`, for
            every case.

    Returns:
        A `DeviceTiming` per name, in the order given.

    Example:
        >>> f = jax.jit(lambda x: x * 2)
        >>> x = jax.numpy.ones(8)
        >>> sorted(measure_all({"a": (f, [(x,)]), "b": (f, [(x,)])},
        ...                    repeat=2))
        ['a', 'b']
    """
    if profiled is not None and (not isinstance(profiled, int)
                                 or profiled < 1):
        raise ValueError(f"profiled must be an integer >= 1; got "
                         f"{profiled!r}.")
    walls = {name: bench.benchmark(fn, warmup=warmup, repeat=repeat,
                                   rotate=arg_sets, name=name,
                                   max_seconds=max_seconds)
             for name, (fn, arg_sets) in cases.items()}
    timed = min(wall.n for wall in walls.values())
    profiled = timed if profiled is None else min(profiled, timed)
    with tempfile.TemporaryDirectory() as folder:
        _profile(cases, profiled, folder)
        events = trace.load(folder)
    calls = per_call(events, call_windows(events))
    source = ("device events" if not trace.device_events(events).empty
              else "XLA:CPU thunks")
    timings = {}
    for index, name in enumerate(cases):
        own = calls.iloc[index * profiled:(index + 1) * profiled]
        timings[name] = DeviceTiming(
            name=name,
            span=bench.Timing(name, tuple(own["span_us"] * 1e-6)),
            kernel=bench.Timing(name, tuple(own["kernel_us"] * 1e-6)),
            wall=walls[name], kernels_per_call=float(own["kernels"].median()),
            in_graph=float(own["in_graph"].mean()), kernels_from=source)
    return timings


def _profile(cases: Mapping[str, tuple[Callable[..., Any],
                                       Sequence[Sequence[Any]]]],
             profiled: int, folder: str) -> None:
    """Run ``profiled`` calls of each case under one profile in
    ``folder``, each call in its own numbered annotation, waited for."""
    try:
        session = jax.profiler.trace(folder)
        session.__enter__()
    except RuntimeError as err:
        raise RuntimeError(
            "device_time.measure takes a profile of its own, and "
            "jax.profiler allows one at a time: call it outside "
            f"jax.profiler.trace ({err}).") from err
    try:
        number = 0
        for name, (fn, arg_sets) in cases.items():
            for call in range(profiled):
                with jax.profiler.TraceAnnotation(f"{CALL_MARK} {number}"):
                    bench.block(fn(*arg_sets[call % len(arg_sets)]), name)
                number += 1
    finally:
        session.__exit__(None, None, None)


def columns(timing: DeviceTiming) -> dict[str, float]:
    """A table row's three times of one call, in milliseconds: ``ms`` the
    wall clock (what a caller waits), ``device ms`` the span (the device
    time of record) and ``kernel ms`` the kernels alone (how busy the
    device was: far below the span when the host's launches set the
    pace)."""
    return {"ms": timing.wall.median * 1e3,
            "device ms": timing.median * 1e3,
            "kernel ms": timing.kernel.median * 1e3}

