"""Chapter 2's fixes on every recorded GPU, side by side.

The verdict on the 85% goal is the reference GPU's. Where another GPU
recorded the fixes too (`helpers.measuring.results.other_gpus`), this
module puts each GPU's best version beside the reference's, and says in
a sentence computed from both recordings whether the goal holds there,
and whether the best fix sped up with the faster memory.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import prose
from helpers.workbook.ch02_fusion import exercises, verdicts

DTYPES = ("float32", "float64")
# A speed-up within this share of the copy ceilings' ratio kept up with it.
_SAME = 0.05


def goal_table(results: list[Any]) -> pd.DataFrame:
    """For each recording of ``02_fusion/fixes`` (a
    `helpers.measuring.results.Result`) and dtype: the version whose
    slowest K in 10..50 does best, that share of the GPU's own copy
    ceiling, default ``a @ b``'s (both as `verdicts.share` shows them),
    and whether the goal is met."""
    rows = []
    for result in results:
        report = verdicts.goal_report(verdicts.table(result.data))
        for dtype in DTYPES:
            version, worst, default = verdicts.best(report, dtype)
            rows.append({"GPU": result.short_name, "dtype": dtype,
                         "copy GB/s": result.data["copy_gbps"],
                         "best version": version,
                         "share at its slowest K": verdicts.share(worst),
                         "a @ b's share": verdicts.share(default),
                         f"meets {verdicts.GOAL:.0%}":
                             "yes" if worst >= verdicts.GOAL else "no"})
    return pd.DataFrame(rows).set_index(["GPU", "dtype"])


def speedups(reference: pd.DataFrame, other: pd.DataFrame, version: str,
             dtype: str) -> pd.Series:
    """How many times as fast ``version`` ran on ``other`` as on
    ``reference`` (`verdicts.table` of each) at each K in
    `verdicts.GOAL_KS`, indexed by K."""
    low, high = verdicts.GOAL_KS

    def times(rows: pd.DataFrame) -> pd.Series:
        part = rows[(rows["version"] == version) & (rows["dtype"] == dtype)
                    & rows["K"].between(low, high)]
        return part.set_index("K")["ms"]

    return (times(reference) / times(other)).dropna()


def compare(reference: dict[str, Any], other: dict[str, Any],
            reference_gpu: str, other_gpu: str) -> str | None:
    """The goal on ``other`` beside the reference, and whether the
    reference's best version sped up as much as the copy ceiling did.
    None unless both recordings are by device time."""
    if not (verdicts.by_device_clock(reference)
            and verdicts.by_device_clock(other)):
        return None
    ref, new = verdicts.table(reference), verdicts.table(other)
    ref_report, new_report = verdicts.goal_report(ref), \
        verdicts.goal_report(new)
    shares = [verdicts.best(new_report, dtype) for dtype in DTYPES]
    met = min(share for _, share, _ in shares) >= verdicts.GOAL
    text = (f"On the {other_gpu} the best versions reached "
            + " and ".join(f"{verdicts.percent(share)} ({dtype}, "
                           f"*{version}*)" for dtype, (version, share, _)
                           in zip(DTYPES, shares))
            + f" of its own copy ceiling at their slowest K: the "
            f"{verdicts.GOAL:.0%} goal is {'met' if met else 'not met'} "
            "there.")
    copy = other["copy_gbps"] / reference["copy_gbps"]
    gains, behind = [], []
    for dtype in DTYPES:
        version, _, _ = verdicts.best(ref_report, dtype)
        gain = speedups(ref, new, version, dtype)
        gains.append(f"*{version}* ran {gain.min():.2f} to "
                     f"{gain.max():.2f} times as fast there as on the "
                     f"{reference_gpu} in {dtype}")
        slow = gain[gain < copy / (1 + _SAME)]
        if not slow.empty:
            where = ("every K" if len(slow) == len(gain) else "K = "
                     + prose.and_list(map(str, slow.index)))
            behind.append(f"{where} in {dtype}")
    text += (f" Its copy ceiling is {copy:.2f} times the {reference_gpu}'s."
             f" Over K {verdicts.GOAL_KS[0]} to {verdicts.GOAL_KS[1]}, "
             + "; ".join(gains) + ".")
    if behind:
        text += (" They fell behind the faster memory at "
                 + " and at ".join(behind) + ". " + _reachable(new, other_gpu))
    return text


def _reachable(rows: pd.DataFrame, gpu: str) -> str:
    """Whether any version reached the goal at these sizes on ``gpu``:
    if one did, the arrays are large enough for the goal there, and the
    shortfall is the kernel's."""
    low, high = verdicts.GOAL_KS
    in_range = rows[rows["K"].between(low, high) & (rows["achieved"] <= 1)]
    top = in_range.loc[in_range["achieved"].idxmax()]
    if top["achieved"] < verdicts.GOAL:
        return (f"No version reached {verdicts.GOAL:.0%} at any K from "
                f"{low} to {high} on the {gpu} (the best: "
                f"{verdicts.percent(top['achieved'])}), so these sizes may "
                "be too small to stream at its ceiling.")
    return (f"These sizes can reach the ceiling on the {gpu}: *"
            f"{top['version']}* in {top['dtype']} reached "
            f"{verdicts.percent(top['achieved'])} at K = {top['K']}. The "
            "shortfall is the kernel's, not the arrays' size.")


def exercise_target(results: list[Any], k: int = 25,
                    dtype: str = "float32") -> str | None:
    """Exercise 2.1's speed target read from each device-time recording of
    ``02_fusion/fixes``: its solution (*pad K*) over ``a @ b``'s device
    time at ``k``, and whether that is within the check's margin on every
    GPU. None when no recording is by device time."""
    ratios = {}
    for result in results:
        if verdicts.by_device_clock(result.data):
            rows = verdicts.table(result.data)
            at = rows[(rows["K"] == k) & (rows["dtype"] == dtype)]
            ms = at.set_index("version")["ms"]
            ratios[result.short_name] = ms["pad K"] / ms["a @ b"]
    if not ratios:
        return None
    slow = [gpu for gpu, ratio in ratios.items()
            if ratio > 1 + exercises.SPEED_MARGIN]
    took = prose.and_list(f"{ratio:.2f} times" + (
        " the device time of `a @ b`" if first else "") + f" on the {gpu}"
        for first, (gpu, ratio) in zip([True] + [False] * len(ratios),
                                       ratios.items()))
    where = {1: "", 2: " on both"}.get(len(ratios), " on every one")
    verdict = (f"within the {exercises.SPEED_MARGIN:.0%} its check allows"
               f"{where}" if not slow else
               "so its check would fail it on the " + prose.and_list(slow))
    return (f"Exercise 2.1's speed target, read from these recordings: at "
            f"K = {k} in {dtype} its solution (*pad K*) took {took}, "
            f"{verdict}.")


def ceilings_against_chapter_1(fixes: list[Any], summaries: list[Any]
                               ) -> str | None:
    """Each fixes recording measured its own copy ceiling just before its
    versions; this says how far each lies from chapter 1's ceiling for
    the same GPU (``01_measuring/summary`` recordings), so that a reader
    comparing the two pages knows why the numbers differ a little. None
    when no GPU has both."""
    from helpers.workbook.ch01_measuring import recording
    chapter_1 = {r.short_name: recording.copy_rates(r.data).device
                 for r in summaries if recording.by_device_clock(r.data)}
    pairs = [(r.short_name, r.data["copy_gbps"], chapter_1[r.short_name])
             for r in fixes if r.short_name in chapter_1]
    if not pairs:
        return None
    said = prose.and_list(f"{mine:.0f} against {theirs:.0f} GB/s on the "
                          f"{gpu}" for gpu, mine, theirs in pairs)
    spread = max(abs(mine / theirs - 1) for _, mine, theirs in pairs)
    return (f"Each recording measured its own copy ceiling just before its "
            f"versions ran, so the ceilings here differ a little from "
            f"chapter 1's ({said}, at most {spread:.1%} apart): each "
            f"share above is of its own run's ceiling.")


def held_back(reference: dict[str, Any], other: dict[str, Any],
              version: str = "batch-minor") -> pd.DataFrame:
    """Where ``version`` hardly gained on ``other``'s faster memory: the
    (dtype, K) rows whose speed-up over the reference is under half of
    the copy ceilings' ratio's gain, with each GPU's rate (TB/s) there.
    Such a kernel is bound by something both GPUs share, on the chip.

    Both arguments are chapter 2's recordings of the fixes (`compare`).
    """
    copy = other["copy_gbps"] / reference["copy_gbps"]
    ref, new = verdicts.table(reference), verdicts.table(other)

    def rates(rows: pd.DataFrame) -> pd.Series:
        return rows[rows["version"] == version].set_index(
            ["dtype", "K"])["GB/s"] / 1e3

    both = pd.DataFrame({"reference TB/s": rates(ref),
                         "other TB/s": rates(new)}).dropna()
    gain = both["other TB/s"] / both["reference TB/s"]
    return both[gain < 1 + (copy - 1) / 2]
