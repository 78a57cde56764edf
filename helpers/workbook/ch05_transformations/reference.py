"""Chapter 5's paragraphs on the reference GPU's recording: for each
section, what the H100 measured, in sentences computed from the numbers
(so a new recording that changes the outcome changes the words), held
against the section's prediction and ending in the claim's verdict."""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page.arithmetic import Worked
from helpers.page.tables import number
from helpers.workbook.ch05_transformations import claims, predictions
from helpers.workbook.ch05_transformations.claims import times


def _clause(data: dict[str, Any], claim: str) -> str:
    return claims.verdict_clause(claims.findings(data)[claim].verdict)


def _loop_against(loop_ms: float, predicted_ms: float) -> str:
    """The loop of calls' time against one host part per example."""
    share = loop_ms / predicted_ms
    said = (f"{times(share)} times the {number(predicted_ms)} ms "
            "predicted from one call's host part per example")
    if share > 1.25:
        return f"{said}: each example costs more than a call's host part"
    if share < 0.8:
        return (f"{said}: calls that are waited for only at the end cost "
                "less host time than chapter 1's single blocked call")
    return f"{said}: the host's part of each call sets the loop's pace"


def vmap(data: dict[str, Any], device: str,
         predicted_s: float | None = None) -> str:
    """The three versions at the largest batch on ``device`` by the wall
    clock, how busy the loop of calls kept the device, and the loop's
    time against ``predicted_s`` (one host part per example) if given."""
    big = claims.largest(data["vmap"], "batch")
    ms = big["ms"]
    first = (f"On the {device}, at a batch of {big['batch'].iloc[0]}, "
             f"`vmap` took {number(ms['vmap'])} ms by the wall clock; the "
             f"loop inside `jit` took {times(ms[claims.INSIDE] / ms['vmap'])} "
             "times as long and the loop of jitted calls "
             f"{times(ms[claims.LOOP] / ms['vmap'])} times, so "
             f"{_clause(data, claims.VMAP)}.")
    parts = []
    if "kernel ms" in big:
        busy = big.loc[claims.LOOP, "kernel ms"] / ms[claims.LOOP]
        parts.append(f"kept the device busy for {busy:.0%} of its time, "
                     "the rest going to dispatch, one call per example")
    if predicted_s is not None:
        parts.append("took " + _loop_against(ms[claims.LOOP],
                                             predicted_s * 1e3))
    if not parts:
        return first
    return (f"{first} The loop of calls, {number(ms[claims.LOOP])} ms, "
            f"{'; it '.join(parts)}.")


def _other_clock(ratio: float, span: float | None) -> str:
    """A clause when the profiler's span orders two versions the other
    way round from the wall clock's ``ratio``, else nothing."""
    if span is None or (ratio > 1) == (span > 1):
        return ""
    return (f" (by the profiler's span {times(span)} times: the two clocks "
            "disagree on which is faster)")


def _scan_run(data: dict[str, Any]) -> str:
    """The unrolled loop's run time against the scan's."""
    r = claims.scan_ratios(data)
    big = claims.largest(data["scan"], "length")["run ms"]
    both = f"({number(big['unrolled'])} ms against {number(big['scan'])} ms)"
    if r["run"] >= 1:
        return (f"It then ran {times(r['run'])} times as long by the wall "
                f"clock {both}{_other_clock(r['run'], r['device run'])}.")
    return (f"It then ran {times(1 / r['run'])} times as fast by the wall "
            f"clock {both}{_other_clock(r['run'], r['device run'])}: the "
            "scan runs its loop step by step, a launch or more each step on "
            "a GPU (chapter 3), where the unrolled program is one straight "
            "sequence of kernels.")


def scan(data: dict[str, Any], device: str,
         run_range: tuple[Worked, Worked] | None = None,
         host_s: float | None = None) -> str:
    """Scan against the unrolled loop on ``device``: compile time against
    its extrapolation, run time, and, given `predictions.scan_run_range`'s
    bounds and the host part, the scan's time against chapter 3's loop
    steps; then the verdict."""
    r = claims.scan_ratios(data)
    compiled_s = claims.largest(data["scan"], "length").loc[
        "unrolled", "compile ms"] / 1e3
    predicted = predictions.unrolled_compile(data["scan"])[1].value
    parts = [f"On the {device}, at {r['length']} steps, the unrolled loop "
             f"took {times(r['compile'])} times as long as the scan to "
             f"compile: {number(compiled_s)} s, "
             f"{times(compiled_s / predicted)} times the "
             f"{number(predicted)} s extrapolated, so "
             f"{predictions.compile_growth(compiled_s / predicted)}.",
             _scan_run(data)]
    if run_range is not None and host_s is not None:
        parts.append(predictions.scan_run_verdict(data["scan"], *run_range,
                                                  host_s))
    verdict = claims.findings(data)[claims.SCAN].verdict
    trade = (": scan saves compile time and costs run time"
             if verdict == "holds in part" else "")
    parts.append(f"So {claims.verdict_clause(verdict)}{trade}.")
    return " ".join(parts)


def remat(data: dict[str, Any], device: str) -> str:
    """The checkpointed step against the plain one on ``device``:
    temporary memory, extra products and time, and the verdict."""
    n = claims.remat_numbers(data)
    clause = _clause(data, claims.REMAT)
    if n["extra"] <= 0:
        return (f"On the {device} the checkpointed step compiled to no more "
                "matrix products than the plain one: the compiler merged "
                "the recomputation away, its temporary memory is "
                f"{times(n['memory'])} times the plain step's, and {clause}.")
    cost = (f"{n['extra']} more matrix products and {times(n['time'])} "
            "times the time by the wall clock"
            f"{_other_clock(n['time'], n['device time'])}")
    return (f"On the {device}, checkpointing every block took the step's "
            f"temporary memory from {number(n['plain MB'])} MB to "
            f"{number(n['remat MB'])} MB, {times(n['memory'])} times as much, "
            f"for {cost}: {clause}.")


def forward(data: dict[str, Any], device: str) -> str:
    """`value_and_grad` against two calls on ``device``: matrix products
    and time (and the kernels' time alone, where recorded)."""
    f = pd.DataFrame(data["forward"]).set_index("version")
    dots, ms = f["dots"], f["ms"]
    kernels = ""
    if "kernel ms" in f:
        k = f["kernel ms"]
        kernels = f", {times(k.iloc[1] / k.iloc[0])} times counting only " \
            "the kernels"
    return (f"On the {device}, `value_and_grad` compiled to {dots.iloc[0]} "
            f"matrix products against {dots.iloc[1]} for the two calls "
            f"({dots.iloc[2]} when both are inside one `jit`), and the two "
            f"calls took {times(ms.iloc[1] / ms.iloc[0])} times as long by "
            f"the wall clock{kernels}: {_clause(data, claims.FORWARD)}.")


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
