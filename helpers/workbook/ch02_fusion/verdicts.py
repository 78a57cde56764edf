"""Chapter 2's recordings read as tables: the sweep (``02_fusion/sweep``)
and the fixes (``02_fusion/fixes``), each row's share of the copy
ceiling, the emitters the GPU ran against XLA's rule, and the goal's
report. `helpers.workbook.ch02_fusion.numbers` takes the numbers the
chapter's paragraphs quote from these tables.

A recording holds ``'device ms'`` and ``'wall ms'`` per row, and the copy
ceiling by the device's clock measured in the same run (``copy_gbps``);
each row's time of record is its device time, and its fraction is taken
of that ceiling.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.measuring import roofline
from helpers.workbook.ch02_fusion import reductions

GOAL = 0.85  # of the copy bandwidth, for every K in GOAL_KS
GOAL_KS = (10, 50)
# K = 25 slower than K = 35 by more than this is a cliff (the source saw
# 3 and 5 times); within it, the two are the same speed.
CLIFF = 1.10


def table(data: dict[str, Any]) -> pd.DataFrame:
    """The recording's rows with the time of record (device time) as
    ``ms``, its ``clock``, and ``achieved``: GB/s over the recording's own
    copy ceiling by the device's clock (raw; `roofline.share` before
    showing it).

    Args:
        data: a ``02_fusion/sweep`` or ``02_fusion/fixes`` recording; its
            ``copy_gbps``, measured in the same run as its rows, is the
            ceiling.
    """
    ceiling = data["copy_gbps"]
    rows = pd.DataFrame(data["rows"])
    rows["ms"], rows["clock"] = rows["device ms"], "device"
    batch = 1
    for side in data["batch"]:
        batch *= side
    rows["GB/s"] = [reductions.bytes_moved(batch, k,
                                           8 if d == "float64" else 4)
                    / (ms * 1e-3) / 1e9
                    for k, d, ms in zip(rows["K"], rows["dtype"],
                                        rows["ms"])]
    rows["achieved"] = rows["GB/s"] / ceiling
    rows.attrs["copy_gbps"] = ceiling
    return rows


def time_ms(rows: pd.DataFrame, k: int, dtype: str, version: str = "a @ b"
            ) -> float | None:
    """A table's time of record (ms) for ``version`` at ``k`` in
    ``dtype``, or None where it has no such row."""
    hit = rows[(rows["K"] == k) & (rows["dtype"] == dtype)
               & (rows["version"] == version)]
    return None if hit.empty else float(hit["ms"].iloc[0])


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


# Against the read ceiling (chapter 1's row sum, `roofline.read_timing`):
# these products read 4K + 3 numbers for every 3 they write, so reads set
# their limit, and the goal is set against that.
READ_GOAL = 0.9


def read_report(rows: pd.DataFrame, read_gbps: float) -> pd.DataFrame:
    """For each version and dtype, the worst share of the read ceiling
    ``read_gbps`` over K in `GOAL_KS`, and whether it meets `READ_GOAL`.

    Example:
        >>> rows = pd.DataFrame({"K": [10, 50], "dtype": "float32",
        ...                      "version": "v", "GB/s": [2700.0, 3000.0]})
        >>> read_report(rows, 3000.0).round(2).to_dict("list")
        {'worst of read ceiling': [0.9], 'meets 90%': [True]}
    """
    if read_gbps <= 0:
        raise ValueError(f"read_gbps must be positive; got {read_gbps}.")
    low, high = GOAL_KS
    in_range = rows[(rows["K"] >= low) & (rows["K"] <= high)]
    worst = in_range.groupby(["version", "dtype"])["GB/s"].min() / read_gbps
    return pd.DataFrame({"worst of read ceiling": worst,
                         f"meets {READ_GOAL:.0%}": worst >= READ_GOAL})


def read_shares(data: dict[str, Any]) -> pd.Series | None:
    """Each version's slowest K in `GOAL_KS` as a share of the read
    ceiling, by (version, dtype), from a ``02_fusion/fixes`` recording;
    None for one made before the Pallas row kernel and the read ceiling
    were measured."""
    rows = table(data)
    if not data.get("read_gbps") or \
            "Pallas row kernel" not in set(rows["version"]):
        return None
    return read_report(rows, data["read_gbps"])["worst of read ceiling"]


def best(report: pd.DataFrame, dtype: str) -> tuple[str, float, float]:
    """The version whose slowest K does best in ``dtype``, that worst
    fraction, and default ``a @ b``'s."""
    column = f"worst K={GOAL_KS[0]}..{GOAL_KS[1]}"
    part = report.xs(dtype, level="dtype")[column]
    return str(part.idxmax()), float(part.max()), float(part.loc["a @ b"])


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
