"""What the recorded sweep says beyond the cliff: which K ran slowest and
which kernel ran them, and how CuPy's batched matmul compares.

On today's XLA:GPU the fusion autotuner may hand a reduction to a Triton
fusion (kind ``kCustom``; the fusion's name keeps the kind XLA's rule
gave it) or keep XLA's own emitter. The sweep's ``fusions`` column says
which, so the sentences here name the kernel that ran each slow point
rather than the kind the rule predicted.
"""

from __future__ import annotations

import pandas as pd

from helpers.page import prose
from helpers.workbook.ch02_fusion import verdicts

# The slowest points a sentence names, per dtype.
SHOWN = 2


def kernel_in_words(fusions: str) -> str:
    """A sweep row's ``fusions`` as a reader says it.

    Example:
        >>> kernel_in_words("kCustom (named kLoop) reduce")
        'a Triton fusion'
        >>> kernel_in_words("kInput reduce")
        "XLA's own kInput emitter"
    """
    if fusions.startswith("kCustom"):
        return "a Triton fusion"
    return f"XLA's own {fusions.split()[0]} emitter"


def slowest(rows: pd.DataFrame, gpu: str) -> str | None:
    """The slowest K of ``a @ b`` in `verdicts.GOAL_KS`, per dtype, with
    the share of the copy ceiling and the kernel that ran each; and, where
    XLA's own kInput emitter ran the slowest point, that the kind the rule
    calls fast was the slow one there. None without a ``fusions``
    column."""
    if "fusions" not in rows:
        return None
    low, high = verdicts.GOAL_KS
    mine = rows[(rows["version"] == "a @ b") & rows["K"].between(low, high)]
    parts, own_kinput_slowest = [], False
    for dtype, part in mine.groupby("dtype"):
        worst = part.nsmallest(SHOWN, "achieved")
        points = [f"K = {row.K} ({verdicts.percent(row.achieved)}, "
                  f"{kernel_in_words(row.fusions)})"
                  for row in worst.itertuples()]
        parts.append(f"{prose.and_list(points)} in {dtype}")
        own_kinput_slowest |= worst.iloc[0]["fusions"].startswith("kInput")
    text = (f"The slowest points of `a @ b` on the {gpu} for K from {low} "
            f"to {high} were " + "; ".join(parts) + ".")
    if own_kinput_slowest:
        text += (" The kind XLA's rule calls fast ran slowest here: what "
                 "decides the speed on this GPU is the kernel the "
                 "autotuner keeps, not the kind the rule names.")
    return text


def cupy_against_jax(rows: pd.DataFrame, gpu: str) -> str | None:
    """How many times ``a @ b``'s time CuPy's batched matmul took over the
    sweep, its least and most; None when the sweep has no CuPy rows."""
    times = rows.pivot_table(index=["K", "dtype"], columns="version",
                             values="ms")
    if "CuPy" not in times or "a @ b" not in times:
        return None
    ratio = (times["CuPy"] / times["a @ b"]).dropna()
    if ratio.empty:
        return None
    return (f"CuPy's batched matmul, the source's well-behaved baseline, "
            f"took {ratio.min():.1f} to {ratio.max():.1f} times as long as "
            f"`a @ b` over the sweep on the {gpu}.")
