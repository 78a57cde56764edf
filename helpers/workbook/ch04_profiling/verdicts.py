"""Chapter 4's sentences about the reference GPU, computed from its data.

The attention block's two versions are compared on the reference GPU by
the device's clock: each call's kernels, first start to last end,
recorded per call (``calls_alternating``), or, for the first recording,
read from its kept profile
(`helpers.workbook.ch04_profiling.attention.fixture_calls`).
The wall clock stands beside it, with the share of a call that is the
device's. The profile's execution mode is named from the profile itself:
the share of its kernels that ran inside a CUDA graph.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.measuring import stats


def device_calls(data: dict[str, Any], fixture: pd.DataFrame | None
                 ) -> pd.DataFrame | None:
    """Each profiled call's device time (alternating order): recorded,
    or read from the kept profile ``fixture`` (None when neither)."""
    if "calls_alternating" in data:
        return pd.DataFrame(data["calls_alternating"])
    return fixture


def whole_call(data: dict[str, Any], calls: pd.DataFrame | None,
               gpu: str) -> str | None:
    """Which version the whole call favours by device time, and by the
    wall clock, and how much of a call is the device's."""
    if calls is None:
        return None
    span = {v: calls.loc[calls["version"] == v, "span_us"].to_numpy()
            for v in ("einsum", "matmul")}
    by_device = stats.compare(span["einsum"], span["matmul"])
    wall = {v: data["wall"][v]["times"] for v in ("einsum", "matmul")}
    by_wall = stats.compare(wall["einsum"], wall["matmul"])
    share = by_device.median_a / (by_wall.median_a * 1e6)
    low, high = by_device.ratio_ci
    text = (f"On the {gpu}, by device time (each call's kernels, first "
            f"start to last end), einsum took {by_device.median_a:.4g} µs "
            f"and matmul {by_device.median_b:.4g} µs a call: "
            f"{_said(by_device.verdict)} (ratio {by_device.ratio:.3f}, "
            f"95% interval {low:.3f} to {high:.3f}). By the wall clock, "
            f"{by_wall.median_a * 1e6:.4g} and {by_wall.median_b * 1e6:.4g} "
            f"µs: {_said(by_wall.verdict)}.")
    if share < 0.9:
        text += (f" The device's part is {share:.0%} of a call; the rest, "
                 "the host's, is paid by both versions alike and only "
                 "dilutes the difference, so the device's clock decides.")
    if by_device.verdict != by_wall.verdict:
        text += " The two clocks disagree; the device's is the one of record."
    return text


def _said(verdict: str) -> str:
    """A verdict of `helpers.measuring.stats.compare` in the chapter's
    words."""
    return {"a faster": "einsum is faster", "b faster": "matmul is faster"
            }.get(verdict, "no detectable difference")


def execution_mode(calls: pd.DataFrame | None, gpu: str) -> str | None:
    """How the profiled calls ran: inside CUDA graphs or kernel by
    kernel, by the profile's own events."""
    if calls is None:
        return None
    share = float(calls["in_graph"].mean())
    kernels = calls["kernels"].median()
    if share > 0.99:
        how = ("every kernel ran inside a CUDA graph, one graph launch a "
               "call, as the block runs unprofiled")
    elif share < 0.01:
        how = "every kernel was launched on its own, outside any CUDA graph"
    else:
        how = f"{share:.0%} of the kernels ran inside a CUDA graph"
    return (f"The profile names its execution mode: on the {gpu}, each "
            f"call ran {kernels:.0f} kernels, and {how}.")
