"""Pictures of the book's ideas, drawn with matplotlib from parameters:
which addresses a warp reads, a loop's launches on a timeline, a device
mesh, a ring, and a pipeline schedule.

Each function returns its figure, so a chapter can show it and a test can
read what was drawn. Where a picture carries measured numbers (the
timeline's step lengths), the caller passes them and the title says where
they came from.
"""

from __future__ import annotations

import itertools

from typing import Any, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

from helpers.page.plots import BOOK_STYLE

READ = "#1f77b4"      # an address a lane reads
FETCHED = "#c6dbef"   # a sector the memory system fetches for it
IDLE = "0.85"


def warp_reads(k: int, lanes: int = 8, sector_floats: int = 8) -> Any:
    """Which float32 addresses the first load of ``lanes`` threads touches
    in a row-major (rows, K) array, under the two ways XLA:GPU emits a
    row reduction.

    Top: one thread per row (``kLoop``): lane i reads address i K, so the
    lanes' reads land K apart, each in a sector of its own. Bottom: the
    lanes share a row (``kInput``): they read neighbouring addresses, and
    one sector serves several lanes. The titles count the bytes fetched
    for the bytes used.

    Args:
        k: the row length K.
        lanes: how many lanes to draw (a warp has 32).
        sector_floats: floats per memory sector (32 bytes: 8 float32s).
    """
    if k < 1 or lanes < 1 or sector_floats < 1:
        raise ValueError(f"k, lanes and sector_floats must be positive, "
                         f"got {k}, {lanes}, {sector_floats}.")
    patterns = {"one thread per row (kLoop)": [i * k for i in range(lanes)],
                "a row shared by the lanes (kInput)": list(range(lanes))}
    width = lanes * k if lanes > 1 else k
    with mpl.rc_context(BOOK_STYLE):
        fig, axes = plt.subplots(2, 1, figsize=(7.5, 2.6),
                                 layout="constrained")
        for ax, (name, addresses) in zip(axes, patterns.items()):
            sectors = {a // sector_floats for a in addresses}
            for sector in sectors:
                ax.add_patch(Rectangle((sector * sector_floats, 0),
                                       sector_floats, 1, color=FETCHED))
            for lane, address in enumerate(addresses):
                ax.add_patch(Rectangle((address, 0), 1, 1, color=READ))
                apart = lane == 0 or address - addresses[lane - 1] >= 4
                if lanes <= 16 and apart:  # neighbours' numbers collide
                    ax.text(address + 0.5, 1.15, str(lane), ha="center",
                            fontsize="x-small")
            if addresses[-1] - addresses[0] == lanes - 1:
                ax.text(lanes + 1, 0.35, f"lanes 0 to {lanes - 1}",
                        fontsize="x-small")
            fetched = len(sectors) * sector_floats * 4
            ax.set(xlim=(0, width), ylim=(0, 1.5), yticks=[],
                   title=f"{name}: {fetched} bytes fetched for "
                         f"{lanes * 4} used")
            ax.set_xticks(np.arange(0, width + 1, sector_floats * max(
                1, width // (sector_floats * 12))))
            ax.grid(False)
        axes[-1].set_xlabel(f"float32 address in a (rows, K = {k}) array; "
                            f"numbers are lanes, pale blocks the "
                            f"{sector_floats * 4}-byte sectors fetched")
    return fig


def launch_timeline(kernels_per_step: int, step_us: dict[str, float], *,
                    steps: int = 3, source: str = "") -> Any:
    """A loop's steps on a host row and a device row, once per setting.

    ``step_us`` maps a setting ("graphs off", "CUDA graph") to the
    measured microseconds one step takes; each step is drawn that long,
    with ``kernels_per_step`` kernels in it. Launched one by one, the host
    issues every kernel; as a CUDA graph, it issues one launch per step.
    Kernel widths are schematic: the point is the gaps between them.

    Args:
        kernels_per_step: kernels one step launches.
        step_us: ``{setting: µs per step}``; a setting whose name contains
            "graph" but not "off" is drawn as one graph launch per step.
        steps: how many steps to draw.
        source: where the step lengths come from, for the title.
    """
    if kernels_per_step < 1 or not step_us or min(step_us.values()) <= 0:
        raise ValueError("need at least one kernel per step and positive "
                         f"step times; got {kernels_per_step}, {step_us}.")
    longest = max(step_us.values()) * steps
    with mpl.rc_context(BOOK_STYLE):
        fig, axes = plt.subplots(len(step_us), 1, sharex=True,
                                 figsize=(7.5, 1.5 + 1.1 * len(step_us)),
                                 layout="constrained", squeeze=False)
        for ax, (setting, step) in zip(axes[:, 0], step_us.items()):
            graph = "graph" in setting and "off" not in setting
            _draw_steps(ax, kernels_per_step, step, steps, graph)
            ax.set(yticks=[0.5, 1.5], yticklabels=["device", "host"],
                   ylim=(0, 2.1), xlim=(0, longest * 1.02),
                   title=f"{setting}: {step:.3g} µs per step")
            ax.grid(False)
        axes[-1, 0].set_xlabel("time (µs)" + (f"; step lengths: {source}"
                                               if source else ""))
    return fig


def _draw_steps(ax: Any, kernels: int, step: float, steps: int,
                graph: bool) -> None:
    kernel = step / (kernels + 1) * 0.35  # schematic width
    for s in range(steps):
        start = s * step
        ax.axvline(start, color="0.7", linewidth=0.8)
        launches = [start] if graph else [
            start + i * step / (kernels + 1) for i in range(kernels)]
        for at in launches:
            ax.add_patch(Rectangle((at, 1.15), step * 0.04, 0.6,
                                   color="tab:orange"))
        for i in range(kernels):
            at = start + (i + 1) * step / (kernels + 1)
            ax.add_patch(Rectangle((at, 0.2), kernel, 0.6, color=READ))
        ax.add_patch(Rectangle((start, 0.2), step, 0.6, color=IDLE,
                               zorder=0))


def mesh(shape: tuple[int, int], axis_names: tuple[str, str]) -> Any:
    """A 2D device mesh: devices numbered row by row, each axis named,
    and the groups a collective over each axis spans.

    Example: ``mesh((2, 4), ("data", "model"))``: a collective over
    ``model`` runs within each row, one over ``data`` within each column.
    """
    rows, cols = shape
    if rows < 1 or cols < 1 or len(axis_names) != 2:
        raise ValueError(f"need a (rows, cols) shape and two axis names, "
                         f"got {shape} and {axis_names}.")
    with mpl.rc_context(BOOK_STYLE):
        fig, ax = plt.subplots(figsize=(1.3 * cols + 2, 1.3 * rows + 1),
                               layout="constrained")
        for r in range(rows):
            ax.add_patch(Rectangle((-0.45, r - 0.3), cols - 0.1, 0.6,
                                   color=FETCHED, zorder=0))
            for c in range(cols):
                ax.add_patch(Rectangle((c - 0.3, r - 0.25), 0.6, 0.5,
                                       color=READ))
                ax.text(c, r, f"GPU {r * cols + c}", ha="center",
                        va="center", color="white", fontsize="small")
        ax.annotate("", (cols - 0.4, rows - 0.3), (-0.4, rows - 0.3),
                    arrowprops={"arrowstyle": "<->"})
        ax.text((cols - 1) / 2, rows - 0.2, f"axis '{axis_names[1]}' "
                f"({cols}): one shaded row is one group", ha="center")
        ax.annotate("", (-0.7, rows - 0.7), (-0.7, -0.3),
                    arrowprops={"arrowstyle": "<->"})
        ax.text(-0.85, (rows - 1) / 2, f"axis '{axis_names[0]}' ({rows})",
                rotation=90, ha="center", va="center")
        ax.set(xlim=(-1.1, cols), ylim=(rows, -0.7), aspect="equal")
        ax.axis("off")
    return fig


def ring(devices: int) -> Any:
    """Devices on a ring, each sending to the next: the pattern of a ring
    all-reduce's 2 (p - 1) steps and of a pipeline's collective permute."""
    if devices < 2:
        raise ValueError(f"a ring needs at least 2 devices, got {devices}.")
    angles = np.pi / 2 - 2 * np.pi * np.arange(devices) / devices
    points = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    with mpl.rc_context(BOOK_STYLE):
        fig, ax = plt.subplots(figsize=(3.6, 3.6), layout="constrained")
        for i, (x, y) in enumerate(points):
            ax.add_patch(plt.Circle((x, y), 0.16, color=READ))
            ax.text(x, y, str(i), ha="center", va="center", color="white")
            nx, ny = points[(i + 1) % devices]
            ax.add_patch(FancyArrowPatch(
                (x, y), (nx, ny), shrinkA=14, shrinkB=14,
                connectionstyle="arc3,rad=-0.2", arrowstyle="-|>",
                mutation_scale=12, color="0.3"))
        ax.set(xlim=(-1.4, 1.4), ylim=(-1.4, 1.4), aspect="equal",
               title=f"a ring of {devices} devices: at each step,\n"
                     "every one sends 1/p of the buffer to the next")
        ax.title.set_fontsize("small")
        ax.axis("off")
    return fig


def pipeline_schedule(stages: int, microbatches: int,
                      labels: Sequence[str] | None = None,
                      repeats: int = 1) -> Any:
    """A pipeline's forward schedule: stage s works on microbatch m at
    step s + m; the empty corners are the *bubble*, (stages - 1) of every
    repeats x microbatches + stages - 1 steps per stage.

    With ``repeats`` > 1 the pipeline is *circular*: the last stage hands
    each microbatch back to the first, and trip r of microbatch m reaches
    stage s at step r x microbatches + m + s (later trips hatched). That
    needs at least as many microbatches as stages, or a returning
    microbatch would find stage 0 busy.
    """
    if stages < 1 or microbatches < 1 or repeats < 1:
        raise ValueError(f"need stages, microbatches and repeats >= 1, got "
                         f"{stages}, {microbatches} and {repeats}.")
    if repeats > 1 and microbatches < stages:
        raise ValueError(f"a circular pipeline needs microbatches >= stages "
                         f"({microbatches} < {stages}): a microbatch coming "
                         "back would find stage 0 still busy.")
    total = repeats * microbatches + stages - 1
    colors = plt.get_cmap("tab10")
    with mpl.rc_context(BOOK_STYLE):
        fig, ax = plt.subplots(figsize=(max(7.5, 0.55 * total),
                                        0.6 * stages + 1.2),
                               layout="constrained")
        busy = 0  # steps stage 0 works, counted as they are drawn
        for s, m, r in itertools.product(range(stages), range(microbatches),
                                         range(repeats)):
            step = r * microbatches + m + s
            busy += s == 0
            ax.add_patch(Rectangle((step, s), 0.95, 0.9,
                                   facecolor=colors(m % 10),
                                   hatch="//" if r else None,
                                   edgecolor="white"))
            # a later trip's label sits on a patch of its colour, clear
            # of the hatching
            ax.text(step + 0.47, s + 0.45, f"mb {m}", ha="center",
                    va="center", color="white", fontsize="small",
                    bbox={"facecolor": colors(m % 10), "edgecolor": "none",
                          "pad": 1} if r else None)
        bubble = 1 - busy / total  # every stage idles as long as stage 0
        trips = (f", {repeats} trips around the ring (later ones hatched)"
                 if repeats > 1 else "")
        ax.set(xlim=(0, total), ylim=(stages, 0), xlabel="step",
               yticks=np.arange(stages) + 0.45,
               yticklabels=labels or [f"stage {s}" for s in range(stages)],
               title=f"{stages} stages, {microbatches} microbatches{trips}: "
                     f"each stage idles {bubble:.0%} of the steps")
        ax.grid(False)
    return fig
