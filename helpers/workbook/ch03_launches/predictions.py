"""Chapter 3 (Kernel launches): the one-chain goal predicted before it is
measured, from the reference GPU's recording and the fused kernel's own
operations.

The budget: one chain meets its goal when a step of the fused kernel takes
no longer than a step of the CPU's jitted scan. The estimate: a step is a
chain of dependent floating-point operations, and the fastest a dependent
step can be inside one kernel is the recorded loop whose step is a single
multiply-add. If each operation of the step waits about that long, the
step takes their number times it. Once measured, `OneChainPrediction.held`
says whether the prediction's verdict held.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from helpers.page import arithmetic, prose
from helpers.pallas.triton import ir

CPU_LOOP = "cpu scan, softplus hoisted"


@dataclass(frozen=True)
class OneChainPrediction:
    """The budget a step may take, and the estimate of what it takes."""

    budget: arithmetic.Worked
    floor: arithmetic.Worked
    estimate: arithmetic.Worked

    def markdown(self) -> str:
        """The three worked lines and what they predict."""
        within = self.estimate.value <= self.budget.value
        ratio = self.estimate.value / self.budget.value
        verdict = (f"the estimate is {ratio:.2g} times the budget, so one "
                   "chain should " + ("meet" if within else "miss")
                   + " its goal")
        if 0.5 < ratio < 2:
            verdict += (", narrowly: close enough that only the measurement "
                        "can decide")
        return "\n\n".join([self.budget.markdown(), self.floor.markdown(),
                            self.estimate.markdown(),
                            f"On these numbers {verdict}."])

    def held(self, step_s: float) -> str:
        """Whether the prediction held, given the measured seconds a step
        of the best fused kernel (``verdicts.best_fused`` over the steps).
        """
        predicted = self.estimate.value <= self.budget.value
        met = step_s <= self.budget.value
        estimate_ns = self.estimate.value * 1e9
        return (f"The prediction above estimated {estimate_ns:.3g} ns a "
                f"step; the kernel took {step_s * 1e9:.3g} ns, "
                f"{step_s / self.estimate.value:.2f} times the estimate, so "
                "its verdict, that one chain would "
                + ("meet" if predicted else "miss") + " its goal, "
                + ("held." if predicted == met else "did not hold."))


def float_operations(operations: pd.Series) -> int:
    """How many floating-point operations a loop body holds.

    Args:
        operations: counts by operation name, as ``value_counts`` of the
            operations of a Triton loop body (``arith.addf``, ...).
    """
    if operations.empty:
        raise ValueError("no operations given: count the loop body's "
                         "operations first (the chapter's `operations`).")
    # arith ops on floats, sums across lanes and the exponentials (calls
    # into libdevice), as the chapter's table of the body names them
    return int(operations[[ir.role(name) in ir.FLOAT_ROLES
                           for name in operations.index]].sum())


def one_chain(data: dict[str, Any], host_part_us: float | None,
              float_ops: int) -> OneChainPrediction | None:
    """Predict the one-chain goal from a ``03_launches/goals`` recording.

    Args:
        data: the recording's data (steps, one_chain_s, trivial_fused_s).
        host_part_us: the host's part of one blocked call on the same GPU
            (chapter 1's recording), taken off the one-multiply-add loop's
            wall-clock time when its device time was not recorded; None
            when chapter 1 was not recorded.
        float_ops: the floating-point operations of one step.

    Returns:
        The prediction, or None when the recording lacks a number it needs.
    """
    cpu_s = data.get("one_chain_s", {}).get(CPU_LOOP)
    if float_ops < 1:
        raise ValueError(f"a step needs at least one floating-point "
                         f"operation, got {float_ops}.")
    floor = _floor(data, host_part_us)
    if not isinstance(cpu_s, float) or floor is None or floor.value <= 0:
        return None
    q = arithmetic.quantity
    budget = arithmetic.worked(
        r"t_\text{budget}", "cpu / steps", unit="ns", per_unit=1e-9,
        cpu=q(r"T_\text{CPU}", cpu_s, "ms", 1e-3),
        steps=q("N", data["steps"]))
    estimate = arithmetic.worked(
        r"t_\text{step}", "ops * floor", unit="ns", per_unit=1e-9,
        ops=q("n", float_ops),
        floor=q(r"t_\text{floor}", floor.value, "ns", 1e-9))
    return OneChainPrediction(budget, floor, estimate)


def net_step_s(call_s: float, steps: int, host_part_us: float) -> float:
    """A wall-clock call's time per step less the host's part of one call
    (chapter 1's): what a step takes inside the kernel, roughly."""
    return (call_s - host_part_us * 1e-6) / steps


def _floor(data: dict[str, Any],
           host_part_us: float | None) -> arithmetic.Worked | None:
    """A one-multiply-add step's time: by the device's clock when recorded,
    else the wall clock less the host's part of the call."""
    q = arithmetic.quantity
    steps = q("N", data["steps"])
    device_s = data.get("device_s", {}).get("trivial fused")
    if isinstance(device_s, float):
        return arithmetic.worked(
            r"t_\text{floor}", "device / steps", unit="ns", per_unit=1e-9,
            device=q(r"T_\text{one op}", device_s, "µs", 1e-6), steps=steps)
    wall_s = data.get("trivial_fused_s")
    if not isinstance(wall_s, float) or host_part_us is None:
        return None
    return arithmetic.worked(
        r"t_\text{floor}", "(wall - host) / steps", unit="ns",
        per_unit=1e-9, steps=steps,
        wall=q(r"T_\text{one op}", wall_s, "µs", 1e-6),
        host=q(r"t_\text{host}", host_part_us * 1e-6, "µs", 1e-6))


# --- unrolling: a step's time from its launches ---------------------------

def unroll_by_launches(rows: pd.DataFrame) -> pd.Series:
    """Each unroll factor's µs a step if every launch cost what it cost at
    the smallest factor: launches a step (from the compiled module) times
    that factor's µs per launch. ``rows`` as `variants.measure_unroll`
    records them."""
    first = rows.loc[rows["unroll"].idxmin()]
    return rows["launches_per_step"] * (first["us_per_step"]
                                        / first["launches_per_step"])


def unroll_worked(rows: pd.DataFrame) -> arithmetic.Worked:
    """`unroll_by_launches` at the largest factor, written out."""
    first = rows.loc[rows["unroll"].idxmin()]
    last = rows.loc[rows["unroll"].idxmax()]
    q = arithmetic.quantity
    k, k1 = int(last["unroll"]), int(first["unroll"])
    return arithmetic.worked(
        rf"t({k})", "n_k * t_1 / n_1", unit="µs", per_unit=1e-6,
        n_k=q(f"n({k})", float(last["launches_per_step"])),
        t_1=q(f"t({k1})", first["us_per_step"] * 1e-6, "µs", 1e-6),
        n_1=q(f"n({k1})", float(first["launches_per_step"])))


def unroll_verdict(rows: pd.DataFrame) -> str:
    """Whether the launch model held at the largest factor (the worked
    prediction), where it held within 25% and where the measured step fell
    below half of it (launches that became cheaper than at unroll 1)."""
    predicted = unroll_by_launches(rows)
    ratio = rows["us_per_step"] / predicted
    last = rows["unroll"].idxmax()
    headline = (f"At unroll {int(rows.loc[last, 'unroll'])} a step took "
                f"{rows.loc[last, 'us_per_step']:.3g} µs, "
                f"{ratio[last]:.2f} times the predicted "
                f"{predicted[last]:.3g} µs: the prediction "
                + ("held" if 0.8 <= ratio[last] <= 1.25 else "missed")
                + ".")
    later = rows["unroll"] > rows["unroll"].min()
    held = rows.loc[later & ratio.between(0.8, 1.25), "unroll"].tolist()
    cheaper = rows.loc[later & (ratio < 0.5)]
    said = (f"{headline} The launch count predicted the time a step within "
            f"25% at unroll {prose.and_list(held)}" if held else
            f"{headline} The launch count predicted no unroll factor's time "
            "within 25%")
    if cheaper.empty:
        return said + "."
    k = int(cheaper["unroll"].iloc[0])
    got = float(cheaper["us_per_step"].iloc[0])
    want = float(predicted[cheaper.index[0]])
    return (f"{said}. From unroll {k} on a step took less than half the "
            f"prediction ({got:.3g} against {want:.3g} µs at unroll {k}): "
            "the launches themselves became cheaper than at unroll "
            f"{int(rows['unroll'].min())}.")
