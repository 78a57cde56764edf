"""The field guide's sentence about each before/after measured on the
machine that runs the page: what was measured, the two numbers, and what
they mean, in words written for each pattern.

Numbers read without scientific notation: a time in ms or µs, memory in
bytes, KiB or MiB, whichever reads best.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# A before/after within this ratio is the same, given this machine's noise.
SAME = 1.10


@dataclasses.dataclass(frozen=True)
class Wording:
    """How a case's section speaks of its before/after.

    Attributes:
        measured: what was run or compiled, e.g. "argsort of 1,048,576
            keys".
        slow, fixed: how the two versions differ, e.g. "with int64 keys".
        tie: what a tie shows, in the case's own words (each case has its
            own, so that section after section does not read the same).
        on_cpu: why a CPU does not pay for it, said only on a CPU.
    """

    measured: str
    slow: str
    fixed: str
    tie: str = ""
    on_cpu: str = ""


WORDING: dict[str, Wording] = {
    "host-round-trip": Wording(
        "8000 steps of the loop on 64 numbers", "with the bound traced",
        "with it static", "a bound the compiler cannot know costs this "
        "machine nothing it can measure",
        "the loop's condition never leaves the processor that runs it"),
    "launches-per-step": Wording(
        "8000 steps on 64 numbers", "as a scan", "as one Pallas kernel"),
    "random-in-loop": Wording(
        "50 steps on 64 numbers", "with the key split in the loop",
        "with the noise drawn first", "splitting the key and drawing the "
        "noise inside the loop is free here"),
    "retracing": Wording(
        "with vectors of 8 lengths, 100 to 107", "as they came",
        "padded to 128"),
    "float64": Wording(
        "the mean of sin² over 1,048,576 numbers", "in float64",
        "in float32", "at this size the wider type costs nothing "
        "measurable here"),
    "sort-64-bit": Wording(
        "argsort of 1,048,576 keys", "with int64 keys", "with int32 keys",
        "64-bit keys sort as fast as 32-bit ones here"),
    "scatter-contention": Wording(
        "summing 1,048,576 values into 64 segments",
        "with the ids' order unknown to XLA",
        "with `indices_are_sorted=True`", "the hint changes nothing this "
        "machine can measure"),
    "host-callback": Wording(
        "tanh then sin of 65,536 numbers", "with tanh in a NumPy callback",
        "all in JAX", "handing work to NumPy costs nothing measurable "
        "here", "the device is the host and the callback copies nothing "
        "between memories"),
    "large-temporaries": Wording(
        "the column sums of a sorted 8192 x 8192 outer product",
        "when the whole product is sorted at once",
        "when 512 columns are sorted at a time"),
    "no-donation": Wording(
        "a gradient step on 4 MiB of parameters", "without donation",
        "with the parameters donated"),
}


def figure(value: float) -> str:
    """Three significant figures, never in scientific notation.

    Example:
        >>> [figure(v) for v in (1234.5, 98.76, 5.432, 0.01234)]
        ['1,234', '98.8', '5.43', '0.0123']
    """
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def amount(value: float, unit: str) -> str:
    """A measured value in a unit that reads without an exponent: ms as
    ms or µs, MiB as MiB, KiB or bytes, a count as it is.

    Example:
        >>> amount(0.0421, "ms"), amount(1.52587890625e-05, "MiB")
        ('42.1 µs', '16 bytes')
    """
    if unit == "ms":
        return (f"{figure(value)} ms" if value >= 1
                else f"{figure(value * 1e3)} µs")
    if unit == "MiB":
        size = value * 2**20
        if size < 1024:
            return f"{size:.0f} bytes"
        if size < 2**20:
            return f"{figure(size / 1024)} KiB"
        return f"{figure(value)} MiB"
    return f"{value:g}{' ' + unit if unit else ''}"


def verdict(name: str, measured: dict[str, Any], device: str) -> str:
    """The case's before/after on this machine in a sentence: what was
    measured, its two numbers, and what they mean.

    Args:
        name: a key of `WORDING` (and of the field guide's cases).
        measured: ``{'measure', 'unit', 'slow', 'fixed'}`` and, for a
            Pallas fix off a GPU, ``'interpreted': True``.
        device: this machine's device by its short name ('CPU', 'H100';
            `helpers.measuring.machine.short_name`).
    """
    words = WORDING[name]
    slow, fixed = measured["slow"], measured["fixed"]
    if measured["measure"] == "compilations":
        return (f"Called {words.measured}, the function compiled "
                f"{_times(slow)} {words.slow} and {_times(fixed)} "
                f"{words.fixed}.")
    a, b = (amount(v, measured["unit"]) for v in (slow, fixed))
    if measured["measure"] != "median time":
        return (f"For {words.measured}, XLA's memory analysis of the "
                f"program compiled on this machine ({device}) counts {a} of "
                f"temporaries and new outputs {words.slow}, and {b} "
                f"{words.fixed}: {_less(slow, fixed)}.")
    opening = f"On this machine ({device}), {words.measured} took {a} " \
              f"{words.slow}"
    if measured.get("interpreted"):
        return (f"{opening}, and {b} {words.fixed} in Pallas's "
                "interpreter, a simulation whose time says nothing about a "
                "kernel's speed.")
    opening += f" and {b} {words.fixed}"
    if fixed > 0 and 1 / SAME <= slow / fixed <= SAME:
        why = (f", since {words.on_cpu}" if words.on_cpu and device == "CPU"
               else "")
        return (f"{opening}, within {SAME - 1:.0%} of each other: "
                f"{words.tie}{why}.")
    if fixed < slow:
        return (f"{opening}: the fixed version runs "
                f"{figure(slow / fixed)} times faster.")
    return (f"{opening}: the fix takes {figure(fixed / slow)} times as "
            "long, so whether it pays on a GPU is for a GPU's numbers to "
            "say.")


def _times(count: float) -> str:
    """'once', 'twice', '8 times'."""
    return {1: "once", 2: "twice"}.get(int(count), f"{count:g} times")


def _less(slow: float, fixed: float) -> str:
    """How much less memory the fix takes, without a meaningless ratio
    when it takes almost none."""
    if fixed < slow / 1000:
        return "almost none"
    if fixed >= slow:
        return "no less"
    return f"{figure(slow / fixed)} times less"
