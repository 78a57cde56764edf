"""XProf's tables of the attention block, labelled and read against the
book's own ceilings.

Both versions of the block run in one profile, each its own compiled
program, so XProf lists every op once per program: `program_versions`
and `kernel_versions` say which version each row is. `readable` shows a
table with that label, its rates in TFLOP/s and GB/s to three
significant figures.

XProf measures time only. An op's FLOPs and bytes come from XLA's cost
model, counted once per device event of the op
(``xprof/convert/xplane_to_op_metrics_db.cc`` counts the events,
``xprof/utils/op_utils.cc`` multiplies), and its roofline divides by the
device's theoretical peaks. `against_ceilings` says, from the tables,
where that puts a rate above what chapter 1 measured, and why.
"""

from __future__ import annotations

import math

import pandas as pd

from helpers.page import prose
from helpers.profiler import xprof_tables

GB_PER_GIB = 2**30 / 1e9
# An einsum's subscripts survive in the op path of every op it becomes
# ("jit(attention)/attn_q_k/bhts,bhqs->bhtq/dot_general"); matmul leaves none.
EINSUM_MARK = "->"
# The columns each table shows, headed in words; a version column leads.
SHOWN = {
    "kernel_stats": {"kernel_name": "kernel",
                     "registers_per_thread": "registers",
                     "occupancy_pct": "occupancy %",
                     "is_kernel_using_tensor_core": "tensor cores",
                     "total_duration_us": "total µs"},
    "hlo_stats": {"hlo_op_name": "HLO op", "occurrences": "events",
                  "total_time_us": "total µs",
                  "model_flop_rate": "TFLOP/s",
                  "measured_memory_bw_GiB_s": "GB/s"},
    "roofline_model": {"operation": "HLO op",
                       "measured_flop_rate_GFLOP_s": "TFLOP/s",
                       "operational_intensity_FLOP_Byte": "FLOP/byte",
                       "bound_by": "bound by",
                       "roofline_efficiency": "of roofline"},
}
# XProf's GFLOP/s and GiB/s columns, and the factor to TFLOP/s and GB/s.
TO_BOOK_UNITS = {"model_flop_rate": 1e-3, "measured_flop_rate_GFLOP_s": 1e-3,
                 "measured_memory_bw_GiB_s": GB_PER_GIB}
PROGRAM_COLUMNS = {"hlo_stats": "program_id",
                   "roofline_model": "hlo_module_id"}
XPROF_SOURCE = ("https://github.com/openxla/xprof/blob/"
                "a27d00aa95eb5cc4f4e1a0fd56b4c89261685ec5/xprof")


def three_figures(value: float) -> float:
    """``value`` rounded to three significant figures (0 and NaN kept).

    Example:
        >>> three_figures(3428.7), three_figures(425.1497), three_figures(0)
        (3430.0, 425.0, 0)
    """
    if not value or math.isnan(value):
        return value
    return round(value, 2 - math.floor(math.log10(abs(value))))


def program_versions(hlo: pd.DataFrame, marked: str = "einsum",
                     other: str = "matmul") -> dict[str, str]:
    """Which version each program of XProf's ``hlo_stats`` table is: the
    one whose op paths hold einsum subscripts (`EINSUM_MARK`) is
    ``marked``, the other ``other``. When that does not tell exactly two
    programs apart, each is called by its id ("program 117785").

    Example:
        >>> program_versions(pd.DataFrame({
        ...     "program_id": ["7", "9"],
        ...     "tf_op_name": ["jit(f)/ab,cb->ac/dot_general:",
        ...                    "jit(f)/dot_general:"]}))
        {'7': 'einsum', '9': 'matmul'}
    """
    found = {}
    for program, ops in hlo.groupby("program_id"):
        paths = ops["tf_op_name"].astype(str)
        found[str(program)] = (marked if paths.str.contains(
            EINSUM_MARK, regex=False).any() else other)
    if sorted(found.values()) != sorted([marked, other]):
        return {program: f"program {program}" for program in found}
    return found


def kernel_versions(kernels: pd.DataFrame, hlo: pd.DataFrame,
                    versions: dict[str, str]) -> list[str]:
    """The version of each row of XProf's ``kernel_stats``, which has no
    program column: the programs whose ``hlo_stats`` rows share the
    kernel's op path (and its HLO op, where the kernel is named after one:
    ``gemm_fusion_dot_2`` runs ``gemm_fusion_dot.2``). XProf merges a
    kernel that both programs run alike into one row: "both"."""
    paths = hlo["tf_op_name"].astype(str).str.rstrip(":")
    kernel_named = hlo["hlo_op_name"].astype(str).str.replace(".", "_")
    labels = []
    for name, path in zip(kernels["kernel_name"], kernels["op_name"]):
        rows = hlo[paths == path]
        named = rows[kernel_named[rows.index] == name]
        programs = (named if not named.empty else rows)["program_id"]
        found = sorted({versions.get(str(p), str(p)) for p in programs})
        labels.append(found[0] if len(found) == 1 else
                      "both" if len(found) == len(set(versions.values()))
                      else ", ".join(found) or "—")
    return labels


def readable(frame: pd.DataFrame, tool: str,
             versions: dict[str, str] | None = None,
             hlo: pd.DataFrame | None = None) -> pd.DataFrame:
    """``tool``'s table as the page shows it: a ``version`` column first
    (from ``versions``, `program_versions`; kernels through ``hlo``),
    the `SHOWN` columns headed in words, rates in TFLOP/s and GB/s to
    three significant figures. `roofline_model`'s rows come once: XProf
    gives each op twice, with infeed and outfeed counted in the step and
    without, the same here."""
    if "include_infeed_outfeed" in frame.columns:
        frame = frame[~frame["include_infeed_outfeed"].astype(bool)]
    shown = frame[[c for c in SHOWN[tool] if c in frame.columns]].copy()
    for column in xprof_tables.NAME_COLUMNS & set(shown.columns):
        shown[column] = shown[column].astype(str).map(xprof_tables.short_name)
    for column in shown.columns:  # a table says yes or no, not True
        if shown[column].dtype == bool:
            shown[column] = shown[column].map({True: "yes", False: "no"})
    for column, factor in TO_BOOK_UNITS.items():
        if column in shown.columns:
            shown[column] = (shown[column] * factor).map(three_figures)
    if versions and tool in PROGRAM_COLUMNS:
        labels = [versions.get(str(p), str(p))
                  for p in frame[PROGRAM_COLUMNS[tool]]]
        shown.insert(0, "version", labels)
    elif versions and hlo is not None and tool == "kernel_stats":
        shown.insert(0, "version", kernel_versions(frame, hlo, versions))
    return shown.rename(columns=SHOWN[tool]).reset_index(drop=True)


def device_peaks(roofline: pd.DataFrame) -> tuple[float | None,
                                                  float | None]:
    """The peaks XProf's roofline divides by, read back from its table:
    TFLOP/s (an op's FLOP rate over its compute efficiency) and GB/s (its
    memory rate over its memory utilisation); None where no row says."""
    def ratio(rate: str, share: str) -> float | None:
        if {rate, share} - set(roofline.columns):
            return None
        rows = roofline[roofline[share] > 0]
        return float((rows[rate] / rows[share]).median()) if len(rows) \
            else None

    flops = ratio("measured_flop_rate_GFLOP_s", "compute_efficiency")
    memory = ratio("hbm_bw_GiB_s", "max_mem_bw_utilization")
    return (flops and flops * 1e-3, memory and memory * GB_PER_GIB)


def _n(value: float) -> str:
    """A rate as a sentence says it: three significant figures, plain."""
    value = three_figures(value)
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _ops(names: pd.Series) -> str:
    """Op names, each once, as a sentence lists them."""
    return prose.and_list(f"`{name}`" for name in dict.fromkeys(names))


def _verb(names: pd.Series, one: str, many: str) -> str:
    return one if len(set(names)) == 1 else many


def _rates(hlo: pd.DataFrame) -> pd.DataFrame:
    """Each row's rates in book units, and its device events per call: its
    occurrences over its program's most common count, one a call."""
    calls = hlo.groupby("program_id")["occurrences"].transform(
        lambda counts: counts.mode().iloc[0])
    return pd.DataFrame({"op": hlo["hlo_op_name"].astype(str),
                         "tflops": hlo["model_flop_rate"] * 1e-3,
                         "gbs": hlo["measured_memory_bw_GiB_s"] * GB_PER_GIB,
                         "events": hlo["occurrences"] / calls})


def _events(op: str, events: float, memsets: dict[str, float]) -> str:
    n = round(events)
    m = round(memsets.get(op, 0.0) * n)
    if m == 1 and n == 2:
        return "two events a call, its kernel and a memset"
    return f"{n} events a call" + (f", {m} of them memsets" if m else "")


def _times(n: int) -> str:
    return {2: "twice", 3: "three times"}.get(n, f"{n} times")


def _flops_said(rates: pd.DataFrame, ceiling: float,
                memsets: dict[str, float]) -> str:
    """Why an op's FLOP rate exceeds the ceiling: counted per event."""
    over = rates[rates["tflops"] > ceiling]
    said = []
    for op, rows in over.groupby("op", sort=False):
        top, events = rows["tflops"].max(), rows["events"].max()
        if events < 1.5:
            said.append(f"`{op}` reaches {_n(top)} TFLOP/s by the cost "
                        "model's count of its FLOPs.")
            continue
        per_call = top / events
        said.append(
            f"`{op}` runs as {_events(op, events, memsets)}, so its FLOPs "
            f"count {_times(round(events))}: per call it does "
            f"{_n(per_call)} TFLOP/s, not {_n(top)}"
            + (", which is under the ceiling." if per_call <= ceiling
               else "."))
    return " ".join(said)


def _bytes_said(rates: pd.DataFrame, copy: float,
                peak: float | None) -> str:
    """Why an op's bandwidth exceeds the copy's: the L2 cache, or reads."""
    over = rates[rates["gbs"] > copy].sort_values("gbs", ascending=False)
    beyond = over[over["gbs"] > peak] if peak else over.iloc[:0]
    within = over[~over["op"].isin(beyond["op"])]
    text = ""
    if peak and not beyond.empty:
        text += (f" {_ops(beyond['op'])} "
                 f"{_verb(beyond['op'], 'reaches', 'reach up to')} "
                 f"{_n(beyond['gbs'].max())} GB/s, beyond even the "
                 f"{_n(peak)} GB/s the memory can deliver (its clock times "
                 "its bus width), which XProf's roofline divides by "
                 f"([source]({XPROF_SOURCE}/convert/xplane_to_op_stats.cc)),"
                 " hence an \"of roofline\" above 1: part of what "
                 f"{_verb(beyond['op'], 'it reads', 'they read')} came from "
                 "the L2 cache, most likely left there by the kernel just "
                 "before.")
    if not within.empty:
        text += (f" {_ops(within['op'])}, above the copy's rate but under "
                 "the memory's, need not have used the cache: a copy "
                 "writes every byte it reads, and an op that mostly reads "
                 "streams faster (chapter 1).")
    return text.strip()


def against_ceilings(hlo: pd.DataFrame, roofline: pd.DataFrame,
                     ceilings: tuple[float, float], gpu: str,
                     memsets: dict[str, float] | None = None) -> str:
    """XProf's rates (``hlo_stats``, ``roofline_model``) against chapter
    1's ceilings, in a paragraph: which ops exceed them, and why.

    Args:
        hlo, roofline: XProf's tables of a profile taken kernel by kernel.
        ceilings: chapter 1's TF32 matrix rate (TFLOP/s) and copy
            bandwidth (GB/s) on ``gpu``.
        gpu: the device's name.
        memsets: the share of each HLO op's device events that are
            memsets (`verdicts.memsets_by_op`).
    """
    tflops, copy = ceilings
    rates = _rates(hlo)
    peak_flops, peak_memory = device_peaks(roofline)
    over = (rates["tflops"] > tflops) | (rates["gbs"] > copy)
    text = (f"Chapter 1 measured {tflops:.0f} TFLOP/s for a TF32 matrix "
            f"product on the {gpu} and {copy:.0f} GB/s for a copy; "
            + ("some of XProf's rates above are higher. " if over.any()
               else "XProf's rates above stay under both. ")
            + "XProf measures only time: it takes an op's FLOPs and bytes "
            "from XLA's cost model and counts them once per device event "
            f"of the op ([source]({XPROF_SOURCE}/utils/op_utils.cc)).")
    for part in (_flops_said(rates, tflops, memsets or {}),
                 _bytes_said(rates, copy, peak_memory)):
        text += f" {part}" if part else ""
    if peak_flops:
        text += (f" The roofline's FLOP peak, {_n(peak_flops)} TFLOP/s, is "
                 "the rate of 16-bit tensor cores, which XProf takes "
                 "whatever an op's type ([source]"
                 f"({XPROF_SOURCE}/utils/hardware_type_utils.cc)): an f32 "
                 f"product at the TF32 rate would reach "
                 f"{tflops / peak_flops:.0%} of it.")
    return text
