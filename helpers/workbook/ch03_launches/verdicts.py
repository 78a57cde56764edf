"""Chapter 3's sentences about the reference GPU, computed from its data.

The chapter's recordings (``03_launches/variants``, ``unroll``,
``command_buffers``, ``goals``) are read here, with what XLA:GPU compiles
for an H100 on this machine (which loop bodies become CUDA graphs:
`helpers.workbook.ch03_launches.for_h100.graphs_on_gpu`). Each function
returns a paragraph or a table; every judgement in it (a graph or none,
faster or slower, a goal met or not) is computed from the numbers, and the
unit tests give each one opposite outcomes.

A loop's time of record is the wall clock of a blocked call over its 8000 steps
(`helpers.workbook.ch03_launches.variants.measure` says why); recordings since
the first H100 visit add the device's kernel time, kernel count and CUDA-graph
share per step from profiled calls, and the fused kernels' device time.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import prose
from helpers.workbook.ch03_launches import predictions

# A setting or variant is "faster" or "slower" than another only beyond
# this ratio; within it, the two are the same.
SAME = 1.10
# Loops compared for the CUDA-graph story: the thread's loop also waits
# for the host every step, and the fused loop has no loop to launch.
GRAPH_VARIANTS = ("while, static bound", "scan, split per step",
                  "scan, noise outside", "scan, softplus hoisted")


def variants_table(data: dict[str, Any]) -> pd.DataFrame:
    """One row per variant and dtype: µs per step on the GPU and on its
    host's CPU (wall clock), kernels per step counted in a profile, and,
    where recorded, the kernels' own µs per step and the share of them
    that ran inside a CUDA graph."""
    gpu = pd.DataFrame(data["gpu"])
    cpu = pd.DataFrame(data["cpu"])
    table = gpu.merge(cpu[["variant", "dtype", "us_per_step"]],
                      on=["variant", "dtype"], how="left",
                      suffixes=(" GPU", " CPU"))
    if "kernels_per_step" not in table:  # the first recording
        counts = next(iter(data["profiled_launches_per_step"].values()))
        table["kernels_per_step"] = table["variant"].map(counts)
        table["kernel_us_per_step"] = None
        table["in_graph"] = None
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


def graph_story(table: pd.DataFrame, compiled: dict[str, bool | None],
                min_graph_size: Any, gpu: str) -> str | None:
    """Whether the loops whose body runs as one CUDA graph take less time
    a step than those launched kernel by kernel, whatever their count of
    kernels."""
    graphs = in_graph(table, compiled)
    rows = _float32(table)
    with_graph = [n for n, g in graphs.items() if g]
    without = [n for n, g in graphs.items() if not g]
    if not graphs:
        return None
    if not with_graph or not without:
        times = rows.loc[list(graphs), "us_per_step GPU"].astype(float)
        return (f"On the {gpu}, {'every' if with_graph else 'no'} loop "
                f"body ran as one CUDA graph; the loops took "
                f"{times.min():.3g} to {times.max():.3g} µs a step.")

    def span(names: list[str], column: str) -> tuple[float, float]:
        values = rows.loc[names, column].astype(float)
        return float(values.min()), float(values.max())

    fast, slow = span(with_graph, "us_per_step GPU"), span(
        without, "us_per_step GPU")
    kernels_in, kernels_out = (span(with_graph, "launches_per_step"),
                               span(without, "launches_per_step"))
    text = (f"On the {gpu}, the loops whose body runs as one CUDA graph "
            f"({names(with_graph)}) took {fast[0]:.3g} to {fast[1]:.3g} µs "
            f"a step, launching {kernels_in[1]:.0f} kernels; those whose "
            f"body is launched kernel by kernel ({names(without)}) took "
            f"{slow[0]:.3g} to {slow[1]:.3g} µs, launching "
            f"{kernels_out[1]:.0f}.")
    if slow[0] > fast[1] * SAME and kernels_out[1] <= kernels_in[0]:
        return text + (
            " Fewer kernels, and yet slower: XLA:GPU puts a sequence into "
            f"a graph only from {min_graph_size} steps "
            "(`--xla_gpu_graph_min_graph_size`), so the shorter bodies "
            "lost their graph, and each of their kernels pays a launch.")
    if slow[0] > fast[1] * SAME:
        return text + (" The graphs made the difference: one launch a "
                       "step instead of one per kernel.")
    return text + (" The graph made no difference a step here: launches "
                   "are not what sets these loops' time on this GPU.")


def names(variants: list[str]) -> str:
    """Variant names as the text writes them: *a*, *b* and *c*."""
    return prose.and_list(f"*{name}*" for name in variants)


def graphs_compiled(rows: dict[str, list[dict[str, Any]]],
                    min_graph_size: Any) -> str | None:
    """Which loop bodies XLA:GPU makes one CUDA graph for an H100, by
    default and with the minimum graph size at 1 (``rows``: setting to
    `helpers.workbook.ch03_launches.for_h100.graphs_on_gpu` rows)."""
    def split(setting: str) -> tuple[list[str], list[dict[str, Any]]]:
        loops = [r for r in rows[setting] if r["body is a CUDA graph"]
                 is not None]
        return ([r["variant"] for r in loops if r["body is a CUDA graph"]],
                [r for r in loops if not r["body is a CUDA graph"]])

    graphs, loose = split("default")
    if not loose:
        text = ("For the H100, XLA:GPU runs every loop body as one CUDA "
                "graph.")
    else:
        steps = sorted({int(r["body steps"]) for r in loose})
        text = (f"For the H100, XLA:GPU runs the body of "
                f"{names(graphs) or 'no loop'} as one CUDA graph, and "
                f"launches the steps of {names([r['variant'] for r in loose])}"
                f" ({' or '.join(map(str, steps))} a body) one by one: "
                f"fewer than the {min_graph_size} a graph needs.")
    if "minimum 1" in rows:
        graphs_1, loose_1 = split("minimum 1")
        text += (" With the minimum at 1, every loop body is a graph."
                 if not loose_1 else
                 f" With the minimum at 1, {names(graphs_1)} are graphs.")
    return text


def _time(rows: pd.DataFrame, name: str) -> float | None:
    return (float(rows.loc[name, "us_per_step GPU"])
            if name in rows.index else None)


def round_trip(table: pd.DataFrame, gpu: str) -> str | None:
    """The thread's loop against the same loop with a static trip count:
    the difference is the condition's round trip to the host."""
    rows = _float32(table)
    traced, static = (_time(rows, "while, traced bound"),
                      _time(rows, "while, static bound"))
    fused = _time(rows, "fused_scan (one kernel)")
    if traced is None or static is None or fused is None:
        return None
    if traced > static * SAME:
        verdict = (f"the difference, {traced - static:.3g} µs a step, is "
                   "the predicate's round trip to the host")
    else:
        verdict = ("no difference: on this GPU the condition's round trip "
                   "costs nothing measurable")
    return (f"On the {gpu} the thread's program takes {traced:.3g} µs per "
            f"step, and {static:.3g} µs once the trip count is static: "
            f"{verdict}. Inside one kernel a step costs {fused:.3g} µs "
            "(by the wall clock of the whole call).")


def hoisting(table: pd.DataFrame, gpu: str,
             graphs: dict[str, bool]) -> str | None:
    """What drawing the noise before the loop did to a step on the
    reference GPU, for the closing list, and whether the body lost its
    CUDA graph on the way (``graphs`` as `in_graph` gives it)."""
    rows = _float32(table)
    split, outside = (_time(rows, "scan, split per step"),
                      _time(rows, "scan, noise outside"))
    if split is None or outside is None:
        return None
    if outside <= split * SAME:
        return (f"On the {gpu} it took a step from {split:.3g} to "
                f"{outside:.3g} µs.")
    lost = (graphs.get("scan, split per step") is True
            and graphs.get("scan, noise outside") is False)
    why = (": the smaller body lost its CUDA graph, so check the graph "
           "after hoisting" if lost else ", so time a hoist before "
           "keeping it")
    return (f"On the {gpu}, though, drawing the noise outside made a step "
            f"slower ({split:.3g} → {outside:.3g} µs){why}.")


def unroll_story(rows: list[dict[str, Any]], min_graph_size: Any,
                 gpu: str) -> str | None:
    """Where unrolling gained most, and whether that is where the loop's
    body reached the size XLA:GPU puts into a CUDA graph."""
    frame = pd.DataFrame(rows).sort_values("unroll")
    frame["per iteration"] = frame["launches_per_step"] * frame["unroll"]
    drops = frame["us_per_step"].shift(1) / frame["us_per_step"]
    if len(frame) < 2 or drops.isna().all():
        return None
    at = int(drops.idxmax())
    before, after = frame.loc[at - 1], frame.loc[at]
    text = (f"On the {gpu}, the largest gain came from unroll "
            f"{before['unroll']:.0f} to {after['unroll']:.0f}: "
            f"{before['us_per_step']:.3g} to {after['us_per_step']:.3g} µs "
            f"a step ({drops[at]:.1f} times), while the body grew from "
            f"{before['per iteration']:.0f} to "
            f"{after['per iteration']:.0f} kernels.")
    try:
        size = int(min_graph_size)
    except (TypeError, ValueError):
        return text
    if before["per iteration"] < size <= after["per iteration"]:
        return text + (f" That is where the body reached {size} steps, the "
                       "fewest XLA:GPU puts into a CUDA graph: the gain is "
                       "the graph's, not the unrolling's.")
    return text + (f" The body was on the same side of the {size}-step "
                   "threshold for CUDA graphs before and after, so the "
                   "gain is the unrolling's own.")


def _seconds(table: dict[str, Any], name: str) -> float | None:
    value = table.get(name)
    return float(value) if isinstance(value, (int, float)) else None


def best_fused(data: dict[str, Any]) -> tuple[str, float, str] | None:
    """The fastest one-chain fused kernel: its name, seconds and clock
    (device time where recorded, else the wall clock)."""
    device = data.get("device_s", {})
    clock = "device" if device else "wall"
    source = device if device else data["one_chain_s"]
    found = [(name, seconds) for name in ("gpu fused_scan",
                                          "gpu fused_scan, triton")
             if (seconds := _seconds(source, name)) is not None]
    if not found:
        return None
    name, seconds = min(found, key=lambda item: item[1])
    return name, seconds, clock


def one_chain(data: dict[str, Any], gpu: str,
              host_part_us: float | None = None) -> str | None:
    """The one-chain goal: the best fused kernel against the CPU's best
    jitted loop, and the floor a step pays inside one kernel.

    Args:
        data: a ``03_launches/goals`` recording.
        gpu: the device's name.
        host_part_us: the host's part of a blocked call on the same GPU
            (chapter 1's recording), to read a wall-clock time against.
    """
    best = best_fused(data)
    cpu = _seconds(data["one_chain_s"], "cpu scan, softplus hoisted")
    if best is None or cpu is None:
        return None
    (name, gpu_s, clock), steps = best, data["steps"]
    wall = _seconds(data["one_chain_s"], name)
    text = (f"**One chain**, on the {gpu}: by "
            f"{'device time' if clock == 'device' else 'the wall clock'} a "
            "step of the best fused kernel ("
            f"{'Triton' if name.endswith('triton') else 'Mosaic GPU'}) takes "
            f"{gpu_s / steps * 1e9:.3g} ns, {gpu_s / cpu:.2f} times the "
            f"{cpu / steps * 1e9:.3g} ns of the CPU's jitted scan: the goal "
            "(no slower than the CPU) is "
            f"{'met' if gpu_s <= cpu else 'not met'}.")
    if clock == "device" and wall is not None:
        text += (" By the wall clock, which adds the host's part of the "
                 f"call, it is {wall / cpu:.2f} times the CPU's.")
    elif clock == "wall" and host_part_us is not None:
        net = predictions.net_step_s(gpu_s, steps, host_part_us)
        outcome = ("the goal is met either way" if gpu_s <= cpu else
                   "the goal would be met, so only device time can settle "
                   "it" if net <= cpu / steps else "the goal is still not "
                   "met")
        text += (" The wall clock includes the host's part of the GPU call. "
                 f"Less chapter 1's estimate of that part ({host_part_us:.0f}"
                 " µs a blocked call, measured on another program), a step "
                 f"takes about {net * 1e9:.3g} ns, {net * steps / cpu:.2f} "
                 f"times the CPU's: {outcome}.")
    return text + " " + _floor(data, steps, host_part_us)


def _floor(data: dict[str, Any], steps: int,
           host_part_us: float | None) -> str:
    """What a one-multiply-add step costs inside one kernel."""
    device = _seconds(data.get("device_s", {}), "trivial fused")
    if device is not None:
        return (f"A fused loop whose step is one multiply-add takes "
                f"{device / steps * 1e9:.3g} ns a step by device time: the "
                "latency floor of a chain of dependent steps in one kernel "
                "on this GPU.")
    wall = _seconds(data, "trivial_fused_s")
    if wall is None:
        return ""
    text = (f"A fused loop whose step is one multiply-add took "
            f"{wall * 1e3:.3g} ms for the whole call by the wall clock")
    if host_part_us is None:
        return text + "."
    net = predictions.net_step_s(wall, steps, host_part_us)
    return text + (f"; less the host's part, about {net * 1e9:.3g} ns a "
                   "step: the floor the prediction above charged each "
                   "operation.")


def many_chains(data: dict[str, Any], gpu: str) -> str | None:
    """The many-chains goal: 10,000 chains on the GPU (best layout)
    against the CPU, and what the layout changes."""
    many = data["many_chains_s"]
    cpu = _seconds(many, "cpu scan, softplus hoisted")
    layouts = {name: _seconds(many, name) for name in (
        "gpu fused, 64 chains per program", "gpu fused, one chain per thread")}
    side = [s for s in layouts.values() if s is not None]
    vmap = _seconds(many, "gpu fused_scan")
    if cpu is None or not side:
        return None
    speedup = cpu / min(side)
    text = (f"**Many chains**: with {data['chains']:,} chains the GPU's best "
            f"layout is {speedup:.0f} times faster than the CPU, so the "
            f"goal of 50 is {'met' if speedup >= 50 else 'not met'} (by the "
            "wall clock, which only adds to the GPU's time).")
    if vmap is not None:
        text += (f" `jax.vmap` of the fused loop, one program per chain, "
                 f"takes {vmap / min(side):.1f} times as long as the better "
                 "side-by-side layout.")
    return text
