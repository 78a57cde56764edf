"""Chapter 3 (Kernel launches): the one-chain goal predicted before it is
measured, from the reference GPU's recording and the fused kernel's own
operations.

The budget: one chain meets its goal when a step of the fused kernel takes
at most `ONE_CHAIN_GOAL` of a step of the CPU's jitted scan. The estimate:
a step is a chain of dependent floating-point operations, and the fastest
a dependent step can be inside one kernel is the recorded loop whose step
is a single multiply-add. If each operation of the step waits about that
long, the step takes their number times it. The chapter's page checks
the verdict against the measurement (`helpers.workbook.ch03_launches.verdicts.
chain_numbers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from helpers.page import arithmetic, prose
from helpers.pallas.triton import ir

CPU_LOOP = "cpu scan, softplus hoisted"
# The one-chain goal: the fused kernel in at most this share of the CPU's
# time (the device-limit issue's 0.8; the goals table judges it too).
ONE_CHAIN_GOAL = 0.8
# A prediction held when the measurement over it is within this range.
HELD = (0.8, 1.25)


@dataclass(frozen=True)
class OneChainPrediction:
    """The budget a step may take, what each dependent operation of a step
    is taken to wait, and the estimate of what the step takes."""

    budget: arithmetic.Worked
    per_operation: arithmetic.Worked
    estimate: arithmetic.Worked

    @property
    def ratio(self) -> float:
        """The estimate over the budget: above 1, a predicted miss."""
        return self.estimate.value / self.budget.value

    def worked_lines(self) -> str:
        """The budget, the wait per operation and the estimate, each
        worked out, as Markdown; the page says what they predict."""
        return "\n\n".join(w.markdown() for w in (
            self.budget, self.per_operation, self.estimate))


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


def one_chain(data: dict[str, Any], float_ops: int
              ) -> OneChainPrediction | None:
    """Predict the one-chain goal from a ``03_launches/goals`` recording.

    Args:
        data: the recording's data (steps, one_chain_s, and device_s with
            the one-multiply-add loop's device time, ``'trivial fused'``).
        float_ops: the floating-point operations of one step.

    Returns:
        The prediction, or None when the recording lacks a number it needs.
    """
    if float_ops < 1:
        raise ValueError(f"a step needs at least one floating-point "
                         f"operation, got {float_ops}.")
    floor, budget = _floor(data), _budget(data)
    if budget is None or floor is None or floor.value <= 0:
        return None
    q = arithmetic.quantity
    estimate = arithmetic.worked(
        r"t_\text{step}", "ops * floor", unit="ns", per_unit=1e-9,
        ops=q("n", float_ops),
        floor=q(r"t_\text{floor}", floor.value, "ns", 1e-9))
    return OneChainPrediction(budget, floor, estimate)


# The padded Triton kernel whose measured step calibrates `latency_kernel`
# and the latency kernel itself, as the goals recording names them.
PADDED_KERNEL = "gpu fused_scan, triton"
LATENCY_KERNEL = "gpu latency kernel, triton"


def latency_kernel(data: dict[str, Any], padded_path: int,
                   latency_path: int) -> OneChainPrediction | None:
    """Predict the latency kernel's step from the padded kernel's.

    A single chain waits through its loop's critical path every step. On
    the padded kernel's measured step, each instruction of its path
    waited ``t_op`` on average; the latency kernel's path, at that same
    average, takes ``latency_path * t_op``.

    Args:
        data: a ``03_launches/goals`` recording's data, with the padded
            kernel's device time (``device_s``).
        padded_path, latency_path: the two loops' critical paths, in
            instructions (`helpers.xla.ptx.critical_path`, as
            `for_h100.chain_loops_for_gpu` reads them for an H100).

    Returns:
        The prediction, or None when the recording lacks a number it needs.
    """
    if min(padded_path, latency_path) < 1:
        raise ValueError(f"a critical path has at least one instruction; "
                         f"got {padded_path} and {latency_path}.")
    padded_s = data.get("device_s", {}).get(PADDED_KERNEL)
    budget = _budget(data)
    if not isinstance(padded_s, float) or budget is None:
        return None
    q = arithmetic.quantity
    per_op = arithmetic.worked(
        r"t_\text{op}", "padded / (steps * path)", unit="ns", per_unit=1e-9,
        padded=q(r"T_\text{padded}", padded_s, "ms", 1e-3),
        steps=q("N", data["steps"]),
        path=q(r"p_\text{padded}", padded_path))
    estimate = arithmetic.worked(
        r"t_\text{step}", "path * op", unit="ns", per_unit=1e-9,
        path=q(r"p_\text{latency}", latency_path),
        op=q(r"t_\text{op}", per_op.value, "ns", 1e-9))
    return OneChainPrediction(budget, per_op, estimate)


def _budget(data: dict[str, Any]) -> arithmetic.Worked | None:
    """The goal's share of the CPU's jitted scan, a step; None where the
    CPU's time is missing."""
    cpu_s = data.get("one_chain_s", {}).get(CPU_LOOP)
    if not isinstance(cpu_s, float):
        return None
    q = arithmetic.quantity
    return arithmetic.worked(
        r"t_\text{budget}", "goal * cpu / steps", unit="ns", per_unit=1e-9,
        goal=q("g", ONE_CHAIN_GOAL),
        cpu=q(r"T_\text{CPU}", cpu_s, "ms", 1e-3),
        steps=q("N", data["steps"]))


def _floor(data: dict[str, Any]) -> arithmetic.Worked | None:
    """A one-multiply-add step's time by the device's clock; None where
    that loop failed and has no device time."""
    q = arithmetic.quantity
    device_s = data["device_s"].get("trivial fused")
    if not isinstance(device_s, float):
        return None
    return arithmetic.worked(
        r"t_\text{floor}", "device / steps", unit="ns", per_unit=1e-9,
        device=q(r"T_\text{one op}", device_s, "µs", 1e-6),
        steps=q("N", data["steps"]))


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


def unroll_numbers(rows: pd.DataFrame, min_graph_size: int | None
                   ) -> dict[str, Any]:
    """The unroll sweep against the launch model (`unroll_by_launches`):
    at the largest factor, the step (``last_us``), the prediction
    (``last_predicted_us``) and their ratio; the factors where the model
    held within 25% (``held``, as a list), the first where a step took
    under half of it (``cheaper_k``, with its ``cheaper_us`` and
    ``cheaper_predicted_us``); and the largest gain between two factors
    (``gain_from``, ``gain_to``, the steps, ``gain``, the body's kernels
    before and after) and whether the body crossed ``min_graph_size``
    there (``crossed_graph``)."""
    rows = rows.sort_values("unroll").reset_index(drop=True)
    predicted = unroll_by_launches(rows)
    ratio = rows["us_per_step"] / predicted
    last = rows["unroll"].idxmax()
    later = rows["unroll"] > rows["unroll"].min()
    cheaper = rows.loc[later & (ratio < 0.5)]
    body = rows["launches_per_step"] * rows["unroll"]
    drops = rows["us_per_step"].shift(1) / rows["us_per_step"]
    at = int(drops.idxmax())
    return {"last_k": int(rows.loc[last, "unroll"]),
            "last_us": float(rows.loc[last, "us_per_step"]),
            "last_predicted_us": float(predicted[last]),
            "last_ratio": float(ratio[last]),
            "held": prose.and_list(rows.loc[later & ratio.between(*HELD),
                                            "unroll"].astype(int).tolist()),
            "cheaper_k": int(cheaper["unroll"].iloc[0])
            if len(cheaper) else None,
            "cheaper_us": float(cheaper["us_per_step"].iloc[0])
            if len(cheaper) else None,
            "cheaper_predicted_us": float(predicted[cheaper.index[0]])
            if len(cheaper) else None,
            "gain_from": int(rows.loc[at - 1, "unroll"]),
            "gain_to": int(rows.loc[at, "unroll"]),
            "gain_from_us": float(rows.loc[at - 1, "us_per_step"]),
            "gain_to_us": float(rows.loc[at, "us_per_step"]),
            "gain": float(drops[at]),
            "body_before": float(body[at - 1]), "body_after": float(body[at]),
            "crossed_graph": min_graph_size is not None
            and bool(body[at - 1] < min_graph_size <= body[at])}
