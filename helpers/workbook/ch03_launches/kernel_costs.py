"""Chapter 3 (Kernel launches): what a kernel costs a step, predicted for
CUDA graphs and for one kernel before the chapter shows their timings.

Both predictions read the timing section's recording (``03_launches/
variants``, float32) as `helpers.workbook.ch03_launches.verdicts.
variants_table` tables it:

- CUDA graphs: a loop's µs a step over its kernels a step is what one of
  its kernels costs, launched one by one or inside a graph. Swap the way
  two loops are launched and each should take its own kernels at the
  other's price (``graphs``); the ``03_launches/command_buffers``
  recording says whether it did (``graph_numbers``).
- One kernel: the profile splits a step into the time its kernels ran and
  the rest. One kernel for the whole loop removes the rest, so it should
  be faster by at least the step's time over its kernels' time
  (``one_kernel``); the same recording's fused loop says whether it was
  (``one_kernel_numbers``).

The page writes the sentences and checks each claim against these numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from helpers.page import arithmetic

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


def one_kernel(table: pd.DataFrame) -> arithmetic.Worked | None:
    """How many times faster one kernel for the whole loop should be than
    the same loop launched kernel by kernel, at least: the step's wall
    clock over its kernels' own time. None when the table has no row
    for the loop or no positive kernel time for it."""
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


def graph_numbers(prediction: GraphPrediction, table: pd.DataFrame,
                  data: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The graph prediction against the ``03_launches/command_buffers``
    recording, and how far that recording's default run is from the
    timing section's (``table``): the loop furthest apart
    (``rerun_loop``), its two times and their share apart; the loop the
    prediction is for with graphs off (``off_loop``), its time, the
    prediction and their ratio; the same with graphs of any size
    (``any_*``)."""
    rows = _rows(table)
    default = {r["variant"]: float(r["us_per_step"])
               for r in data.get("default", []) if r["dtype"] == "float32"
               and r["variant"] in rows.index}
    earlier = {n: float(rows.loc[n, "us_per_step GPU"]) for n in default}
    apart = {n: abs(default[n] / earlier[n] - 1) for n in default}
    worst = max(apart, key=lambda n: apart[n])

    def us(setting: str, loop: str) -> float:
        return float(next(r["us_per_step"] for r in data[setting]
                          if r["variant"] == loop
                          and r["dtype"] == "float32"))

    off = us(GRAPHS_OFF, prediction.graph_loop)
    size = us(ANY_SIZE, prediction.loose_loop)
    want_off = prediction.graphs_off.value * 1e6
    want_size = prediction.any_size.value * 1e6
    return {"rerun_loop": worst, "rerun_us": default[worst],
            "earlier_us": earlier[worst], "rerun_apart": apart[worst],
            "off_loop": prediction.graph_loop, "off_us": off,
            "off_predicted_us": want_off, "off_ratio": off / want_off,
            "any_loop": prediction.loose_loop, "any_us": size,
            "any_predicted_us": want_size, "any_ratio": size / want_size}


def one_kernel_numbers(table: pd.DataFrame) -> dict[str, float]:
    """One kernel for the whole loop against its loop launched kernel by
    kernel, in the same recording: the kernel's step by the wall clock
    (``fused_us``), how many times faster (``faster``), and by the
    device's clock the kernel's step (``fused_device_us``) against the
    separate kernels' (``kernels_us``); and the fastest `lax.scan` of
    the recording's (``best_scan_us``), whichever its CUDA graphs
    favoured."""
    rows = _rows(table)
    fused = rows.loc[FUSED]
    step = float(rows.loc[FUSED_LOOP, "us_per_step GPU"])
    scans = rows[rows.index.str.startswith("scan")]["us_per_step GPU"]
    return {"scan_us": step, "best_scan_us": float(scans.min()),
            "fused_us": float(fused["us_per_step GPU"]),
            "faster": step / float(fused["us_per_step GPU"]),
            "fused_device_us": float(fused["kernel_us_per_step"]),
            "kernels_us": float(rows.loc[FUSED_LOOP, "kernel_us_per_step"])}
