"""Chapter 4's sentences about its data, computed from that data.

The attention block's two versions are compared on the reference GPU by
the device's clock: each call's kernels, first start to last end,
recorded per call (``calls_alternating``), or, for the first recording,
read from its kept profile
(`helpers.workbook.ch04_profiling.attention.fixture_calls`).
The wall clock stands beside it, with the share of a call that is the
device's. The profile's execution mode is named from the profile itself:
the share of its kernels that ran inside a CUDA graph.

A verdict names the faster version (`named_verdict`) only when the rank
test finds a difference and the interval of the ratio of medians leaves
out 1; the two scoped products are set against their floor
(`products_against_floor`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.measuring import stats

NO_CLEAR = "no clear difference"  # the ranks differ, the medians may not
WITHIN_FLOOR = 1.05  # a time this close to its floor is at the floor


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


def _p_said(p_value: float) -> str:
    text = p_text(p_value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def whole_call_here(result: stats.Comparison, a: str = "einsum",
                    b: str = "matmul") -> str:
    """The whole call's verdict on this machine, in a sentence that names
    the versions and says whether the ratio's interval holds 1."""
    low, high = result.ratio_ci
    ratio = (f"the median ratio {a} / {b} is {result.ratio:.3f}, with a "
             f"{1 - result.alpha:.0%} interval from {interval(low, high)}")
    named = named_verdict(result, a, b)
    start = "For the whole call on this machine,"
    if named.endswith(" faster"):
        return (f"{start} {named.removesuffix(' faster')} is faster: "
                f"{ratio}, which leaves out 1 ({_p_said(result.p_value)}).")
    if named == NO_CLEAR:
        leans = a if result.verdict == stats.Verdict.A_FASTER else b
        return (f"{start} neither version is clearly faster: the rank "
                f"test finds that runs of {leans} tend to win "
                f"({_p_said(result.p_value)}), but {ratio}, which holds 1.")
    return (f"{start} the rank test finds no difference "
            f"({_p_said(result.p_value)}), and {ratio}.")


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
            f"{_said(by_device)} (ratio {by_device.ratio:.3f}, "
            f"95% interval {interval(low, high)}). By the wall clock, "
            f"{by_wall.median_a * 1e6:.4g} and {by_wall.median_b * 1e6:.4g} "
            f"µs: {_said(by_wall)}.")
    if share < 0.9:
        text += (f" The device's part is {share:.0%} of a call; the rest, "
                 "the host's, is paid by both versions alike and only "
                 "dilutes the difference, so the device's clock decides.")
    if named_verdict(by_device) != named_verdict(by_wall):
        text += " The two clocks disagree; the device's is the one of record."
    return text


def _said(result: stats.Comparison) -> str:
    """`named_verdict` in a sentence: 'matmul is faster'."""
    return named_verdict(result).replace(" faster", " is faster")


def memsets_by_op(events: pd.DataFrame) -> dict[str, float]:
    """The share of each HLO op's device events that are memsets (a
    memset event is named ``Memset ...``, a kernel after its kernel), from
    `helpers.profiler.trace.device_events` of a profile."""
    memset = events["name"].astype(str).str.startswith("Memset")
    return memset.groupby(events["hlo_op"]).mean().to_dict()


def execution_mode(calls: pd.DataFrame | None, gpu: str,
                   memset_share: float | None = None) -> str | None:
    """How the profiled calls ran: how many device events each, and
    inside CUDA graphs or kernel by kernel, by the profile's own events;
    ``memset_share`` (the share of its device events that are memsets)
    splits the events into kernels and memsets."""
    if calls is None:
        return None
    share = float(calls["in_graph"].mean())
    events = round(float(calls["kernels"].median()))
    if share > 0.99:
        how = ("every kernel ran inside a CUDA graph, one graph launch a "
               "call, as the block runs unprofiled")
    elif share < 0.01:
        how = "every kernel was launched on its own, outside any CUDA graph"
    else:
        how = f"{share:.0%} of the kernels ran inside a CUDA graph"
    memsets = round(events * memset_share) if memset_share else 0
    ran = (f"{events} device events, {events - memsets} kernels and "
           f"{memsets} memset{'s' if memsets > 1 else ''}" if memsets
           else f"{events} kernels")
    return (f"The profile names its execution mode: on the {gpu}, each "
            f"call ran {ran}, and {how}.")


def product_bound(compute_s: float, memory_s: float) -> str:
    """What bounds one scoped product, from its two floors: the time of
    its arithmetic at the matmul rate, and of its bytes at the copy
    bandwidth (seconds)."""
    if memory_s >= compute_s:
        return (f"Moving its bytes takes {memory_s / compute_s:.1f} times "
                "as long as its arithmetic: each product is bound by "
                "memory, and the fewest bytes it must move are the same "
                "however it is written.")
    return (f"Its arithmetic takes {compute_s / memory_s:.1f} times as "
            "long as moving its bytes: each product is bound by its "
            "arithmetic, and the kernel's use of the tensor cores decides.")


PRODUCTS = {"attn_q_k": "the scores product (`attn_q_k`)",
            "attn_att_v": "the weighted values (`attn_att_v`)"}


def products_against_floor(kernels: pd.DataFrame, floor_us: float,
                           call_us: float, gpu: str) -> str:
    """The two scoped products' measured times against their floor.

    Args:
        kernels: one row per kernel (``version``, ``call``, ``scope``,
            ``dur_us``), as `attention.profile_calls` returns.
        floor_us: one product's floor (both have the same one), µs.
        call_us: a whole call's kernel time, µs.
        gpu: the device's name.
    """
    medians = (kernels.groupby(["scope", "version", "call"])["dur_us"].sum()
               .groupby(["scope", "version"]).median())
    parts = [f"{label} took a median {medians[scope, 'einsum']:.3g} µs a "
             f"call written with einsum "
             f"({_against(medians[scope, 'einsum'], floor_us)}) and "
             f"{medians[scope, 'matmul']:.3g} µs with matmul "
             f"({_against(medians[scope, 'matmul'], floor_us)})"
             for scope, label in PRODUCTS.items()]
    text = (f"Against that floor, {floor_us:.3g} µs, by the device's clock "
            f"on the {gpu}: {'; '.join(parts)}.")
    if (medians < floor_us).any():
        text += (" No kernel beats its floor for real: the floor counts "
                 "every byte as crossing the GPU's memory at the copy "
                 "rate, and some of what a kernel reads may still be in "
                 "the L2 cache, written there by the kernel just before.")
    return text + _what_is_left(medians, floor_us, call_us)


def _against(median_us: float, floor_us: float) -> str:
    ratio = median_us / floor_us
    if ratio < 1:
        return "under the floor"
    if ratio < WITHIN_FLOOR:
        return "at the floor"
    return f"{ratio:.2f} times the floor"


def _what_is_left(medians: pd.Series, floor_us: float,
                  call_us: float) -> str:
    """How much of a call the products spend above their floor, in the
    worse spelling: all that rewriting them could win."""
    excess = max(sum(max(0.0, medians[scope, version] - floor_us)
                     for scope in PRODUCTS)
                 for version in ("einsum", "matmul"))
    if excess == 0:
        return (" In both spellings both products run at or under their "
                "floor: no way of writing them can make them faster.")
    share = excess / call_us
    text = (f" Together the two products spend at most {excess:.2g} µs a "
            f"call above their floor, in either spelling: {share:.1%} of "
            f"the {call_us:.3g} µs of a call's kernels.")
    if share < 0.1:
        return text + (" That is all any way of writing them could win, so "
                       "the source's question cannot move the whole call "
                       "by more.")
    return text + " A better kernel for them would show in the whole call."
