"""The numbers chapter 4's written paragraphs quote, and the verdicts its
claims turn on.

The attention block's two versions are compared on the reference GPU by
the device's clock: each call's kernels, first start to last end,
recorded per call (``calls_alternating``).
The wall clock stands beside it, with the share of a call that is the
device's. The profile's execution mode is named from the profile itself:
the share of its kernels that ran inside a CUDA graph.

A verdict names the faster version (`named_verdict`) only when the rank
test finds a difference and the interval of the ratio of medians leaves
out 1 (`call_numbers`); the two scoped products are set against their
floor (`product_numbers`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.measuring import stats

NO_CLEAR = "no clear difference"  # the ranks differ, the medians may not


def interval(low: float, high: float) -> str:
    """A ratio's interval as the page prints it: three decimals, or more
    where three would round a bound that is not 1 to 1.000, so that
    whether the interval leaves out 1 can be read off the page.

    Example:
        >>> interval(0.9921, 0.99996), interval(1.0123, 1.04)
        ('0.992 to 0.99996', '1.012 to 1.040')
    """
    def bound(value: float) -> str:
        digits = 3
        while f"{value:.{digits}f}" == f"{1:.{digits}f}" and value != 1 \
                and digits < 8:
            digits += 1
        return f"{value:.{digits}f}"

    return f"{bound(low)} to {bound(high)}"


def named_verdict(result: stats.Comparison, a: str = "einsum",
                  b: str = "matmul") -> str:
    """`stats.compare`'s verdict with the versions named: ``'<a> faster'``
    only when the rank test says so *and* the interval of the ratio
    ``a / b`` lies below 1 (above 1 for ``b``); `NO_CLEAR` when the test
    finds a difference but the interval holds 1.

    Example:
        >>> r = stats.compare([1.0, 1.1, 1.0, 1.2, 1.1] * 4,
        ...                   [2.0, 2.1, 2.2, 2.0, 2.1] * 4)
        >>> named_verdict(r)
        'einsum faster'
    """
    low, high = result.ratio_ci
    if result.verdict == stats.Verdict.NO_DIFFERENCE:
        return str(result.verdict)
    if result.verdict == stats.Verdict.A_FASTER and high < 1:
        return f"{a} faster"
    if result.verdict == stats.Verdict.B_FASTER and low > 1:
        return f"{b} faster"
    return NO_CLEAR


def p_text(p_value: float) -> str:
    """A p-value as a table shows it: three decimals, or ``'< 0.001'``
    (a normal approximation's tiny p rounds to 0, which no test means).

    Example:
        >>> p_text(0.01234), p_text(0.0)
        ('0.012', '< 0.001')
    """
    return "< 0.001" if p_value < 0.001 else f"{p_value:.3f}"


def device_calls(data: dict[str, Any]) -> pd.DataFrame:
    """Each profiled call's device time, in the alternating order the
    recording holds them (``calls_alternating``)."""
    return pd.DataFrame(data["calls_alternating"])


def memsets_by_op(events: pd.DataFrame) -> dict[str, float]:
    """The share of each HLO op's device events that are memsets (a
    memset event is named ``Memset ...``, a kernel after its kernel), from
    `helpers.profiler.trace.device_events` of a profile."""
    memset = events["name"].astype(str).str.startswith("Memset")
    return memset.groupby(events["hlo_op"]).mean().to_dict()


PRODUCTS = {"attn_q_k": "the scores product (`attn_q_k`)",
            "attn_att_v": "the weighted values (`attn_att_v`)"}


# --- the numbers the chapter's written paragraphs quote ---------------------

def call_numbers(data: dict[str, Any], calls: pd.DataFrame,
                 memset_share: float | None) -> dict[str, Any]:
    """How the profiled calls ran and which version the whole call
    favours: device events, kernels and memsets a call, the share of
    kernels inside a CUDA graph, each version's median by device time
    and by the wall clock, the ratio einsum / matmul with its interval,
    each clock's named verdict (`named_verdict`), and the device's share
    of a call."""
    span = {v: calls.loc[calls["version"] == v, "span_us"].to_numpy()
            for v in ("einsum", "matmul")}
    by_device = stats.compare(span["einsum"], span["matmul"])
    wall = {v: data["wall"][v]["times"] for v in ("einsum", "matmul")}
    by_wall = stats.compare(wall["einsum"], wall["matmul"])
    events = round(float(calls["kernels"].median()))
    memsets = round(events * memset_share) if memset_share else 0
    low, high = by_device.ratio_ci
    return {"events": events, "kernels": events - memsets,
            "memsets": memsets, "graph_share": float(calls["in_graph"].mean()),
            "einsum_us": by_device.median_a, "matmul_us": by_device.median_b,
            "ratio": by_device.ratio, "ratio_low": low, "ratio_high": high,
            "device_verdict": named_verdict(by_device),
            "einsum_wall_us": by_wall.median_a * 1e6,
            "matmul_wall_us": by_wall.median_b * 1e6,
            "wall_verdict": named_verdict(by_wall),
            "device_share": by_device.median_a / (by_wall.median_a * 1e6)}


def product_numbers(kernels: pd.DataFrame, floor_us: float,
                    call_us: float) -> dict[str, float]:
    """The two scoped products against their floor: each one's median a
    call in each spelling (``q_k_einsum_us`` ... ``att_v_matmul_us``),
    over the floor (``*_over_floor``), and what they spend above it
    together in the worse spelling (``left_us``), as a share of a call's
    kernels (``left_share``): all that rewriting them could win."""
    medians = (kernels.groupby(["scope", "version", "call"])["dur_us"].sum()
               .groupby(["scope", "version"]).median())
    numbers: dict[str, float] = {}
    for scope, short in (("attn_q_k", "q_k"), ("attn_att_v", "att_v")):
        for version in ("einsum", "matmul"):
            numbers[f"{short}_{version}_us"] = medians[scope, version]
            numbers[f"{short}_{version}_over_floor"] = (medians[scope, version]
                                                        / floor_us)
    left = max(sum(max(0.0, medians[scope, version] - floor_us)
                   for scope in PRODUCTS)
               for version in ("einsum", "matmul"))
    numbers.update(left_us=left, left_share=left / call_us,
                   under_floor=float((medians < floor_us).any()))
    return numbers
