"""The numbers chapter 1's sentences quote, and the tests that decide
them.

The chapter's prose is written, and quotes the reference GPU's recording
(``results.reference('01_measuring/summary')``, or this execution on that
GPU). Each ``*_numbers`` function takes a recording's ``data`` and returns
the numbers one paragraph glues, with the quantities its claims turn on
(a share hidden by the host, a ratio of times); the chapter checks each
claim beside its paragraph (`helpers.page.claims.check`), so a new
recording with another outcome fails the build and names the sentence.
The unit tests feed the numbers both outcomes.

They read recordings made by the device's clock
(`helpers.measuring.device_time`), with wall time and the host's overhead
beside it (``'clock': 'device'``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.workbook.ch01_measuring import recording

# A first compile this many times the staged one searched for kernels.
SEARCH = 5
# Within this, a timing "agrees" with device time (the chapter's goal).
AGREEMENT = 0.05
# A repeated input faster than a rotation by more than this is a cache
# effect; below, it is within the noise of a blocked timing.
CACHE_EFFECT = 1.10


def ceiling_numbers(data: dict[str, Any]) -> dict[str, float]:
    """The copy ceiling by both clocks and the host's part of a call, and
    the float32 matmul rate at both precisions: ``copy_gbps``,
    ``wall_gbps``, ``hidden`` (the share of the bandwidth the wall clock
    loses), ``host_us``, ``n``, ``tf32_tflops``, ``highest_tflops`` and
    ``tf32_over_highest``."""
    copy, mm = recording.copy_rates(data), recording.matmul_rates(data)
    return {"copy_gbps": copy.device, "wall_gbps": copy.wall,
            "hidden": 1 - copy.wall / copy.device,
            "host_us": copy.overhead_us, "n": data["matmul_n"],
            "tf32_tflops": mm.default, "highest_tflops": mm.highest,
            "tf32_over_highest": mm.default / mm.highest}


def dispatch_numbers(data: dict[str, Any]) -> dict[str, float]:
    """The matmul's call without waiting and waiting, against its floor:
    ``n``, ``enqueue_us``, ``floor_ms``, ``floor_over_enqueue``,
    ``blocked_ms``, ``device_ms`` and ``host_ms``."""
    part = data["dispatch"]
    return {"n": data["matmul_n"], "enqueue_us": part["enqueue_us"],
            "floor_ms": part["floor_ms"],
            "floor_over_enqueue": part["floor_ms"] * 1e3
            / part["enqueue_us"],
            "blocked_ms": part["blocked_ms"], "device_ms": part["device_ms"],
            "host_ms": part["blocked_ms"] - part["device_ms"]}


def compile_numbers(data: dict[str, Any]) -> dict[str, float]:
    """A first call against the steady state, the staged compile's parts,
    and a new shape's first call, each also over the staged compile
    (``first_over_staged``, ``retrace_over_staged``): far above 1, the
    first compile searched for kernels (autotuning) that the staged one,
    of the same shapes, found cached."""
    part = data["compile"]
    staged = part["trace_lower_ms"] + part["compile_ms"]
    return {"first_ms": part["first_call_ms"], "steady_ms": part["steady_ms"],
            "first_over_steady": part["first_call_ms"] / part["steady_ms"],
            "lower_ms": part["trace_lower_ms"],
            "compile_ms": part["compile_ms"], "retrace_ms": part["retrace_ms"],
            "first_over_staged": part["first_call_ms"] / staged,
            "retrace_over_staged": part["retrace_ms"] / staged}


def wall_device_numbers(data: dict[str, Any]) -> dict[str, float]:
    """``x + 1`` on the smallest and the largest array: each call's time
    (``tiny_wall_us``, ``large_wall_us``), its kernel's
    (``tiny_kernel_us``, ``large_kernel_us``) and the kernel's share,
    XProf's reading of the large kernel and how far apart the two
    readings are, and a large call back to back over its device span
    (``agreement``; the chapter's goal is within `AGREEMENT` of 1)."""
    rows = recording.profile_rows(data)
    tiny, large = rows.iloc[0], rows.iloc[-1]
    xprof = large.get("xprof_kernel_us")
    xprof = float("nan") if xprof is None else float(xprof)  # no XProf
    return {"tiny_elements": tiny["elements"],
            "tiny_kernel_us": tiny["kernel_us"],
            "tiny_wall_us": tiny["wall_us"],
            "tiny_share": tiny["kernel_us"] / tiny["wall_us"],
            "large_elements": large["elements"],
            "large_kernel_us": large["kernel_us"],
            "large_wall_us": large["wall_us"],
            "large_share": large["kernel_us"] / large["wall_us"],
            "xprof_kernel_us": xprof,
            "xprof_apart": abs(xprof / large["kernel_us"] - 1),
            "back_to_back_us": large["back_to_back_us"],
            "agreement": back_to_back_agreement(data)}


def back_to_back_agreement(data: dict[str, Any]) -> float:
    """A large array's time per call back to back over its device span
    (the chapter's goal: within 5% of 1)."""
    large = recording.profile_rows(data).iloc[-1]
    return float(large["back_to_back_us"] / large["span_us"])


def cache_numbers(data: dict[str, Any]) -> dict[str, Any]:
    """The same array against a rotation, by device time: the largest
    ratio (``same_over_rotated``) and the size it came at (``at_mib``);
    and the sizes where even the rotation beat the copy ceiling by more
    than `AGREEMENT` (``rotated_over``, a list), with the fastest of them
    (``top_gbps``, ``top_over_copy``, ``top_mib``)."""
    rows = pd.DataFrame(data["cache"])
    same, rotated = recording.cache_columns(data)
    ratio = rows[same] / rows[rotated]
    copy = recording.copy_rates(data).device
    over = rows[rows[rotated] > copy * (1 + AGREEMENT)]
    top = over.loc[over[rotated].idxmax()] if not over.empty else None
    return {"same_over_rotated": float(ratio.max()),
            "at_mib": float(rows.loc[ratio.idxmax(), "MiB"]),
            "rotated_over": [float(m) for m in over["MiB"]],
            "top_gbps": None if top is None else float(top[rotated]),
            "top_over_copy": None if top is None
            else float(top[rotated] / copy),
            "top_mib": None if top is None else float(top["MiB"]),
            "copy_gbps": copy}


def floor_numbers(data: dict[str, Any]) -> dict[str, Any]:
    """Each kernel's fraction of its floor (`recording.floors_table`),
    by kernel: its share of the floor (``achieved``, a number, or
    `recording.READS_ONLY` for a kernel that beat the copy ceiling by
    reading more than it writes), how far over its floor it measured and
    the spread of its times (``over``, ``spread``), the bytes it reads
    and writes, and its rate."""
    table = recording.floors_table(data)
    rows = pd.DataFrame(data["floors"]).set_index("kernel")
    written = recording.written_bytes(data)
    out: dict[str, Any] = {}
    for kernel, row in table.iterrows():
        fraction = row["floor ms"] / row["time ms"]
        moved = float(rows.loc[kernel, "bytes (hand)"])
        wrote = float(written.get(kernel) or 0)
        out[kernel] = {"achieved": row["achieved"], "error": row["error"],
                       "fraction": fraction, "over": fraction - 1,
                       "spread": float(rows.loc[kernel, "device spread"])
                       if "device spread" in rows else None,
                       "read_mb": (moved - wrote) / 1e6,
                       "written_kb": wrote / 1e3,
                       "rate_tbps": moved / (row["time ms"] * 1e-3) / 1e12}
    return out


