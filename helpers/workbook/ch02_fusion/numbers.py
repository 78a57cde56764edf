"""The numbers chapter 2's written paragraphs quote from a GPU's run, and
the quantities its claims turn on.

Each function takes chapter 2's tables (`verdicts.table` of the sweep or
of the fixes, or the autotuner recording's data) and returns a dict of
numbers, by the names the chapter glues. The chapter checks each claim
beside its paragraph (`helpers.page.claims.check`); the unit tests feed
both outcomes.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import prose
from helpers.workbook.ch02_fusion import sweep_reading, verdicts

DTYPES = ("float32", "float64")


def cliff(rows: pd.DataFrame) -> dict[str, float]:
    """K = 25's time over K = 35's for ``a @ b`` in each dtype
    (``float32``, ``float64``): above `verdicts.CLIFF`, the source's
    cliff."""
    out = {}
    for dtype in DTYPES:
        slow = verdicts.time_ms(rows, 25, dtype)
        fast = verdicts.time_ms(rows, 35, dtype)
        if slow is None or fast is None:
            raise ValueError(f"the sweep has no a @ b at K = 25 and 35 in "
                             f"{dtype}: run the chapter's sweep.")
        out[dtype] = slow / fast
    return out


def slowest(rows: pd.DataFrame) -> dict[str, Any]:
    """The two slowest K of ``a @ b`` in `verdicts.GOAL_KS`, per dtype,
    each with its share of the copy ceiling and the kernel that ran it
    (``float32_points``, ``float64_points``, as a list a sentence can
    quote); whether XLA's own kInput emitter ran the slowest float32
    point (``own_kinput_slowest``); and CuPy's time over ``a @ b``'s, its
    least and most over the sweep (``cupy_low``, ``cupy_high``)."""
    low, high = verdicts.GOAL_KS
    mine = rows[(rows["version"] == "a @ b") & rows["K"].between(low, high)]
    out: dict[str, Any] = {}
    for dtype, part in mine.groupby("dtype"):
        worst = part.nsmallest(sweep_reading.SHOWN, "achieved")
        out[f"{dtype}_points"] = prose.and_list(
            f"K = {row.K} ({verdicts.percent(row.achieved)}, "
            f"{sweep_reading.kernel_in_words(row.fusions)})"
            for row in worst.itertuples())
        if dtype == "float32":
            out["own_kinput_slowest"] = worst.iloc[0]["fusions"].startswith(
                "kInput")
    times = rows.pivot_table(index=["K", "dtype"], columns="version",
                             values="ms")
    ratio = (times["CuPy"] / times["a @ b"]).dropna() if "CuPy" in times \
        else pd.Series(dtype=float)
    out["cupy_low"] = float(ratio.min()) if len(ratio) else None
    out["cupy_high"] = float(ratio.max()) if len(ratio) else None
    return out


def emitters(rows: pd.DataFrame) -> dict[str, int]:
    """How many (K, dtype) cases of ``a @ b`` ran as a Triton fusion
    (``triton``), of how many (``cases``), and in how many XLA's rule
    named the kind the GPU ran (``rule_agrees``)."""
    kinds = verdicts.emitters(rows)
    return {"triton": int(kinds["GPU ran"].str.startswith("kCustom").sum()),
            "cases": len(kinds), "rule_agrees": int(kinds["agree"].sum())}


def autotuner(data: dict[str, Any]) -> dict[str, float]:
    """K = 25's time over K = 35's with the fusion autotuner on and off,
    per dtype (``float32_on``, ``float32_off``, ...), by device time."""
    ratios = verdicts.autotuner_ratios(data)
    if ratios is None:
        raise ValueError("the autotuner recording lacks K = 25 or 35.")
    return {f"{dtype}_{setting}": ratio
            for dtype, (on, off) in ratios.items()
            for setting, ratio in (("on", on), ("off", off))}


def goal(rows: pd.DataFrame) -> dict[str, Any]:
    """The 85% goal by the best version in each dtype: its name
    (``float32_best``), its share at its slowest K in `verdicts.GOAL_KS`
    (``float32_worst``), default ``a @ b``'s (``float32_default``), the
    same for *pad K* (``float32_pad``), and whether the goal is met
    (``met``)."""
    report = verdicts.goal_report(rows)
    column = f"worst K={verdicts.GOAL_KS[0]}..{verdicts.GOAL_KS[1]}"
    out: dict[str, Any] = {}
    for dtype in DTYPES:
        version, worst, default = verdicts.best(report, dtype)
        out.update({f"{dtype}_best": version, f"{dtype}_worst": worst,
                    f"{dtype}_default": default,
                    f"{dtype}_pad": float(report.loc[("pad K", dtype),
                                                     column])})
    out["met"] = min(out[f"{d}_worst"] for d in DTYPES) >= verdicts.GOAL
    return out


def above_copy(rows: pd.DataFrame) -> dict[str, Any]:
    """The measured points above the copy ceiling: how many, of which
    versions, at which K, the highest share, and the fewest bytes read
    per byte written among them (a (3, K) @ (K, 1) product reads 4K
    numbers and writes 3)."""
    over = rows[rows["achieved"] > 1]
    return {"count": len(over),
            "versions": prose.and_list(over["version"].unique()),
            "ks": prose.and_list(sorted(set(int(k) for k in over["K"]))),
            "highest": float(over["achieved"].max()) if len(over) else None,
            "reads_per_write": min(4 * k / 3 for k in over["K"])
            if len(over) else None}


def other_gpu(reference: dict[str, Any], other: dict[str, Any]
              ) -> dict[str, Any]:
    """The fixes on ``other`` beside the reference (both chapter 2's
    device-time recordings of ``02_fusion/fixes``): the best version and
    its share of ``other``'s own copy ceiling at its slowest K, per dtype
    (``float32_best``, ``float32_worst``, ...), whether the goal is met
    there (``met``), the copy ceilings' ratio (``copy_ratio``), and the
    highest share any version reached there in `verdicts.GOAL_KS`
    (``top_version``, ``top_dtype``, ``top_share``, ``top_k``): reached,
    the arrays are large enough for the goal there."""
    rows = verdicts.table(other)
    report = verdicts.goal_report(rows)
    out: dict[str, Any] = {}
    for dtype in DTYPES:
        version, worst, _ = verdicts.best(report, dtype)
        out[f"{dtype}_best"], out[f"{dtype}_worst"] = version, worst
    out["met"] = min(out[f"{d}_worst"] for d in DTYPES) >= verdicts.GOAL
    out["copy_ratio"] = other["copy_gbps"] / reference["copy_gbps"]
    low, high = verdicts.GOAL_KS
    inside = rows[rows["K"].between(low, high) & (rows["achieved"] <= 1)]
    top = inside.loc[inside["achieved"].idxmax()]
    out.update(top_version=top["version"], top_dtype=top["dtype"],
               top_share=float(top["achieved"]), top_k=int(top["K"]))
    return out


def exercise_target(results: list[Any], k: int = 25,
                    dtype: str = "float32") -> dict[str, float]:
    """Exercise 2.1's speed target read from each recording of
    ``02_fusion/fixes``: its solution (*pad K*) over ``a @ b``'s device
    time at ``k``, by the name the text calls each GPU."""
    ratios = {}
    for result in results:
        rows = verdicts.table(result.data)
        at = rows[(rows["K"] == k) & (rows["dtype"] == dtype)]
        ms = at.set_index("version")["ms"]
        ratios[result.short_name] = float(ms["pad K"] / ms["a @ b"])
    return ratios


def ceilings_against_chapter_1(fixes: list[Any], summaries: list[Any]
                               ) -> dict[str, tuple[float, float]]:
    """Each GPU's copy ceiling as its fixes recording measured it just
    before its versions, beside chapter 1's for the same GPU, by the
    name the text calls the GPU."""
    from helpers.workbook.ch01_measuring import recording
    chapter_1 = {r.short_name: recording.copy_rates(r.data).device
                 for r in summaries}
    return {r.short_name: (r.data["copy_gbps"], chapter_1[r.short_name])
            for r in fixes if r.short_name in chapter_1}
