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
device's theoretical peaks. `over_ceilings` finds, from the tables, the
rates above what chapter 1 measured and the numbers that explain them.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

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


def _rates(hlo: pd.DataFrame) -> pd.DataFrame:
    """Each row's rates in book units, and its device events per call: its
    occurrences over its program's most common count, one a call."""
    calls = hlo.groupby("program_id")["occurrences"].transform(
        lambda counts: counts.mode().iloc[0])
    return pd.DataFrame({"op": hlo["hlo_op_name"].astype(str),
                         "tflops": hlo["model_flop_rate"] * 1e-3,
                         "gbs": hlo["measured_memory_bw_GiB_s"] * GB_PER_GIB,
                         "events": hlo["occurrences"] / calls})




def over_ceilings(hlo: pd.DataFrame, roofline: pd.DataFrame,
                  ceilings: tuple[float, float],
                  memsets: dict[str, float] | None = None) -> dict[str, Any]:
    """XProf's rates (``hlo_stats``, ``roofline_model``) above chapter 1's
    ceilings, with what explains each: the numbers chapter 4's paragraph
    on them quotes and checks.

    Args:
        hlo, roofline: XProf's tables of a profile taken kernel by kernel.
        ceilings: chapter 1's TF32 matrix rate (TFLOP/s) and copy
            bandwidth (GB/s).
        memsets: the share of each HLO op's device events that are
            memsets (`verdicts.memsets_by_op`).

    Returns:
        ``flops_over``: one dict an op whose FLOP rate is over the ceiling
        (``op``, ``counted`` TFLOP/s as XProf shows it, ``events`` and
        ``memsets`` a call, ``per_call`` TFLOP/s: counted once a call);
        ``cached``: ops whose bandwidth is over even the memory's peak
        (``peak_gbs``), so part came from the L2 cache, and their highest
        rate ``cached_gbs``; ``reads``: ops over the copy's rate but under
        the peak.
    """
    tflops, copy = ceilings
    rates = _rates(hlo)
    _, peak = device_peaks(roofline)
    flops_over = []
    for op, rows in rates[rates["tflops"] > tflops].groupby("op", sort=False):
        events = round(rows["events"].max())
        counted = three_figures(rows["tflops"].max())
        flops_over.append({
            "op": op, "counted": counted, "events": events,
            "memsets": round((memsets or {}).get(op, 0.0) * events),
            "per_call": three_figures(counted / events)})
    over = rates[rates["gbs"] > copy].sort_values("gbs", ascending=False)
    cached = over[over["gbs"] > peak] if peak else over.iloc[:0]
    reads = over[~over["op"].isin(cached["op"])]
    return {"flops_over": flops_over,
            "cached": list(dict.fromkeys(cached["op"])),
            "cached_gbs": three_figures(cached["gbs"].max())
            if len(cached) else None,
            "reads": list(dict.fromkeys(reads["op"])),
            "peak_gbs": peak and three_figures(peak)}
