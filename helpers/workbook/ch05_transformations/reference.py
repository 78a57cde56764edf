"""Chapter 5's numbers from the reference GPU's recording, section by
section, as the page's paragraphs quote them (each paragraph's claims are
checked against them where it is glued)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page.arithmetic import Worked
from helpers.page.tables import number
from helpers.workbook.ch05_transformations import claims, predictions
from helpers.workbook.ch05_transformations.claims import times


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


def _reconcile(ratio: float, data: dict[str, Any], here_jaxlib: str,
               gpu_jaxlib: str) -> str:
    """The temporary-memory ratio compiled here against the one the
    recording's own compile on the H100 gave, and why they can differ."""
    n = claims.remat_numbers(data)
    there = (f"{times(n['memory'])} times ({number(n['plain MB'])} MB and "
             f"{number(n['remat MB'])} MB)")
    if times(n["memory"]) == times(ratio):
        return (f"The H100's own run found the same, {there}: both are "
                "XLA's buffer assignment, fixed when the step is compiled.")
    compilers = (f"the H100's by jaxlib {gpu_jaxlib}, this one by jaxlib "
                 f"{here_jaxlib}" if gpu_jaxlib != here_jaxlib else
                 f"both by jaxlib {here_jaxlib}")
    return (f"The H100's run above found {there} instead. Neither is "
            "measured while the step runs: both are XLA's buffer "
            "assignment, fixed when the step is compiled, but by two "
            f"compilations, {compilers}, and only the one on the H100 "
            "could time candidate kernels for its matrix products "
            "(autotuning). Either difference can change the buffers XLA "
            "assigns, so each ratio holds for the compiler that made it.")


def remat_compiled(compiled: pd.DataFrame, products: tuple[Worked, Worked],
                   memory: tuple[Worked, Worked], sizes: tuple[int, ...],
                   recorded: Any = None, here_jaxlib: str = "") -> str:
    """XLA:GPU's plan for both steps as compiled here for an H100 at
    ``sizes`` (rows ``remat`` False and True, as
    `transforms.remat_on_gpu` gives them): matrix products and bytes per
    example against the predictions, temporary memory, and that memory
    against the ratio in ``recorded`` (the reference GPU's
    `helpers.measuring.results.Result`, when available)."""
    dots = [int(compiled.loc[flag, "dots"]) for flag in (False, True)]
    wanted = [round(w.value) for w in products]
    said = ("exactly as predicted" if dots == wanted else
            f"against {wanted[0]} and {wanted[1]} predicted")
    per = [float(compiled.loc[flag, "bytes per example"])
           for flag in (False, True)]
    share = [p / m.value for p, m in zip(per, memory)]
    temp = [float(compiled.loc[flag, "temp MB"]) for flag in (False, True)]
    text = (f"Compiled here for an H100, the plain and checkpointed steps "
            f"hold {dots[0]} and {dots[1]} matrix products, {said}, and each "
            f"example adds {number(per[0] / 1e3)} kB and "
            f"{number(per[1] / 1e3)} kB to the step's peak, "
            f"{share[0]:.2f} and {share[1]:.2f} times "
            "the predicted bytes. By XLA's count of the step's peak, a "
            f"batch about {per[0] / per[1]:.1f} times as large should fit "
            "in the same memory. "
            f"Their temporary memory is {number(temp[0])} MB and "
            f"{number(temp[1])} MB, {times(temp[1] / temp[0])} times as much.")
    if recorded is None or not recorded.available:
        return text
    if tuple(claims.sizes_of(recorded.data)["remat"]) != tuple(sizes):
        return (f"{text} The H100's run measured other sizes, so its "
                "temporary memory is not compared here.")
    return " ".join((text, _reconcile(temp[1] / temp[0], recorded.data,
                                      here_jaxlib,
                                      recorded.provenance["jaxlib"])))
