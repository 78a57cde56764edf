"""Chapter 1's reference recording, read: which clock timed it, its copy
and matmul rates, and each kernel's floor against them.

`helpers.workbook.ch01_measuring.verdicts` turns these numbers into the
chapter's sentences; chapter 2 reads its copy ceiling here too. A
recording's times of record are device time
(`helpers.measuring.device_time`), and it says so with
``'clock': 'device'`` (`DEVICE_CLOCK`); the wall clock and the host's
overhead stand beside them.
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Literal

import pandas as pd

from helpers.measuring import roofline

DEVICE_CLOCK: Literal["device"] = "device"
FLOAT32_BYTES = 4


def profile_rows(data: dict[str, Any]) -> pd.DataFrame:
    """The recording's profile of ``x + 1``: one row per array size."""
    return pd.DataFrame(data["profile"])


# The profile's columns as a reader says them.
PROFILE_HEADERS = {"elements": "elements", "wall_us": "wall µs",
                   "back_to_back_us": "back to back µs",
                   "span_us": "device span µs", "kernel_us": "kernels µs",
                   "xprof_kernel_us": "XProf kernels µs"}


def profile_table(rows: pd.DataFrame) -> pd.DataFrame:
    """A profile of ``x + 1`` as the page shows it: one row per array
    size, headers in words with units, and without a column no row has a
    value in (XProf's, on a CPU)."""
    shown = rows.dropna(axis="columns", how="all")
    return shown.rename(columns=PROFILE_HEADERS).set_index("elements")


def host_part_us(data: dict[str, Any]) -> float:
    """The host's part of one small blocked call, in µs: the profile's
    first (smallest) call's wall time less its kernel time. Later chapters
    read their wall-clock recordings against it."""
    first = profile_rows(data).iloc[0]
    return float(first["wall_us"] - first["kernel_us"])


@dataclasses.dataclass(frozen=True)
class CopyRates:
    """The copy ceiling in GB/s by the device's clock and by the wall
    clock, and the host's overhead per call in µs."""

    device: float
    wall: float
    overhead_us: float


def copy_rates(data: dict[str, Any]) -> CopyRates:
    """The recording's copy ceiling, by both clocks: the device-time
    ceiling it recorded, and the same bytes over the copy's wall time;
    the difference of the two medians is the host's part of a call."""
    copy = data["ceilings"]["timings"]["copy"]
    device = data["ceilings"]["copy_bytes_per_s"]
    wall_s = statistics.median(copy["wall"]["times"])
    span_s = statistics.median(copy["span"]["times"])
    return CopyRates(device=device / 1e9,
                     wall=device * span_s / wall_s / 1e9,
                     overhead_us=(wall_s - span_s) * 1e6)


@dataclasses.dataclass(frozen=True)
class MatmulRates:
    """TFLOP/s of the float32 matmul by the device's clock, at JAX's
    default precision (TF32 on tensor cores) and at
    ``precision='highest'``."""

    default: float
    highest: float


def matmul_rates(data: dict[str, Any]) -> MatmulRates:
    """The recording's float32 matmul rates."""
    rates = data["ceilings"]["matmul_flops_per_s"]
    return MatmulRates(default=rates["float32"] / 1e12,
                       highest=rates[f"float32, {roofline.HIGHEST}"] / 1e12)


def cache_columns(data: dict[str, Any]) -> tuple[str, str]:
    """The cache table's columns of record, by device time: the same
    array, and a rotation of arrays."""
    return "same device GB/s", "rotated device GB/s"


def floors_table(data: dict[str, Any]) -> pd.DataFrame:
    """Each kernel's floor, its time of record (device time) and the
    fraction of the floor it reached, or, where a time beat its floor,
    the error and its cause (a version cannot beat its floor)."""
    rows = pd.DataFrame(data["floors"])
    written = written_bytes(data)
    out = []
    for row in rows.to_dict("records"):
        floor_ms, time_ms = row["floor ms"], row["device ms"]
        fraction = floor_ms / time_ms
        note, error = _over_ceiling(row, fraction, written.get(row["kernel"]))
        shown: Any = (roofline.ABOVE_CEILING if error
                      else READS_ONLY if READS_NOTE in note
                      else min(fraction, 1.0))
        out.append({"kernel": row["kernel"], "bound": row["bound"],
                    "floor ms": floor_ms, "time ms": time_ms,
                    "clock": data["clock"], "achieved": shown, "note": note,
                    "error": error})
    return pd.DataFrame(out).set_index("kernel")


def roofline_inputs(data: dict[str, Any]
                    ) -> tuple[float, dict[str, float], pd.DataFrame, str]:
    """What `helpers.page.plots.roofline` draws for a recording: the copy
    bandwidth by the device's clock in bytes/s, the matmul peaks in
    FLOP/s, the floors table's kernels (hand counts, times of record in
    seconds), and the clock that timed those kernels."""
    table = floors_table(data)
    rows = pd.DataFrame(data["floors"]).set_index("kernel")
    kernels = pd.DataFrame({
        "kernel": table.index, "flops": rows["flops (hand)"].to_numpy(),
        "bytes": rows["bytes (hand)"].to_numpy(),
        "seconds": table["time ms"].to_numpy() / 1e3})
    mm = matmul_rates(data)
    peaks = {"float32, default (TF32)": mm.default * 1e12,
             "float32, highest": mm.highest * 1e12}
    return copy_rates(data).device * 1e9, peaks, kernels, "device time"


READS_NOTE = "faster than the copy ceiling"
READS_ONLY = "over the copy ceiling: reads"


def written_bytes(data: dict[str, Any]) -> dict[str, float]:
    """Bytes each floor kernel writes, counted by hand. The chapter's three
    kernels all take one m × m float32 square: `2x + 1` reads and writes
    it (8 m² bytes in all, so its row gives m), the row sum writes m
    floats, the matmul m² of them."""
    rows = pd.DataFrame(data["floors"]).set_index("kernel")
    elements = rows.loc["2x + 1", "bytes (hand)"] / (2 * FLOAT32_BYTES)
    return {"2x + 1": FLOAT32_BYTES * elements,
            "row sum": FLOAT32_BYTES * elements ** 0.5,
            "matmul": FLOAT32_BYTES * elements}


def _over_ceiling(row: dict[str, Any], fraction: float,
                  written: float | None) -> tuple[str, bool]:
    """Why a device-time fraction exceeds 1, and whether that makes it a
    measurement error: ``('', False)`` when it does not exceed 1."""
    if fraction <= 1:
        return "", False
    counted, by_xla = row["bytes (hand)"], row.get("bytes (XLA)")
    if row["bound"] == "memory" and by_xla and 0 < by_xla < 0.9 * counted:
        return ("XLA's module moves fewer bytes than the hand count "
                f"({by_xla / counted:.2f} of it)"), True
    spread = row.get("device spread")
    if spread and fraction - 1 <= spread:
        return (f"{fraction - 1:.1%} over, within the {spread:.1%} spread "
                "of its times"), False
    if row["bound"] == "memory" and written is not None \
            and written < 0.1 * counted:
        read = counted - written
        rate = counted / (row["device ms"] * 1e-3) / 1e12
        return (f"{fraction - 1:.1%} {READS_NOTE} allows: it reads "
                f"{read / 1e6:.1f} MB and writes only {written / 1e3:.1f} "
                f"kB, at {rate:.2f} TB/s, while the copy that set the "
                "ceiling writes every byte it reads. Reads alone stream "
                "faster, so a kernel that mostly reads needs a read "
                "ceiling of its own, which a copy does not measure"), False
    return ("faster than its ceiling allows, with no known cause: check "
            "the ceiling's measurement and the counts"), True


LARGE_ON_GPU = 2**28  # the large array's elements on a GPU (1 GiB)
# Arrays of that size alive at once while it is timed back to back: its
# input and ten queued outputs.
LARGE_LIVE = 11


def large_elements(memory_bytes: int | None, most: int = LARGE_ON_GPU
                   ) -> int:
    """The large float32 array's elements on a GPU with ``memory_bytes``
    for JAX (`machine.describe`'s ``memory_bytes``): ``most``, halved
    until `LARGE_LIVE` arrays take at most three quarters of it (the rest
    is for the arrays earlier cells hold), so that a T4 times a smaller
    array rather than running out of memory; ``most`` where the memory is
    not known.

    Example:
        >>> large_elements(64 * 2**30) == LARGE_ON_GPU  # an H100
        True
        >>> large_elements(int(0.75 * 16 * 2**30)) == LARGE_ON_GPU // 2
        True
    """
    n = most
    while memory_bytes and n > 1 and LARGE_LIVE * 4 * n > (
            0.75 * memory_bytes):
        n //= 2
    return n
