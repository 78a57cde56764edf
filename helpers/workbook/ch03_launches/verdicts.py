"""Chapter 3's numbers about the reference GPU, read from its data.

The chapter's recordings (``03_launches/variants``, ``unroll``,
``command_buffers``, ``goals``) are read here, with what XLA:GPU compiles
for an H100 on this machine (which loop bodies become CUDA graphs:
`helpers.workbook.ch03_launches.for_h100.graphs_for_gpu`). Each function
returns a table or the numbers one of the page's paragraphs quotes; the
page writes the sentences and checks each claim against these numbers
(`helpers.page.claims.check`).

A loop's time of record is the wall clock of a blocked call over its 8000 steps
(`helpers.workbook.ch03_launches.variants.measure` says why); beside it stand
the device's kernel time, kernel count and CUDA-graph share per step from
profiled calls, and the fused kernels' device time.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import prose
from helpers.workbook.ch03_launches.predictions import (
    LATENCY_KERNEL,
    PADDED_KERNEL,
)

# A setting or variant is "faster" or "slower" than another only beyond
# this ratio; within it, the two are the same.
SAME = 1.10
# Loops compared for the CUDA-graph story: the thread's loop also waits
# for the host every step, and the fused loop has no loop to launch.
GRAPH_VARIANTS = ("while, static bound", "scan, split per step",
                  "scan, noise outside", "scan, softplus hoisted")


def variants_table(data: dict[str, Any]) -> pd.DataFrame:
    """One row per variant and dtype: µs per step on the GPU and on its
    host's CPU (wall clock), and, from the GPU's profiled calls, kernels
    per step, the kernels' own µs per step and the share of them that ran
    inside a CUDA graph."""
    gpu = pd.DataFrame(data["gpu"])
    cpu = pd.DataFrame(data["cpu"])
    table = gpu.merge(cpu[["variant", "dtype", "us_per_step"]],
                      on=["variant", "dtype"], how="left",
                      suffixes=(" GPU", " CPU"))
    return table[["variant", "dtype", "us_per_step GPU", "us_per_step CPU",
                  "launches_per_step", "kernels_per_step",
                  "kernel_us_per_step", "in_graph"]]


def variants_for_page(table: pd.DataFrame) -> pd.DataFrame:
    """`variants_table`'s float32 rows as a page shows them: per step,
    short column names (``GPU µs``), none left empty in every row."""
    shown = _float32(table).drop(columns="dtype").dropna(axis=1, how="all")
    names = {"us_per_step GPU": "GPU µs", "us_per_step CPU": "CPU µs",
             "kernel_us_per_step": "kernel µs", "in_graph": "in a graph"}
    return shown.rename(columns=lambda c: names.get(c, c.replace(
        "us_per_step", "µs").replace("_per_step", "").replace("_", " ")))


def _float32(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["dtype"] == "float32"].set_index("variant")


def in_graph(table: pd.DataFrame, compiled: dict[str, bool | None]
             ) -> dict[str, bool]:
    """Whether each compared variant's loop body ran as a CUDA graph: the
    profiled share where recorded, else XLA:GPU's compilation for an H100
    here (``compiled``, variant: body is a graph)."""
    rows = _float32(table)
    found = {}
    for name in GRAPH_VARIANTS:
        share = rows.loc[name, "in_graph"] if name in rows.index else None
        if share is not None and share == share:
            found[name] = bool(share > 0.5)
        elif compiled.get(name) is not None:
            found[name] = bool(compiled[name])
    return found


def graph_split(rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Which loop bodies XLA:GPU makes one CUDA graph for an H100
    (``rows``: setting to `helpers.workbook.ch03_launches.for_h100.
    graphs_for_gpu` rows, ``'default'`` and ``'minimum 1'``): the graphed
    loops and the others as lists a sentence quotes (``graphs``,
    ``plain``), the steps of each plain body (``steps``, and
    ``plain_steps`` in words), and whether every body is a graph with the
    minimum at 1 (``all_at_1``)."""
    def split(setting: str) -> tuple[list[str], list[dict[str, Any]]]:
        loops = [r for r in rows[setting] if r["body is a CUDA graph"]
                 is not None]
        return ([r["variant"] for r in loops if r["body is a CUDA graph"]],
                [r for r in loops if not r["body is a CUDA graph"]])

    graphs, loose = split("default")
    steps = sorted({int(r["body steps"]) for r in loose})
    return {"graphs": prose.and_list(graphs),
            "plain": prose.and_list(r["variant"] for r in loose),
            "steps": steps, "plain_steps": " or ".join(map(str, steps)),
            "all_at_1": not split("minimum 1")[1]}


def _time(rows: pd.DataFrame, name: str) -> float | None:
    return (float(rows.loc[name, "us_per_step GPU"])
            if name in rows.index else None)


def _seconds(table: dict[str, Any], name: str) -> float | None:
    value = table.get(name)
    return float(value) if isinstance(value, (int, float)) else None


def _required(table: dict[str, Any], name: str) -> float:
    seconds = _seconds(table, name)
    if seconds is None:
        raise ValueError(f"the goals recording has no time for {name!r}.")
    return seconds


# The one-chain kernels `fused_scan` builds (Mosaic GPU, Triton), and
# those with chapter 3's latency kernel: the goal is judged on the best
# of all of them.
FUSED_SCAN_KERNELS = ("gpu fused_scan", PADDED_KERNEL)
ONE_CHAIN_KERNELS = (*FUSED_SCAN_KERNELS, LATENCY_KERNEL)


def best_fused(data: dict[str, Any],
               kernels: tuple[str, ...] = ONE_CHAIN_KERNELS
               ) -> tuple[str, float, str] | None:
    """The fastest of the one-chain ``kernels`` by device time: its name,
    seconds and clock (``'device'``); None where none of them ran."""
    found = [(name, seconds) for name in kernels
             if (seconds := _seconds(data["device_s"], name)) is not None]
    if not found:
        return None
    name, seconds = min(found, key=lambda item: item[1])
    return name, seconds, "device"


def step_numbers(table: pd.DataFrame) -> dict[str, float]:
    """The thread's loop a step (``traced_us``), the same loop with a
    static trip count (``static_us``), their difference, the condition's
    round trip (``round_trip_us``), and a step inside one kernel
    (``fused_us``), float32, µs by the wall clock of the whole call."""
    rows = _float32(table)
    traced, static = (_time(rows, "while, traced bound"),
                      _time(rows, "while, static bound"))
    fused = _time(rows, "fused_scan (one kernel)")
    if traced is None or static is None or fused is None:
        raise ValueError("the variants table lacks the thread's loop, its "
                         "static twin or the fused kernel.")
    return {"traced_us": traced, "static_us": static,
            "round_trip_us": traced - static, "fused_us": fused}


def graph_numbers(table: pd.DataFrame, compiled: dict[str, bool | None]
                  ) -> dict[str, Any]:
    """The loops whose body ran as one CUDA graph against those launched
    kernel by kernel (`in_graph`): each group's names as a sentence lists
    them (``graphed``, ``plain``), its µs a step, least and most
    (``graphed_low_us`` ...), and its kernels a step, most
    (``graphed_kernels``, ``plain_kernels``)."""
    graphs = in_graph(table, compiled)
    rows = _float32(table)
    out: dict[str, Any] = {}
    for group, members in (("graphed", [n for n, g in graphs.items() if g]),
                           ("plain", [n for n, g in graphs.items()
                                      if not g])):
        times = rows.loc[members, "us_per_step GPU"].astype(float)
        out[group] = prose.and_list(members)
        out[f"{group}_low_us"] = float(times.min()) if members else None
        out[f"{group}_high_us"] = float(times.max()) if members else None
        out[f"{group}_kernels"] = (float(rows.loc[members,
                                                  "launches_per_step"].max())
                                   if members else None)
    return out


def hoist_numbers(table: pd.DataFrame, graphs: dict[str, bool]
                  ) -> dict[str, Any]:
    """A step with the key split in the loop (``before_us``) and with the
    noise drawn before it (``after_us``), float32, and whether the body
    lost its CUDA graph on the way (``lost_graph``; ``graphs`` as
    `in_graph` gives them)."""
    rows = _float32(table)
    return {"before_us": _time(rows, "scan, split per step"),
            "after_us": _time(rows, "scan, noise outside"),
            "lost_graph": graphs.get("scan, split per step") is True
            and graphs.get("scan, noise outside") is False}


def chain_numbers(data: dict[str, Any],
                  kernels: tuple[str, ...] = ONE_CHAIN_KERNELS
                  ) -> dict[str, Any]:
    """The two goals from a ``03_launches/goals`` recording by device
    time: one chain's best fused kernel (its name, ``kernel``, and
    ``backend``, its ns a step by
    device time, ``one_ns``) against the CPU's jitted scan (``cpu_ns``),
    their ratio and the wall clock's (``one_ratio``, ``wall_ratio``), a
    one-multiply-add step's floor (``floor_ns``); and many chains: the
    best side-by-side layout's speed-up over the CPU (``many_speedup``)
    and vmap's time over that layout's (``vmap_over_side``)."""
    best = best_fused(data, kernels)
    if best is None:
        raise ValueError("the goals recording has no fused kernel's time.")
    name, gpu_s, clock = best
    steps = data["steps"]
    cpu = _required(data["one_chain_s"], "cpu scan, softplus hoisted")
    wall = _required(data["one_chain_s"], name)
    floor = _seconds(data["device_s"], "trivial fused")
    many = data["many_chains_s"]
    # the best side-by-side layout this GPU ran (a T4 runs neither)
    side = min((s for s in (
        _seconds(many, "gpu fused, 64 chains per program"),
        _seconds(many, "gpu fused, one chain per thread")) if s is not None),
        default=None)
    vmap = _seconds(many, "gpu fused_scan")
    return {"clock": clock, "kernel": name,
            "backend": "Triton" if name.endswith("triton") else "Mosaic GPU",
            "one_ns": gpu_s / steps * 1e9, "cpu_ns": cpu / steps * 1e9,
            "one_ratio": gpu_s / cpu, "wall_ratio": wall / cpu,
            "one_step_s": gpu_s / steps,
            "floor_ns": None if floor is None else floor / steps * 1e9,
            "chains": data["chains"],
            "many_speedup": None if side is None else
            _required(many, "cpu scan, softplus hoisted") / side,
            "vmap_over_side": None if vmap is None or side is None
            else vmap / side}
