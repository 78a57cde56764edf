"""Chapter 2's sentences about the reference GPU, computed from its data.

The chapter's sweep (``02_fusion/sweep``) and fixes (``02_fusion/fixes``)
are read here from the reference GPU's recordings: whether K = 25 falls
off a cliff against K = 35, which emitter the GPU ran, and whether the
best fix meets the goal. Each function returns a paragraph or a table
computed from the data; the unit tests give each one opposite outcomes.

Recordings since device time hold ``'device ms'`` and ``'wall ms'`` per
row, and a copy ceiling by the device's clock. The first H100 recording
(2026-11-23) holds wall-clock times of blocked calls (``'ms'``), with the
host's part in each; its fractions are computed here against the copy
ceiling chapter 1's recorded profile gives by the device's clock, which
makes them lower bounds.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.measuring import roofline
from helpers.page import prose
from helpers.workbook.ch02_fusion import reductions

GOAL = 0.85  # of the copy bandwidth, for every K in GOAL_KS
GOAL_KS = (10, 50)
# K = 25 slower than K = 35 by more than this is a cliff (the source saw
# 3 and 5 times); within it, the two are the same speed.
CLIFF = 1.10
SOURCE = ("The source measured 3× (float64) and 5× (float32) with JAX "
          "0.4.32 on an RTX A5000")


def by_device_clock(data: dict[str, Any]) -> bool:
    """True for a recording whose rows hold device time."""
    return "device ms" in data["rows"]


def table(data: dict[str, Any], copy_gbps: float | None = None
          ) -> pd.DataFrame:
    """The recording's rows with the time of record as ``ms``, its
    ``clock``, and ``achieved``: GB/s over the device-time copy ceiling
    (raw; `roofline.share` before showing it).

    Args:
        data: a ``02_fusion/sweep`` or ``02_fusion/fixes`` recording.
        copy_gbps: the copy ceiling by the device's clock, for a
            wall-clock recording (chapter 1's recorded profile gives it);
            a device-clock recording carries its own.
    """
    rows = pd.DataFrame(data["rows"])
    if by_device_clock(data):
        rows["ms"], rows["clock"] = rows["device ms"], "device"
        copy_gbps = data["copy_gbps"]
    else:
        rows["clock"] = "wall"
        if copy_gbps is None:
            raise ValueError("a wall-clock recording needs the device-time "
                             "copy ceiling: pass copy_gbps (chapter 1's "
                             "ceiling, from helpers.workbook.ch01_measuring"
                             ".recording.copy_rates).")
    batch = 1
    for side in data["batch"]:
        batch *= side
    rows["GB/s"] = [reductions.bytes_moved(batch, k,
                                           8 if d == "float64" else 4)
                    / (ms * 1e-3) / 1e9
                    for k, d, ms in zip(rows["K"], rows["dtype"],
                                        rows["ms"])]
    rows["achieved"] = rows["GB/s"] / copy_gbps
    rows.attrs["copy_gbps"] = copy_gbps
    return rows


def _time(rows: pd.DataFrame, k: int, dtype: str, version: str = "a @ b"
          ) -> float | None:
    hit = rows[(rows["K"] == k) & (rows["dtype"] == dtype)
               & (rows["version"] == version)]
    return None if hit.empty else float(hit["ms"].iloc[0])


def cliff(rows: pd.DataFrame, gpu: str) -> str | None:
    """Whether K = 25 takes longer than K = 35, in each dtype."""
    ratios = {}
    for dtype in ("float32", "float64"):
        slow, fast = _time(rows, 25, dtype), _time(rows, 35, dtype)
        if slow is None or fast is None:
            return None
        ratios[dtype] = slow / fast
    clock = ("device time" if rows["clock"].iloc[0] == "device" else
             "the wall clock, the host's part included")
    cliffs = [d for d, r in ratios.items() if r > CLIFF]
    if not cliffs:
        verdict = f"no cliff. {SOURCE}; this GPU and JAX do not show it."
    elif len(cliffs) == 2:
        verdict = f"a cliff in both precisions. {SOURCE}."
    else:
        verdict = f"a cliff in {cliffs[0]} only. {SOURCE}."
    return (f"On the {gpu} ({clock}), K = 25 took "
            f"{ratios['float32']:.2f} times as long as K = 35 in float32 "
            f"and {ratios['float64']:.2f} times in float64: {verdict}")


def emitters(rows: pd.DataFrame) -> pd.DataFrame:
    """Per K and dtype, the kind XLA's rule predicts and the fusion kinds
    the GPU ran for ``a @ b``, and whether they agree."""
    jax_rows = rows[rows["version"] == "a @ b"]
    out = pd.DataFrame({
        "K": jax_rows["K"].to_numpy(), "dtype": jax_rows["dtype"].to_numpy(),
        "rule": [reductions.reduction_kind((1000, 1000, 3, k), [3])
                 for k in jax_rows["K"]],
        "GPU ran": jax_rows["fusions"].to_numpy()})
    out["agree"] = [rule in ran for rule, ran in zip(out["rule"],
                                                      out["GPU ran"])]
    return out


def emitters_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """`emitters` in one row per kind XLA's rule names: the K it names it
    for, and per dtype how many of those K the GPU ran as a Triton fusion
    (``kCustom``) or with XLA's own emitter, and how many agree."""
    table = emitters(rows)
    summary = []
    for rule, part in table.groupby("rule", sort=True):
        row: dict[str, Any] = {"rule says": rule, "K": ", ".join(
            str(k) for k in sorted(set(part["K"])))}
        for dtype, ran in part.groupby("dtype")["GPU ran"]:
            triton = int(ran.str.startswith("kCustom").sum())
            row[f"GPU ran, {dtype}"] = (f"Triton {triton}, XLA's own "
                                        f"{len(ran) - triton}")
        row["agree"] = f"{int(part['agree'].sum())} of {len(part)}"
        summary.append(row)
    return pd.DataFrame(summary).set_index("rule says")


def autotuned(rows: pd.DataFrame, gpu: str) -> str | None:
    """How often the GPU ran the Triton (kCustom) emitter instead of the
    one XLA's rule names, and how well the rule predicts the GPU run."""
    kinds = emitters(rows)
    custom = kinds["GPU ran"].str.startswith("kCustom")
    text = (f"On the {gpu}, `a @ b` ran as a Triton fusion (`kCustom`) for "
            f"{int(custom.sum())} of its {len(kinds)} (K, dtype) cases, and "
            f"XLA's rule named the kind the GPU ran in "
            f"{int(kinds['agree'].sum())} of {len(kinds)}.")
    if custom.any():
        text += (" The rule is not wrong there: it decides what XLA:GPU's "
                 "heuristics would emit, and the device then let the "
                 "autotuner replace that choice.")
    else:
        text += " The autotuner kept every heuristic choice."
    return text


def goal_report(rows: pd.DataFrame) -> pd.DataFrame:
    """For each version and dtype, the worst fraction of the copy
    bandwidth over K in `GOAL_KS` (raw), at K = 5, and whether it meets
    the goal."""
    low, high = GOAL_KS
    in_range = rows[(rows["K"] >= low) & (rows["K"] <= high)]
    worst = in_range.groupby(["version", "dtype"])["achieved"].min()
    at_5 = rows[rows["K"] == 5].set_index(["version", "dtype"])
    report = pd.DataFrame({f"worst K={low}..{high}": worst,
                           "K=5": at_5["achieved"]})
    report[f"meets {GOAL:.0%}"] = report[f"worst K={low}..{high}"] >= GOAL
    return report


def best(report: pd.DataFrame, dtype: str) -> tuple[str, float, float]:
    """The version whose slowest K does best in ``dtype``, that worst
    fraction, and default ``a @ b``'s."""
    column = f"worst K={GOAL_KS[0]}..{GOAL_KS[1]}"
    part = report.xs(dtype, level="dtype")[column]
    return str(part.idxmax()), float(part.max()), float(part.loc["a @ b"])


def goal(rows: pd.DataFrame, gpu: str, host_part_us: float | None = None
         ) -> str | None:
    """The verdict on the 85% goal, by the best version in each dtype.

    Args:
        rows: `table` of the fixes recording.
        gpu: the device's name.
        host_part_us: for a wall-clock recording, the host's part of a
            blocked call measured on the same GPU (chapter 1's recording),
            to say how much of each time it can be.
    """
    report = goal_report(rows)
    parts = []
    for dtype in ("float32", "float64"):
        version, worst, default = best(report, dtype)
        parts.append(f"In {dtype} the best version was *{version}*: its "
                     f"slowest K from {GOAL_KS[0]} to {GOAL_KS[1]} reached "
                     f"{percent(worst)} of the copy bandwidth (default "
                     f"`a @ b`: {percent(default)}).")
    worst_best = min(best(report, d)[1] for d in ("float32", "float64"))
    text = f"**The verdict.** On the {gpu}: " + " ".join(parts)
    if rows["clock"].iloc[0] == "device":
        met = "met" if worst_best >= GOAL else "not met"
        return text + f" The {GOAL:.0%} goal is {met}."
    slowest = rows["ms"].max()
    fastest = rows["ms"].min()
    text += (f" These are wall-clock times of {fastest:.2g} to "
             f"{slowest:.2g} ms a call")
    if host_part_us is not None:
        text += (f", and chapter 1's recording measured the host's part of "
                 f"a blocked call on the same GPU at {host_part_us:.0f} µs")
    return text + (f": the fractions are lower bounds, and the "
                   f"{GOAL:.0%} goal needs a device-time recording to be "
                   "decided.")


def above_copy_ceiling(rows: pd.DataFrame, gpu: str) -> str | None:
    """Why a product may beat the copy ceiling: it reads far more than it
    writes, and reads alone stream faster than a copy, which writes every
    byte it reads (chapter 1). None when no row is above the ceiling."""
    over = rows[rows["achieved"] > 1]
    if over.empty:
        return None
    # (batch, 3, K) @ (batch, K, 1): reads 4K numbers a product, writes 3
    reads_per_write = min(4 * k / 3 for k in over["K"])
    versions = prose.and_list(f"*{v}*" for v in over["version"].unique())
    return (f"On the {gpu}, {len(over)} of the measured points (of "
            f"{versions}, at K = {prose.and_list(sorted(set(over['K'])))}, "
            f"up to {over['achieved'].max():.0%}) ran above the copy "
            "ceiling. That is "
            "no measurement error: these products read at least "
            f"{reads_per_write:.0f} times as many bytes as they write, and "
            "reads alone stream faster than the copy that sets the ceiling, "
            "which writes every byte it reads (chapter 1, the two floors). "
            "The figure draws them at 1; the goal is judged against the "
            "copy ceiling all the same.")


def padding(rows: pd.DataFrame, gpu: str) -> str | None:
    """Whether padding K (*pad K*) beat the default ``a @ b`` at their
    slowest K in each dtype: the fix the rule suggests, judged by the
    measurement, not by the rule."""
    report = goal_report(rows)
    column = f"worst K={GOAL_KS[0]}..{GOAL_KS[1]}"
    if ("pad K", "float32") not in report.index:
        return None
    pads, defaults, wins = [], [], []
    for dtype in ("float32", "float64"):
        pad = report.loc[("pad K", dtype), column]
        default = report.loc[("a @ b", dtype), column]
        wins.append(pad > default)
        pads.append(f"{percent(pad)} in {dtype}")
        defaults.append(percent(default))
    if all(wins):
        verdict = "padding paid in both precisions"
    elif any(wins):
        verdict = "padding paid in one precision only"
    else:
        verdict = ("padding did not pay: the compiler's choice for the "
                   "padded shape was no faster than its choice for K as it "
                   "is")
    return (f"On the {gpu}, *pad K* at its slowest K reached "
            f"{' and '.join(pads)} of the copy bandwidth, against "
            f"{' and '.join(defaults)} for `a @ b`: {verdict}.")


def on_the_reference(sweep: pd.DataFrame | None, fixes: pd.DataFrame | None,
                     gpu: str,
                     autotuner: dict[str, tuple[float, float]] | None = None
                     ) -> str | None:
    """What the chapter's two lessons came to on the reference GPU, for
    its closing list: whether K = 25 was slower than K = 35 (in either
    precision), whether padding K beat ``a @ b`` at their slowest K (in
    both), and, given `autotuner_ratios`, whether a cliff hidden by the
    fusion autotuner shows with it off."""
    if sweep is None or fixes is None:
        return None
    ratios = []
    for dtype in ("float32", "float64"):
        slow, fast = _time(sweep, 25, dtype), _time(sweep, 35, dtype)
        if slow is None or fast is None:
            return None
        ratios.append(slow / fast)
    report = goal_report(fixes)
    column = f"worst K={GOAL_KS[0]}..{GOAL_KS[1]}"
    if ("pad K", "float32") not in report.index:
        return None
    cliff = any(ratio > CLIFF for ratio in ratios)
    paid = all(report.loc[("pad K", d), column]
               > report.loc[("a @ b", d), column]
               for d in ("float32", "float64"))
    clock = ("device time" if fixes["clock"].iloc[0] == "device" else
             "wall clock")
    text = (f"On the reference GPU ({gpu}, {clock}), K = 25 was "
            f"{'slower' if cliff else 'not slower'} than K = 35 and padding "
            f"{'paid' if paid else 'did not pay'}")
    off = {d: pair[1] for d, pair in (autotuner or {}).items()}
    if not cliff and any(ratio > CLIFF for ratio in off.values()):
        text += (f"; with the fusion autotuner off, K = 25 took "
                 f"{off['float32']:.2f} and {off['float64']:.2f} times as "
                 "long as K = 35 (float32, float64): the rule's cliff is "
                 "there, and the autotuner's timing steered around it")
    return (text + ". What the rule costs, and what a fix gains, depend on "
            "the GPU and the JAX, so time both on yours.")


# A share above the copy ceiling, as chapter 2 shows it: not an error
# here, since these products read far more than they write and reads
# stream faster than a copy (`above_copy_ceiling` says so on the page).
ABOVE_COPY = "above the copy ceiling"


def share(fraction: float | None) -> float | str | None:
    """`roofline.share` for chapter 2's tables: a fraction of the copy
    ceiling, or `ABOVE_COPY` above it.

    Example:
        >>> share(0.73), share(1.2)
        (0.73, 'above the copy ceiling')
    """
    value = roofline.share(fraction)
    return ABOVE_COPY if value == roofline.ABOVE_CEILING else value


def percent(fraction: float) -> str:
    """A fraction as a percentage, or `ABOVE_COPY`.

    Example:
        >>> percent(0.734), percent(1.2)
        ('73%', 'above the copy ceiling')
    """
    value = share(fraction)
    return value if isinstance(value, str) else f"{value:.0%}"


def autotuner_ratios(data: dict[str, Any]
                     ) -> dict[str, tuple[float, float]] | None:
    """K = 25's time over K = 35's, by device time, with the fusion
    autotuner on and off, per dtype, from a ``02_fusion/autotuner``
    recording (`helpers.workbook.ch02_fusion.on_gpu.autotuner_sweep`); None
    when the recording lacks one of the four runs a dtype needs."""
    rows = pd.DataFrame(data["rows"])
    ratios = {}
    for dtype in ("float32", "float64"):
        ratio = []
        for setting in ("autotuner on", "autotuner off"):
            part = rows[(rows["dtype"] == dtype)
                        & (rows["setting"] == setting)].set_index("K")
            if 25 not in part.index or 35 not in part.index:
                return None
            ratio.append(part.loc[25, "device ms"] / part.loc[35, "device ms"])
        ratios[dtype] = (ratio[0], ratio[1])
    return ratios


def autotuner_part(data: dict[str, Any], gpu: str) -> str | None:
    """What the fusion autotuner changed: K = 25 against K = 35 with the
    autotuner on (the default) and off (`autotuner_ratios`)."""
    ratios = autotuner_ratios(data)
    if ratios is None:
        return None
    measured, judged = [], []
    for dtype, (on, off) in ratios.items():
        if off > CLIFF and on <= CLIFF:
            verdict = ("the heuristic's choice alone falls off the cliff, "
                       "and the autotuner's choice removes it")
        elif off > CLIFF:
            verdict = "the cliff is there with the autotuner on or off"
        elif on > CLIFF:
            verdict = ("only the autotuner's choice is slower at K = 25, "
                       "a cliff of its own making")
        else:
            verdict = ("no cliff either way; on this GPU the heuristic's "
                       "emitter is not slower at K = 25")
        measured.append(f"in {dtype}, K = 25 took {off:.2f} times as long "
                        f"as K = 35 with the autotuner off and {on:.2f} "
                        "with it on")
        judged.append(verdict)
    if len(set(judged)) == 1:  # say a shared verdict once
        return (f"On the {gpu}, by device time, " + "; ".join(measured)
                + f": in both, {judged[0]}.")
    return (f"On the {gpu}, by device time, " + "; ".join(
        f"{m}: {v}" for m, v in zip(measured, judged)) + ".")
