"""Chapter 2's fixes on every recorded GPU, side by side.

The verdict on the 85% goal is the reference GPU's. Where another GPU
recorded the fixes too (`helpers.measuring.results.other_gpus`), this
module puts each GPU's best version beside the reference's (`goal_table`)
and finds where a version hardly gained from the other GPU's faster
memory (`held_back`); `helpers.workbook.ch02_fusion.numbers.other_gpu`
gives the numbers the chapter quotes.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.workbook.ch02_fusion import verdicts

DTYPES = ("float32", "float64")


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
