"""Chapter 1's sentences about the reference GPU, computed from its data.

The chapter's prose quotes the reference GPU's recording
(``results.reference('01_measuring/summary')``) whatever machine runs
it. Each function here takes that recording's ``data`` and returns the
paragraph that reads it, or None when a number it needs is not recorded
(the chapter then shows one notice, `helpers.page.prose.glue_result`). Every
judgement in a paragraph (below its floor or not, a warm-up or none, a
cache effect or noise, a fraction or a measurement error) is decided here
from the numbers, so a new recording with another outcome says another
thing; the unit tests feed each function opposite outcomes.

Two shapes of recording exist. The first H100 visit (2026-11-23) timed every
call by the wall clock, waited for one by one, so each time holds the host's
part too; its only device times are those of its profile of ``x + 1``.
Recordings since hold device time (`helpers.measuring.device_time`) with wall
time and the host's overhead beside it, and say so with
``'clock': 'device'``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import prose
from helpers.workbook.ch01_measuring import recording

# A first compile this many times the staged one searched for kernels.
SEARCH = 5
# Within this, a timing "agrees" with device time (the chapter's goal).
AGREEMENT = 0.05
# A repeated input faster than a rotation by more than this is a cache
# effect; below, it is within the noise of a blocked timing.
CACHE_EFFECT = 1.10


def ceilings(data: dict[str, Any], gpu: str) -> str | None:
    """What the reference GPU's two ceilings are, and what the wall clock
    would have made of the copy."""
    copy, mm = recording.copy_rates(data), recording.matmul_rates(data)
    hidden = 1 - copy.wall / copy.device
    if hidden <= AGREEMENT:
        clocks = (f"The wall clock of the same calls agrees within "
                  f"{AGREEMENT:.0%} ({copy.wall:.4g} GB/s): this host "
                  "adds little to a call of this size.")
    else:
        clocks = (f"The wall clock of the same calls, waiting for each, "
                  f"gives {copy.wall:.4g} GB/s: it hides {hidden:.0%} of "
                  "the bandwidth, the host's part of every call.")
    if recording.by_device_clock(data):
        source = (f"On the {gpu}, `x + 1` rotating over 1 GiB of float32 "
                  f"moved {copy.device:.4g} GB/s by the device's clock "
                  f"(the host added {copy.overhead_us:.3g} µs a call).")
        matmul = prose.fill(
            "A float32 matmul of n = {n} ran at {tf32:.4g} TFLOP/s at "
            "JAX's default precision and {highest:.4g} TFLOP/s with "
            "`precision='highest'`, {ratio:.1f} times slower: the default "
            "runs on TF32 tensor cores.",
            n=data["matmul_n"], tf32=mm.default, highest=mm.highest,
            ratio=None if not mm.highest else
            mm.default / mm.highest)
    else:
        source = (f"This recording on the {gpu} timed its ceilings by "
                  "the wall clock only; its profile of `x + 1` on "
                  f"{recording.profile_rows(data).iloc[-1]['elements']:,.0f} "
                  "float32 elements puts the kernel's copy at "
                  f"{copy.device:.4g} GB/s by the device's clock.")
        matmul = prose.fill(
            "Its float32 matmul rates at n = {n}, {tf32:.4g} TFLOP/s at "
            "the default precision (TF32) and {highest:.4g} TFLOP/s with "
            "`precision='highest'`, hold the host's part too, so they are "
            "lower bounds on the rate, and the matmul floors computed from "
            "them are too high by the same factor.",
            n=data["matmul_n"], tf32=mm.default, highest=mm.highest)
        applied = _matmul_sizes(data) - {data["matmul_n"]}
        if applied and matmul:
            matmul += (f" And it measured the rate at n = {data['matmul_n']}"
                       f" but applies it to a product of n = "
                       f"{', '.join(map(str, sorted(applied)))}: a rate "
                       "depends on the size, so the floors table below "
                       "marks that product's fraction as an error.")
    return " ".join(part for part in (source, clocks, matmul) if part)


def dispatch(data: dict[str, Any], gpu: str) -> str | None:
    """The matmul's call without waiting against its floor, and waiting.
    """
    n = data["matmul_n"]
    if recording.by_device_clock(data):
        part = data["dispatch"]
        floor_ms, enqueue_us = part["floor_ms"], part["enqueue_us"]
        blocked_ms, device_ms = part["blocked_ms"], part["device_ms"]
    else:
        floor_ms = 2 * n**3 / (data["matmul_tflops"] * 1e12) * 1e3
        enqueue_us, blocked_ms = data["enqueue_us"], data["blocked_ms"]
        device_ms = None
    if enqueue_us * 1e-3 < floor_ms:
        first = (f"On the {gpu}, the {n} × {n} matmul's call returned after "
                 f"{enqueue_us:.3g} µs without waiting, "
                 f"{floor_ms * 1e3 / enqueue_us:.0f} times less than its "
                 f"floor of {floor_ms:.3g} ms: impossible for the "
                 "arithmetic, so it timed the queueing.")
    else:
        first = (f"On the {gpu}, the {n} × {n} matmul's call took "
                 f"{enqueue_us:.3g} µs without waiting, no less than its "
                 f"floor of {floor_ms:.3g} ms: this device's dispatch "
                 "waited for the work.")
    second = f"Waiting, it took {blocked_ms:.3g} ms"
    if device_ms is not None:
        second += (f", of which the device's span was {device_ms:.3g} ms "
                   f"and the host's part {blocked_ms - device_ms:.3g} ms")
    return f"{first} {second}."


def compile_time(data: dict[str, Any], gpu: str) -> str | None:
    """A first call against the steady state, and the compile's parts."""
    if not recording.by_device_clock(data):
        return prose.fill(
            "On the {gpu}, the first call of `tanh(a @ a) * 2` took "
            "{first:.4g} ms.", gpu=gpu, first=data.get("first_call_ms"))
    part = data["compile"]
    text = prose.fill(
        "On the {gpu}, the first call of `tanh(a @ a) * 2` took {first:.4g} "
        "ms against a steady-state median of {steady:.3g} ms, {ratio:.0f} "
        "times as long; for a function of the same size, tracing and "
        "lowering took {lower:.3g} ms and XLA's compile {compile:.3g} ms. "
        "A new shape compiled again: {retrace:.4g} ms.", gpu=gpu,
        first=part["first_call_ms"], steady=part["steady_ms"],
        ratio=part["first_call_ms"] / part["steady_ms"],
        lower=part["trace_lower_ms"], compile=part["compile_ms"],
        retrace=part["retrace_ms"])
    return None if text is None else text + _searched_once(part)


def _searched_once(part: dict[str, float]) -> str:
    """Why the staged compile can be far cheaper than a first call: when
    the first call and a new shape both cost many times the staged
    compile, the staged one reused what the first compile searched for
    (XLA:GPU keeps its autotuning results for the process, by the
    instruction's shape: `autotuner_util.cc`'s in-memory cache)."""
    staged = part["trace_lower_ms"] + part["compile_ms"]
    if min(part["first_call_ms"], part["retrace_ms"]) < SEARCH * staged:
        return ""
    first = part["first_call_ms"] / staged
    again = part["retrace_ms"] / staged
    return (f" The first call cost {first:.0f} times the staged compile of "
            f"the same size and the new shape {again:.0f} times; the staged "
            "compile ran after the first call had compiled the same shapes. "
            "XLA:GPU times candidate kernels for each matrix product "
            "(autotuning) and keeps its choice for the rest of the process, "
            "so a compile of the same shapes skips the search, and a new "
            "shape pays for it again.")


def wall_and_device(data: dict[str, Any], gpu: str) -> str | None:
    """How much of a blocked call the kernel is, for a tiny and a large
    array, and (device-clock recordings) whether calls back to back agree
    with device time."""
    rows = recording.profile_rows(data)
    tiny, large = rows.iloc[0], rows.iloc[-1]
    text = (f"On the {gpu}, `x + 1` on {tiny['elements']:,.0f} elements ran "
            f"a {tiny['kernel_us']:.3g} µs kernel in a {tiny['wall_us']:.3g} "
            f"µs call ({tiny['kernel_us'] / tiny['wall_us']:.1%}); on "
            f"{large['elements']:,.0f} elements, {large['kernel_us']:.4g} µs "
            f"in {large['wall_us']:.4g} µs "
            f"({large['kernel_us'] / large['wall_us']:.0%}). The host's "
            f"part was {tiny['wall_us'] - tiny['kernel_us']:.3g} µs and "
            f"{large['wall_us'] - large['kernel_us']:.3g} µs a call.")
    xprof = large.get("xprof_kernel_us")
    if xprof is not None and xprof == xprof and large["kernel_us"]:
        text += (f" XProf's kernel table reads the same large kernel as "
                 f"{xprof:.4g} µs, "
                 f"{abs(xprof / large['kernel_us'] - 1):.1%} apart: two "
                 "readings of one profile.")
    agreement = back_to_back_agreement(data)
    if agreement is None:
        return text
    verdict = ("agree with" if abs(agreement - 1) <= AGREEMENT
               else "do not agree with")
    return text + (f" Timed back to back, ten calls waited for together, "
                   f"a large call took {large['back_to_back_us']:.4g} µs: "
                   f"{agreement:.3f} times the device's span, so calls back "
                   f"to back {verdict} device time within {AGREEMENT:.0%}.")


def back_to_back_agreement(data: dict[str, Any]) -> float | None:
    """A large array's time per call back to back over its device span
    (the chapter's goal: within 5% of 1), or None when not recorded."""
    rows = recording.profile_rows(data)
    if "back_to_back_us" not in rows or "span_us" not in rows:
        return None
    large = rows.iloc[-1]
    return float(large["back_to_back_us"] / large["span_us"])


def cache(data: dict[str, Any], gpu: str) -> str | None:
    """Whether a repeated small input was served from a cache."""
    rows = pd.DataFrame(data["cache"])
    same, rotated = recording.cache_columns(data)
    ratio = rows[same] / rows[rotated]
    at = rows.loc[ratio.idxmax(), "MiB"]
    clock = ("device time" if recording.by_device_clock(data)
             else "a blocked wall clock")
    if ratio.max() > CACHE_EFFECT:
        return (f"On the {gpu} ({clock}), the same array was up to "
                f"{ratio.max():.2f} times as fast as a rotation, at "
                f"{at:.3g} MiB: a repeated input that fits in the cache "
                "is served from it, so a benchmark of it measures the "
                "cache." + (_rotation_over_ceiling(
                    rows, rotated, recording.copy_rates(data).device)
                    if recording.by_device_clock(data) else ""))
    text = (f"On the {gpu} ({clock}), the same array was never more than "
            f"{ratio.max():.2f} times as fast as a rotation (at {at:.3g} "
            "MiB): no cache effect shows.")
    if recording.by_device_clock(data):
        text += _rotation_over_ceiling(rows, rotated,
                                       recording.copy_rates(data).device)
    if not recording.by_device_clock(data):
        small = rows.iloc[0]
        copy = recording.copy_rates(data).device
        text += (f" At {small['MiB']:.3g} MiB the rotation moved "
                 f"{small[rotated]:.3g} GB/s, {small[rotated] / copy:.1%} "
                 "of the device's copy bandwidth: each call's time was "
                 "almost all the host's, which hides what a cache could "
                 "save; only a sweep by the device's clock can show it.")
    return text


def _rotation_over_ceiling(rows: pd.DataFrame, rotated: str,
                           copy_gbps: float) -> str:
    """A sentence for the sizes where even the rotation beat the copy
    ceiling (measured on arrays far larger than any cache): empty where
    none did."""
    over = rows[rows[rotated] > copy_gbps * (1 + AGREEMENT)]
    if over.empty:
        return ""
    top = over.loc[over[rotated].idxmax()]
    fastest = (f"{top[rotated]:.0f} GB/s, {top[rotated] / copy_gbps:.2f} "
               f"times the {copy_gbps:.0f} GB/s ceiling")
    where = (f"{top['MiB']:.3g} MiB ({fastest})" if len(over) == 1 else
             prose.and_list(f"{mib:.3g} MiB" for mib in over["MiB"])
             + f" (at most {fastest}, at {top['MiB']:.3g} MiB)")
    return (f" Even the rotation beat the copy ceiling at {where}. A "
            "rotation keeps each call's input out of the cache, not its "
            "output: the cache holds written data back from memory, and "
            "an output that fits in it (likely the same buffer every "
            "call, freed by the call before) need not reach memory while "
            "the kernel runs. The copy ceiling, measured on arrays far "
            "larger than the cache, holds for arrays that do not fit in "
            "it.")


def floors(data: dict[str, Any], gpu: str) -> str | None:
    """The paragraph on the floors table: each kernel's fraction, and
    each measurement error named with its cause."""
    table = recording.floors_table(data)
    reached, notes, errors = [], [], []
    for kernel, row in table.iterrows():
        if row["error"]:
            errors.append(f"`{kernel}`'s fraction is a measurement error: "
                          f"{row['note']}")
        elif row["achieved"] == recording.READS_ONLY:
            notes.append(f"`{kernel}` ran {row['note']}")
        elif row["note"]:
            reached.append(f"`{kernel}` {row['achieved']:.0%} (measured "
                           f"{row['note']}: at its ceiling)")
        else:
            reached.append(f"`{kernel}` {row['achieved']:.0%}")
    if recording.by_device_clock(data):
        lead = (f"On the {gpu}, by device time against device-time "
                "ceilings, the kernels reached these fractions of their "
                "floors: ")
    else:
        lead = (f"On the {gpu}, this recording's times are wall-clock "
                "times, the host's part included; against the device-time "
                "copy ceiling they reached at least: ")
    text = lead + (", ".join(reached) if reached else "none") + "."
    for sentence in notes + errors:
        text += " " + sentence + "."
    return text


def gaps(data: dict[str, Any], gpu: str) -> str | None:
    """Once, for the whole chapter: what the reference recording does not
    hold, so that no section has to say it again. None when it holds
    everything the chapter reads."""
    missing = []
    if not recording.by_device_clock(data):
        missing.append("its ceilings and its kernels' times of record are "
                       "wall-clock times, with the host's part of each "
                       "call (its profile gives the copy's device time)")
    if "compile" not in data:
        missing.append("it kept no steady-state time or compile stages "
                       "for the first call")
    if back_to_back_agreement(data) is None:
        missing.append("it timed no calls back to back, so the chapter's "
                       "goal (back to back against device time) is not "
                       "decided")
    if not missing:
        return None
    return (f"**About the reference recording.** The sections below quote "
            f"a recording made on the {gpu}, and it lacks some of what "
            "they measure: " + "; ".join(missing) + ". Each section says "
            "what the recording does hold.")


def _matmul_sizes(data: dict[str, Any]) -> set[int]:
    """The sizes of the matmuls whose floors the recording computed."""
    rows = pd.DataFrame(data.get("floors", {"bound": [], "flops (hand)": []}))
    return {recording.matmul_size(flops) for flops in
            rows.loc[rows["bound"] != "memory", "flops (hand)"]}


# Every paragraph the chapter glues, by its glue name.
PARAGRAPHS = {"gpu_ceilings": ceilings, "gpu_dispatch": dispatch,
              "gpu_compile": compile_time,
              "gpu_wall_device": wall_and_device, "gpu_cache": cache,
              "gpu_floors": floors}


def all_paragraphs(data: dict[str, Any], device: str) -> dict[str, str]:
    """Every paragraph of `PARAGRAPHS` for one recording (or one run not
    yet recorded: a dry run proves the paragraphs read its data)."""
    return {name: paragraph(data, device) or ""
            for name, paragraph in PARAGRAPHS.items()}


def live_over_floor(floors: pd.DataFrame) -> str:
    """For the floors measured where the page runs: each kernel that beat
    its floor, and which of the three (its time, its count, the ceiling)
    the measurement points to. Empty when none did.

    Args:
        floors: one row per kernel, indexed by name, with ``floor ms``,
            ``device ms``, ``device spread`` (relative), the hand and XLA
            counts (``bytes (hand)``, ``bytes (XLA)``) and the ``bound``
            (``'memory'`` or ``'compute'``: which rate the floor is from).
    """
    said = []
    for kernel, row in floors.iterrows():
        fraction = row["floor ms"] / row["device ms"]
        if fraction <= 1:
            continue
        xla = row["bytes (XLA)"]
        if xla and abs(xla / row["bytes (hand)"] - 1) > AGREEMENT:
            cause = ("the hand count and XLA's differ, so check the count "
                     "first")
        elif fraction - 1 <= row["device spread"]:
            cause = ("that is within the spread of its own times, so it "
                     "is noise")
        elif row.get("bound") == "compute":
            cause = ("its count agrees with XLA's and its times are steady, "
                     "so the matmul rate its floor comes from is what is "
                     "wrong: this run measured that rate below what this "
                     "product reached")
        else:
            cause = ("its count agrees with XLA's and its times are steady, "
                     "so the copy rate its floor comes from is what is "
                     "wrong for it: this machine's copy is not the fastest "
                     "way to move its bytes")
        said.append(f"`{kernel}` ran {fraction:.2f} times as fast as its "
                    f"floor allows; {cause}.")
    return " ".join(said)
