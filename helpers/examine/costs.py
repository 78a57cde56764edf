"""What a slow pattern costs on the H100, from what the book measured
there.

A pattern is slow only where its cost is large beside the work around
it: a loop's launches beside its step's arithmetic, a host round trip
beside the same. `H100` holds the rates and overheads the book recorded
on its reference GPU (chapter 1's copy bandwidth and float32 rate,
chapter 3's cost of a launch and of a round trip to the host), and
`Work` turns a step's flops and bytes into the least time it takes
there, with the arithmetic written out for the report.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from typing import Any

from helpers.measuring import recorded


@dataclasses.dataclass(frozen=True)
class Rates:
    """A GPU's measured rates and overheads, in SI units.

    Attributes:
        copy_bytes_per_s: the copy bandwidth (bytes read and written).
        float32_flops_per_s: float32 matrix products at
            ``precision='highest'``: the slowest float32 path, so a step's
            work is never made to look smaller than it is.
        launch_s: one kernel launched on its own, inside a loop step.
        graph_launch_s: one kernel replayed inside a CUDA graph.
        round_trip_s: a while loop's step of unknown trip count, above the
            same step with the count known: the host reading the
            condition back.
        source: where the numbers come from, for the report.
    """

    copy_bytes_per_s: float
    float32_flops_per_s: float
    launch_s: float
    graph_launch_s: float
    round_trip_s: float
    source: str


def _median_step(rows: list[dict[str, Any]], variant: str) -> float:
    return statistics.median(r["us_per_step"] for r in rows
                             if r["variant"] == variant) * 1e-6


def _median_per_kernel(rows: list[dict[str, Any]], variant: str) -> float:
    return statistics.median(r["us_per_step"] / r["kernels_per_step"]
                             for r in rows if r["variant"] == variant) * 1e-6


@functools.cache
def h100() -> Rates | None:
    """The reference H100's rates, from chapter 1's and chapter 3's
    recordings; None where they are not in ``recorded/``.

    Example:
        >>> rates = h100()
        >>> rates is None or 1e-7 < rates.launch_s < 1e-4
        True
    """
    try:
        ceilings = recorded.load("01_measuring/summary")["data"]["ceilings"]
        launches = recorded.load("03_launches/variants")
    except (recorded.MissingRecording, KeyError):
        return None
    rows = launches["data"]["gpu"]
    when = str(launches["provenance"]["date"])[:10]
    return Rates(
        copy_bytes_per_s=ceilings["copy_bytes_per_s"],
        float32_flops_per_s=ceilings["matmul_flops_per_s"][
            "float32, precision=highest"],
        # the scan whose three kernels a step are launched one by one,
        # and the loop whose five run as one CUDA graph (chapter 3)
        launch_s=_median_per_kernel(rows, "scan, noise outside"),
        graph_launch_s=_median_per_kernel(rows, "while, static bound"),
        round_trip_s=(_median_step(rows, "while, traced bound")
                      - _median_step(rows, "while, static bound")),
        source=f"H100, chapters 1 and 3, {when}")


@dataclasses.dataclass(frozen=True)
class RowSpeed:
    """How fast a kLoop reduction over rows of ``length`` ran on the
    H100: chapter 2's product ``(..., 3, K) @ (..., K, 1)`` in float32,
    its kernel a kLoop reduction, at the measured K nearest ``length``."""

    length: int
    share: float  # of the copy bandwidth
    source: str


@functools.cache
def _kloop_shares() -> tuple[dict[int, float], str] | None:
    try:
        sweep = recorded.load("02_fusion/sweep")
    except recorded.MissingRecording:
        return None
    rows = sweep["data"]["rows"]
    shares = {int(k): float(a) for k, d, v, a, f in zip(
        rows["K"], rows["dtype"], rows["version"], rows["achieved"],
        rows["fusions"]) if d == "float32" and v == "a @ b" and "kLoop" in f}
    when = str(sweep["provenance"]["date"])[:10]
    return (shares, f"H100, chapter 2, {when}") if shares else None


def kloop_speed(length: int) -> RowSpeed | None:
    """Chapter 2's kLoop reduction on the H100 at the row length nearest
    ``length`` (the nearer shorter one on a tie), or None where that
    recording is not here.

    Example:
        >>> speed = kloop_speed(25)
        >>> speed is None or 0 < speed.share < 2
        True
    """
    found = _kloop_shares()
    if found is None:
        return None
    shares, source = found
    nearest = min(shares, key=lambda k: (abs(k - length), k))
    return RowSpeed(nearest, shares[nearest], source)


def seconds(value: float) -> str:
    """A duration as a reader says it: ``'14 µs'``, ``'2.1 ms'``.

    Example:
        >>> seconds(1.44e-5), seconds(0.0021), seconds(3e-9)
        ('14 µs', '2.1 ms', '0.0030 µs')
    """
    if value >= 1:
        return f"{figures(value)} s"
    if value >= 1e-3:
        return f"{figures(value * 1e3)} ms"
    return f"{figures(value * 1e6)} µs"


def figures(value: float) -> str:
    """Two significant figures, never in scientific notation.

    Example:
        >>> figures(183.4), figures(6.14), figures(0.00113), figures(61234)
        ('180', '6.1', '0.0011', '61,000')
    """
    if value == 0:
        return "0"
    decimals = max(0, 1 - math.floor(math.log10(abs(value))))
    return f"{float(f'{value:.2g}'):,.{decimals}f}"


def quantity(value: float, unit: str) -> str:
    """A count with its SI prefix: ``'1.1 GFLOP'``, ``'19 MB'``.

    Example:
        >>> quantity(1.07e9, "FLOP"), quantity(400, "B")
        ('1.1 GFLOP', '400 B')
    """
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{figures(value / factor)} {prefix}{unit}"
    return f"{figures(value)} {unit}"


@dataclasses.dataclass(frozen=True)
class Work:
    """The arithmetic and the memory traffic of one step of a loop, or of
    one operation, by XLA's cost analysis."""

    flops: float
    bytes: float

    def seconds(self, rates: Rates) -> float:
        """The least time it takes: float32 arithmetic at the slowest
        float32 rate, or the bytes at the copy bandwidth, whichever is
        longer."""
        return max(self.flops / rates.float32_flops_per_s,
                   self.bytes / rates.copy_bytes_per_s)

    def said(self, rates: Rates) -> str:
        """``'at least 21 µs of work (1.1 GFLOP, 19 MB)'``."""
        return (f"at least {seconds(self.seconds(rates))} of work "
                f"({quantity(self.flops, 'FLOP')}, "
                f"{quantity(self.bytes, 'B')})")


# What a finding's cost says where the book has nothing to price it with
# yet: the reference H100's run of the field guide's case fills it in
# (`measured_case`).
UNPRICED = "no H100 measurement of this pattern"


def launches(kernels: int, steps: int | None, rates: Rates,
             graph: bool = False) -> str:
    """What launching ``kernels`` a step costs over ``steps`` (None: a
    count known only when it runs): one by one, or replayed as a CUDA
    graph (``graph``), at chapter 3's cost of a kernel in a graph.

    Example:
        >>> r = Rates(3e12, 5e13, 3e-6, 1.4e-6, 1.4e-5, "t")
        >>> launches(2, 100, r)
        'launches: 2 x 3.0 µs = 6.0 µs a step, 600 µs over 100 steps (t)'
    """
    each = rates.graph_launch_s if graph else rates.launch_s
    step = kernels * each
    over = ("" if steps is None else
            f", {seconds(step * steps)} over {steps:,} steps")
    what = "graph replays" if graph else "launches"
    return (f"{what}: {kernels} x {seconds(each)} = "
            f"{seconds(step)} a step{over} ({rates.source})")


def round_trips(count: int | None, rates: Rates, what: str = "a step"
                ) -> str:
    """What ``count`` round trips to the host cost (None: one per step of
    a loop whose count is known only when it runs).

    Example:
        >>> r = Rates(3e12, 5e13, 3e-6, 1.4e-6, 1.4e-5, "t")
        >>> round_trips(8, r, "a call")
        'host round trips: 8 x 14 µs = 110 µs a call (t)'
    """
    if count is None:
        return (f"a host round trip, {seconds(rates.round_trip_s)}, "
                f"every step ({rates.source})")
    return (f"host round trips: {count:,} x {seconds(rates.round_trip_s)} "
            f"= {seconds(count * rates.round_trip_s)} {what} "
            f"({rates.source})")


def traffic(nbytes: float, passes: int, rates: Rates, what: str,
            bound: str = "at least") -> str:
    """The least time ``passes`` passes over ``nbytes`` take at the copy
    bandwidth (``bound``: how that time bounds the cost).

    Example:
        >>> r = Rates(3e12, 5e13, 3e-6, 1.4e-6, 1.4e-5, "t")
        >>> traffic(2**28, 2, r, "written and read")
        'written and read: 2 x 270 MB at 3.0 TB/s = at least 180 µs (t)'
    """
    times = "" if passes == 1 else f"{passes} x "
    return (f"{what}: {times}{quantity(nbytes, 'B')} at "
            f"{quantity(rates.copy_bytes_per_s, 'B/s')} = {bound} "
            f"{seconds(passes * nbytes / rates.copy_bytes_per_s)} "
            f"({rates.source})")


@functools.cache
def measured_case(pattern: str) -> str | None:
    """The field guide's case of ``pattern`` as the reference H100
    measured it (its slow and fixed versions), or None where that
    recording is not here yet.

    Example:
        >>> measured_case("no such pattern") is None
        True
    """
    try:
        cases = recorded.load("10_field_guide/cases")
    except recorded.MissingRecording:
        return None
    case = cases["data"].get(pattern)
    if not case:
        return None
    unit = f" {case['unit']}" if case["unit"] else ""
    when = str(cases["provenance"]["date"])[:10]
    return (f"the field guide's case on the H100 ({when}): "
            f"{case['measure']} {case['slow']:.3g}{unit} slow, "
            f"{case['fixed']:.3g}{unit} fixed")
