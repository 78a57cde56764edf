"""Chapter 5's predictions: what each transformation should do, worked
out on paper (`helpers.page.arithmetic`) before the chapter measures it,
and a sentence comparing each prediction with the measurement.

Every number comes from the chapter's sizes or from a recording: nothing
here is typed in.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import arithmetic
from helpers.page.arithmetic import Worked

q = arithmetic.quantity
FLOAT32_BYTES = 4


# --- jit: donation --------------------------------------------------------

def donation_saving(width: int, layers: int) -> Worked:
    """The memory donation should free after a step: the old parameters,
    ``layers`` float32 matrices of ``width`` x ``width``."""
    return arithmetic.worked(
        r"M_\text{saved}", "L * n ** 2 * b", unit="MB", per_unit=1e6,
        L=q("L", layers), n=q("n", width),
        b=q("b", FLOAT32_BYTES, "B"))


def donation_saved_mb(data: dict[str, Any]) -> float:
    """The live megabytes donation saved in a `transforms.donation` run
    (``data`` as `claims.measure` returns it)."""
    kept, donated = data["donation"]["kept"], data["donation"]["donated"]
    return float(kept["live MB"] - donated["live MB"])


def _by_length(table: dict[str, list]) -> pd.DataFrame:
    """A scan table (`transforms.scan_vs_unrolled`) indexed by length and
    version."""
    return pd.DataFrame(table).set_index(["length", "version"]).sort_index()


def unrolled_compile(table: dict[str, list]) -> tuple[Worked, Worked]:
    """The unrolled loop's compile time at the longest length T, if it
    grows as its program does (one body per step): its extra cost a step
    over the scan, seen at the second-longest length T' (the shortest also
    pays the first compile's start-up), times T, on top of the scan's
    compile time at T. Returns (cost a step, compile time at T)."""
    frame = _by_length(table)
    lengths = sorted(frame.index.get_level_values("length").unique())
    if len(lengths) < 2:
        raise ValueError(f"need compile times at two lengths or more to "
                         f"extrapolate, got {lengths}.")
    short, long = lengths[-2], lengths[-1]
    ms = frame["compile ms"] * 1e-3
    per_step = arithmetic.worked(
        r"\delta", "(unrolled - scan) / t_short", unit="ms", per_unit=1e-3,
        unrolled=q(r"c_\text{unrolled}(T')", ms[short, "unrolled"], "ms",
                   1e-3),
        scan=q(r"c_\text{scan}(T')", ms[short, "scan"], "ms", 1e-3),
        t_short=q("T'", short))
    total = arithmetic.worked(
        r"c_\text{unrolled}(T)", "scan + T * step", unit="s",
        scan=q(r"c_\text{scan}(T)", ms[long, "scan"], "ms", 1e-3),
        T=q("T", long), step=q(r"\delta", per_step.value, "ms", 1e-3))
    return per_step, total


def loop_steps(chapter_3_gpu: list[dict[str, Any]]) -> pd.Series:
    """Chapter 3's recorded time a step of each XLA loop (its `while` and
    `scan` variants in float32, not the one-kernel Pallas loop), in
    seconds."""
    rows = pd.DataFrame(chapter_3_gpu)
    xla_loop = rows["variant"].str.match(r"(while|scan),") & (
        rows["dtype"] == "float32")
    return rows[xla_loop].set_index("variant")["us_per_step"] * 1e-6


def scan_run_range(steps: int, step_s: pd.Series, host_s: float
                   ) -> tuple[Worked, Worked]:
    """A scan of ``steps`` small steps on the reference GPU, if each step
    costs what one of chapter 3's XLA loop steps did (``step_s``): the
    call's host part plus the steps at the cheapest and the dearest."""
    def bound(name: str, step: float) -> Worked:
        return arithmetic.worked(
            rf"t_\text{{scan, {name}}}", "host + T * step", unit="ms",
            per_unit=1e-3, T=q("T", steps),
            host=q(r"t_\text{host}", host_s, "µs", 1e-6),
            step=q(rf"s_\text{{{name}}}", step, "µs", 1e-6))
    return bound("min", float(step_s.min())), bound("max", float(step_s.max()))


def remat_products(layers: int) -> tuple[Worked, Worked]:
    """Matrix products of the residual blocks' gradient. Each block has
    two products forward; backward, each needs one for its weight's
    gradient and one for its input's, except the first block's first
    product, whose input is the data. Checkpointed, each block computes
    its first product once more (its second's output is not needed
    backward)."""
    blocks = q("L", layers)
    plain = arithmetic.worked(r"n_\text{plain}", "2 * L + (4 * L - 1)",
                              L=blocks)
    remat = arithmetic.worked(r"n_\text{remat}", "n + L", L=blocks,
                              n=q(r"n_\text{plain}", plain.value))
    return plain, remat


def remat_bytes(width: int, hidden: int, layers: int
                ) -> tuple[Worked, Worked]:
    """Bytes each example keeps for the backward pass. Plain, every block
    keeps its input (``width`` floats) and both hidden values (the product
    and its gelu); checkpointed, every block keeps its input, and one
    block at a time recomputes its two hidden values."""
    sizes = {"L": q("L", layers), "w": q("w", width), "h": q("h", hidden),
             "b": q("b", FLOAT32_BYTES, "B")}
    plain = arithmetic.worked(r"m_\text{plain}", "L * (w + 2 * h) * b",
                              unit="kB", per_unit=1e3, **sizes)
    remat = arithmetic.worked(r"m_\text{remat}", "(L * w + 2 * h) * b",
                              unit="kB", per_unit=1e3, **sizes)
    return plain, remat
