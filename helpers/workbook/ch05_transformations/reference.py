"""Chapter 5's numbers from the reference GPU's recording, section by
section, as the page's paragraphs quote them (each paragraph's claims are
checked against them where it is glued)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page.arithmetic import Worked
from helpers.workbook.ch05_transformations import claims, predictions


def vmap_numbers(data: dict[str, Any]) -> dict[str, float]:
    """At the largest batch, by the wall clock: ``vmap``'s ms, the loop
    inside `jit` and the loop of jitted calls as multiples of it, the loop
    of calls' ms, and the share of that time its kernels kept the device
    busy (None where kernel time was not recorded)."""
    big = claims.largest(data["vmap"], "batch")
    ms = big["ms"]
    busy = (big.loc[claims.LOOP, "kernel ms"] / ms[claims.LOOP]
            if "kernel ms" in big else None)
    return {"batch": int(big["batch"].iloc[0]), "vmap_ms": ms["vmap"],
            "inside": ms[claims.INSIDE] / ms["vmap"],
            "loop": ms[claims.LOOP] / ms["vmap"],
            "loop_ms": ms[claims.LOOP], "busy": busy}


def scan_numbers(data: dict[str, Any], host_s: float | None = None
                 ) -> dict[str, Any]:
    """At the longest length: the unrolled loop's compile time (s) and
    its multiple of the scan's, the extrapolated compile time
    (`predictions.unrolled_compile`), both run times by the wall clock
    (ms), and, given the call's host part, each version's time a step
    without it (µs)."""
    ratios = claims.scan_ratios(data)
    big = claims.largest(data["scan"], "length")
    numbers = {**ratios,
               "unrolled_compile_s": big.loc["unrolled", "compile ms"] / 1e3,
               "predicted_s": predictions.unrolled_compile(
                   data["scan"])[1].value,
               "scan_ms": big.loc["scan", "run ms"],
               "unrolled_ms": big.loc["unrolled", "run ms"]}
    if host_s is not None:
        for version in ("scan", "unrolled"):
            numbers[f"{version}_step_us"] = (
                (numbers[f"{version}_ms"] / 1e3 - host_s)
                / ratios["length"] * 1e6)
    return numbers


def forward_numbers(data: dict[str, Any]) -> dict[str, Any]:
    """`value_and_grad` against two calls: matrix products of the three
    versions, and the two calls' time over `value_and_grad`'s by the wall
    clock and by the kernels alone (None where not recorded)."""
    f = pd.DataFrame(data["forward"]).set_index("version")
    dots, ms = f["dots"], f["ms"]
    kernels = (f["kernel ms"].iloc[1] / f["kernel ms"].iloc[0]
               if "kernel ms" in f else None)
    return {"dots": int(dots.iloc[0]), "two_calls_dots": int(dots.iloc[1]),
            "one_jit_dots": int(dots.iloc[2]),
            "wall": ms.iloc[1] / ms.iloc[0], "kernels": kernels}




def remat_plan_numbers(compiled: pd.DataFrame,
                       memory: tuple[Worked, Worked]) -> dict[str, float]:
    """XLA:GPU's plan for the plain and checkpointed steps
    (`transforms.remat_for_gpu`, rows ``remat`` False and True): matrix
    products, kB each example adds to the peak and its share of the
    predicted bytes (``memory``, `predictions.remat_bytes`), how many
    times as large a batch fits checkpointed, and temporary memory (MB,
    and checkpointed over plain)."""
    row = {flag: compiled.loc[flag] for flag in (False, True)}
    per = {flag: float(row[flag]["bytes per example"]) for flag in row}
    temp = {flag: float(row[flag]["temp MB"]) for flag in row}
    return {"plain_dots": int(row[False]["dots"]),
            "remat_dots": int(row[True]["dots"]),
            "plain_kb": per[False] / 1e3, "remat_kb": per[True] / 1e3,
            "plain_share": per[False] / memory[0].value,
            "remat_share": per[True] / memory[1].value,
            "batch_ratio": per[False] / per[True],
            "plain_mb": temp[False], "remat_mb": temp[True],
            "memory": temp[True] / temp[False]}
