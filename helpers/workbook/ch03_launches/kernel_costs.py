"""Chapter 3 (Kernel launches): what a kernel costs a step, predicted for
CUDA graphs and for one kernel before the chapter shows their timings.

Both predictions read the timing section's recording (``03_launches/
variants``, float32) as `helpers.workbook.ch03_launches.verdicts.
variants_table` tables it:

- CUDA graphs: a loop's µs a step over its kernels a step is what one of
  its kernels costs, launched one by one or inside a graph. Swap the way
  two loops are launched and each should take its own kernels at the
  other's price (``graphs``); the ``03_launches/command_buffers``
  recording says whether it did (``graphs_held``).
- One kernel: the profile splits a step into the time its kernels ran and
  the rest. One kernel for the whole loop removes the rest, so it should
  be faster by at least the step's time over its kernels' time
  (``one_kernel``); the same recording's fused loop says whether it was
  (``one_kernel_held``).

Every sentence is computed from the numbers, and the unit tests give each
one opposite outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from helpers.page import arithmetic
from helpers.workbook.ch03_launches import verdicts

# A prediction held when the measurement is within this range of it, as
# for the unroll model (`predictions.unroll_verdict`).
HELD = (0.8, 1.25)
# The loop `fused_scan` runs in one kernel: the same step, launched.
FUSED_LOOP = "scan, softplus hoisted"
FUSED = "fused_scan (one kernel)"
# The settings of the command-buffer recording the prediction is for.
GRAPHS_OFF, ANY_SIZE = "graphs off", "smallest graphs"


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["dtype"] == "float32"].set_index("variant")


@dataclass(frozen=True)
class GraphPrediction:
    """Two loops launched the other way round: ``graph_loop`` (a body run
    as one CUDA graph by default) with graphs off, and ``loose_loop``
    (launched kernel by kernel by default) with graphs of any size."""

    graph_loop: str
    loose_loop: str
    graphs_off: arithmetic.Worked
    any_size: arithmetic.Worked

    def markdown(self) -> str:
        """The premise in words, then the two worked lines."""
        return "\n\n".join([
            f"In the timing section's table, *{self.graph_loop}* (call it "
            f"G) runs its body as one CUDA graph, and *{self.loose_loop}* "
            "(L) launches its kernels one by one; $t$ is a loop's µs a "
            "step and $n$ its kernels a step. With graphs off, G's kernels "
            "should each cost what one of L's costs; with graphs of any "
            "size, L's should each cost what one of G's costs:",
            self.graphs_off.markdown(), self.any_size.markdown()])


def graphs(table: pd.DataFrame, graph_bodies: dict[str, bool],
           measured: list[str]) -> GraphPrediction | None:
    """Predict two loops' µs a step with their way of launching swapped.

    Args:
        table: the timing section's recording, as `verdicts.variants_table`
            gives it.
        graph_bodies: whether each loop's body ran as one CUDA graph by
            default (`verdicts.in_graph`).
        measured: the loops the command-buffer recording times, in order.

    Returns:
        The prediction, or None when no measured loop is a graph or none
        is launched kernel by kernel.
    """
    rows = _rows(table)
    shared = [n for n in measured if n in rows.index and n in graph_bodies]
    graph = [n for n in shared if graph_bodies[n]]
    loose = [n for n in shared if not graph_bodies[n]]
    if not graph or not loose:
        return None
    q = arithmetic.quantity

    def named(name: str, letter: str) -> dict[str, arithmetic.Quantity]:
        row = rows.loc[name]
        return {f"t_{letter}": q(f"t_{letter}", float(row["us_per_step GPU"])
                                 * 1e-6, "µs", 1e-6),
                f"n_{letter}": q(f"n_{letter}",
                                 float(row["launches_per_step"]))}

    g, ell = named(graph[0], "G"), named(loose[0], "L")
    off = arithmetic.worked(r"t_\text{G, graphs off}", "n_G * t_L / n_L",
                            unit="µs", per_unit=1e-6, **g, **ell)
    size = arithmetic.worked(r"t_\text{L, any size}", "n_L * t_G / n_G",
                             unit="µs", per_unit=1e-6, **g, **ell)
    return GraphPrediction(graph[0], loose[0], off, size)


def graphs_held(prediction: GraphPrediction,
                data: dict[str, list[dict[str, Any]]]) -> str | None:
    """Whether the graph prediction held, from a
    ``03_launches/command_buffers`` recording; None when it lacks a
    setting or loop the prediction is for."""
    def us(setting: str, loop: str) -> float | None:
        found = [r["us_per_step"] for r in data.get(setting, [])
                 if r["variant"] == loop and r["dtype"] == "float32"]
        return float(found[0]) if found else None

    off = us(GRAPHS_OFF, prediction.graph_loop)
    size = us(ANY_SIZE, prediction.loose_loop)
    if off is None or size is None:
        return None
    want_off = prediction.graphs_off.value * 1e6
    want_size = prediction.any_size.value * 1e6
    held = [HELD[0] <= got / want <= HELD[1]
            for got, want in ((off, want_off), (size, want_size))]
    text = (f"With graphs off, *{prediction.graph_loop}* took {off:.3g} µs "
            f"a step, {off / want_off:.2f} times the predicted "
            f"{want_off:.3g} µs; with graphs of any size, "
            f"*{prediction.loose_loop}* took {size:.3g} µs, "
            f"{size / want_size:.2f} times the predicted {want_size:.3g} "
            "µs. ")
    if all(held):
        return text + ("Both predictions held (within 25%): a kernel's "
                       "price is set by how it is launched, one by one or "
                       "inside a graph, not by the loop it belongs to.")
    if not any(held):
        return text + ("Neither prediction held (within 25%): how a kernel "
                       "is launched does not alone set its price; these "
                       "loops' kernels differ in more than that.")
    return text + ("The prediction for graphs off "
                   + ("held" if held[0] else "missed") + " and the one for "
                   "graphs of any size " + ("held" if held[1] else "missed")
                   + " (within 25%).")


def repeat_spread(table: pd.DataFrame,
                  data: dict[str, list[dict[str, Any]]]) -> str | None:
    """How far the command-buffer recording's default setting, a run of
    its own, is from the timing section's times for the same loops."""
    rows = _rows(table)
    default = {r["variant"]: float(r["us_per_step"])
               for r in data.get("default", []) if r["dtype"] == "float32"
               and r["variant"] in rows.index}
    if not default:
        return None
    earlier = {n: float(rows.loc[n, "us_per_step GPU"]) for n in default}
    apart = {n: abs(default[n] / earlier[n] - 1) for n in default}
    worst = max(apart, key=lambda n: apart[n])
    margin = verdicts.SAME - 1
    text = (f"The default setting ran the timing section's loops again, in "
            f"a run of its own: the two runs differ by up to "
            f"{apart[worst]:.0%} a step (*{worst}*: {default[worst]:.3g} "
            f"µs in this run, {earlier[worst]:.3g} µs in the timing "
            "section's), ")
    if apart[worst] <= margin:
        return text + (f"within the {margin:.0%} this chapter counts as "
                       "the same, so the prediction's numbers and these "
                       "can be read side by side.")
    return text + (f"more than the {margin:.0%} this chapter counts as the "
                   "same, so compare the settings within this table rather "
                   "than with the timing section's.")


def one_kernel(table: pd.DataFrame) -> arithmetic.Worked | None:
    """How many times faster one kernel for the whole loop should be than
    the same loop launched kernel by kernel, at least: the step's wall
    clock over its kernels' own time. None when the recording has no
    kernel time (the first H100 visit's)."""
    rows = _rows(table)
    if FUSED_LOOP not in rows.index:
        return None
    kernels = rows.loc[FUSED_LOOP, "kernel_us_per_step"]
    if kernels is None or kernels != kernels or kernels <= 0:
        return None
    q = arithmetic.quantity
    return arithmetic.worked(
        "S", "step / kernels",
        step=q(r"t_\text{step}",
               float(rows.loc[FUSED_LOOP, "us_per_step GPU"]) * 1e-6, "µs",
               1e-6),
        kernels=q(r"t_\text{kernels}", float(kernels) * 1e-6, "µs", 1e-6))


def one_kernel_held(table: pd.DataFrame, speedup: arithmetic.Worked,
                    gpu: str) -> str | None:
    """Whether one kernel was at least ``speedup`` times faster than its
    loop launched kernel by kernel, and, where it was far faster, what
    that says about a small kernel's time."""
    rows = _rows(table)
    if FUSED not in rows.index or FUSED_LOOP not in rows.index:
        return None
    fused = rows.loc[FUSED]
    step = float(rows.loc[FUSED_LOOP, "us_per_step GPU"])
    kernels = float(rows.loc[FUSED_LOOP, "kernel_us_per_step"])
    got = step / float(fused["us_per_step GPU"])
    text = (f"On the {gpu}, in the same recording, one kernel took "
            f"{fused['us_per_step GPU']:.3g} µs a step by the wall clock, "
            f"{got:.3g} times faster than *{FUSED_LOOP}*: the prediction "
            f"of at least {speedup.value:.3g} times "
            + ("missed" if got < speedup.value else "held, by far"
               if got >= 2 * speedup.value else "held") + ".")
    device = fused["kernel_us_per_step"]
    if device is None or device != device:
        return text
    text += (f" By the device's clock its step took {float(device):.3g} µs, "
             f"where the loop's separate kernels ran {kernels:.3g} µs a "
             "step")
    if float(device) * 2 <= kernels:
        return text + (": most of a small kernel's time is not the step's "
                       "arithmetic but the kernel's fixed costs (starting, "
                       "reading its inputs from memory, writing its "
                       "result), which one kernel pays once for the whole "
                       "loop.")
    if float(device) <= kernels * verdicts.SAME:
        return text + (": inside one kernel the step's work took about as "
                       "long as in separate kernels, so what one kernel "
                       "saved is the launches.")
    return text + (": inside one kernel the step's work took longer than "
                   "in separate kernels, which the launches it saved "
                   "more than made up for." if got >= 1 else
                   ": inside one kernel the step's work took longer than "
                   "in separate kernels, more than the launches it saved.")
