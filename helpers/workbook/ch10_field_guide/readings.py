"""The field guide's table row for each before/after measured on the
machine that runs the page: what was measured, the two numbers in words
written for each pattern, and their ratio.

Numbers read without scientific notation: a time in ms or µs, memory in
bytes, KiB or MiB, whichever reads best.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Wording:
    """How a case's section speaks of its before/after.

    Attributes:
        measured: what was run or compiled, e.g. "argsort of 1,048,576
            keys".
        slow, fixed: how the two versions differ, e.g. "with int64 keys".
    """

    measured: str
    slow: str
    fixed: str


WORDING: dict[str, Wording] = {
    "host-round-trip": Wording(
        "8000 steps of the loop on 64 numbers", "with the bound traced",
        "with it static"),
    "launches-per-step": Wording(
        "8000 steps on 64 numbers", "as a scan",
        "as one Pallas kernel"),
    "random-in-loop": Wording(
        "50 steps on 64 numbers", "with the key split in the loop",
        "with the noise drawn first"),
    "retracing": Wording(
        "calls with vectors of 8 lengths, 100 to 107", "as they came",
        "padded to 128"),
    "float64": Wording(
        "the mean of sin² over 1,048,576 numbers", "in float64",
        "in float32"),
    "sort-64-bit": Wording(
        "argsort of 1,048,576 keys", "with int64 keys",
        "with int32 keys"),
    "scatter-contention": Wording(
        "summing 1,048,576 values into 64 segments",
        "with the ids' order unknown to XLA",
        "with `indices_are_sorted=True`"),
    "host-callback": Wording(
        "tanh then sin of 65,536 numbers", "with tanh in a NumPy callback",
        "all in JAX"),
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




def _compared(slow: float, fixed: float, unit: str) -> str:
    """The slow version against the fixed one: the ratio of the two, or,
    for memory the fix all but removes, how much more the slow one takes
    (a ratio of thousands would say nothing a reader can use).

    Example:
        >>> _compared(4.0, 2.0, "ms"), _compared(4.0, 2**-16, "MiB")
        ('2×', '4 MiB more')
    """
    if not fixed:
        return "no fixed cost"
    if unit == "MiB" and slow / fixed > 100:
        return f"{amount(slow - fixed, unit)} more"
    return f"{figure(slow / fixed)}×"


def row(name: str, measured: dict[str, Any], device: str) -> dict[str, str]:
    """The case's before/after on this machine as its table's row: what
    was measured, how, the two versions' numbers and their ratio, and the
    machine (a count of compilations is every machine's, so names none).

    Args:
        name: a key of `WORDING` (and of the field guide's cases).
        measured: ``{'measure', 'unit', 'slow', 'fixed'}`` and, for a
            Pallas fix off a GPU, ``'interpreted': True`` (a simulation,
            whose time says nothing about a kernel's speed: no ratio).
        device: this machine's device by its short name ('CPU', 'H100';
            `helpers.measuring.machine.short_name`).

    Example:
        >>> row("sort-64-bit", {"measure": "median time", "unit": "ms",
        ...     "slow": 95.1, "fixed": 93.2}, "CPU")["slow against fixed"]
        '1.02×'
    """
    words = WORDING[name]
    slow, fixed, unit = measured["slow"], measured["fixed"], measured["unit"]
    after = f"{amount(fixed, unit)} {words.fixed}"
    shown = {"what": words.measured, "measure": measured["measure"],
             "slow version": f"{amount(slow, unit)} {words.slow}",
             "fixed version": after + (" (interpreted)"
                                       if measured.get("interpreted")
                                       else "")}
    if not measured.get("interpreted"):
        shown["slow against fixed"] = _compared(slow, fixed, unit)
    if measured["measure"] != "compilations":
        shown["measured on"] = device
    return shown
