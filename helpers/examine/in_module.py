"""Patterns read from compiled programs: what XLA made of the function.

Two compilations are read. The one for this machine gives memory (XLA's
``memory_analysis``) and buffer donation. The one for an H100 (XLA:GPU,
compiled here without a GPU by `helpers.xla.crosscompile`) gives what a
GPU would run: loops and their kernels per step, and the emitter of each
reduction. Where the H100 compilation is missing, loops are read from the
local one, and the reductions are not checked.
"""

from __future__ import annotations

import math
from typing import Any

import jax

from helpers.examine.findings import Finding
from helpers.xla import hlo

WARP = 32  # threads; XLA:GPU's reduction emitter takes rows this long
# A loop shorter than this is not worth a finding about its launches.
MANY_STEPS = 100
# Temporaries count as large from this size, and this many times the
# function's inputs and outputs together.
LARGE_BYTES = 64 * 2**20
LARGE_RATIO = 4
# Donation matters from this many bytes of matching inputs.
DONATION_BYTES = 2**20


def find_loops(text: str, target: str, min_graph: int | None
               ) -> list[Finding]:
    """While loops that ask the host every step, and loop bodies launched
    kernel by kernel, in the compiled module ``text``.

    Args:
        text: compiled HLO text.
        target: what it was compiled for, for the evidence.
        min_graph: XLA:GPU's minimum CUDA-graph size, when ``text`` is an
            XLA:GPU module; None for other backends (no graphs).
    """
    found = []
    for loop in hlo.while_loops(text):
        kernels = loop.body_kernels
        if loop.trip_count is None:
            found.append(Finding(
                "host-round-trip", f"`{loop.name}` ({target}): trip count "
                f"unknown, condition of {loop.condition_kernels} kernel(s) "
                "evaluated every iteration", "certain"))
        # a loop of unknown length waits for the host anyway: that is
        # its finding; a long loop of known length launches its body
        long = loop.trip_count is not None and loop.trip_count >= MANY_STEPS
        if long and kernels and min_graph is not None \
                and kernels < min_graph:
            found.append(Finding(
                "launches-per-step", f"`{loop.name}` ({target}): "
                f"{kernels} kernel(s) per step, {loop.trip_count} steps; "
                f"fewer than the {min_graph} a CUDA graph needs", "likely"))
    return found


def find_kloop_reductions(text: str, target: str) -> list[Finding]:
    """Row reductions over short rows that XLA:GPU emitted as kLoop
    fusions: one thread per row, each walking its own contiguous row, so
    a warp's loads land a row apart. (A kLoop reduction over a major
    dimension is not one: neighbouring threads read neighbouring
    elements.)"""
    module = hlo.parse(text)
    called = {i.name: i.attrs.get("calls", "").lstrip("%")
              for body in module.values()
              for i in body if i.op == "fusion"}
    found = []
    for fusion in hlo.fusions(text):
        if fusion.named_kind != "kLoop":
            continue
        body = module.get(called.get(fusion.name, ""), [])
        shapes = {i.name: i.result for i in body}
        for reduce in body:
            length = _row_length(reduce, shapes)
            if length is not None and length < WARP:
                found.append(Finding(
                    "kloop-reduction", f"`{fusion.name}` ({target}): kLoop "
                    f"reduce of rows of {length} contiguous elements, "
                    f"{', '.join(fusion.operand_shapes)} to "
                    f"{fusion.output_shape}", "likely"))
                break
    return found


def _row_length(inst: Any, shapes: dict[str, Any]) -> int | None:
    """Elements per reduced row when ``inst`` reduces its operand's
    contiguous (minor-most) dimension; None for any other instruction.
    ``shapes`` gives the computation's results by name (XLA leaves the
    operands' shapes out inside a fused computation)."""
    if inst.op != "reduce" or not inst.operands:
        return None
    shape = (inst.operand_shapes[0] if inst.operand_shapes
             and inst.operand_shapes[0] is not None
             else shapes.get(inst.operands[0]))
    if shape is None or not shape.minor_to_major:
        return None
    reduced = {int(d) for d in inst.attrs.get("dimensions", "").strip(
        "{}").split(",") if d.strip()}
    if shape.minor_to_major[0] not in reduced:
        return None
    return math.prod(shape.dims[d] for d in reduced)


def _nbytes(tree: Any) -> int:
    return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(tree)
               if hasattr(x, "dtype"))


def find_memory(compiled: Any, args: tuple[Any, ...], outputs: Any
                ) -> list[Finding]:
    """Temporaries much larger than the inputs and outputs, by XLA's
    memory analysis of the program compiled here."""
    analysis = compiled.memory_analysis()
    temp = getattr(analysis, "temp_size_in_bytes", None) if analysis else None
    if temp is None:
        return []
    io = _nbytes(args) + _nbytes(outputs)
    if temp >= LARGE_BYTES and temp >= LARGE_RATIO * io:
        return [Finding("large-temporaries", f"{temp / 2**20:,.0f} MiB of "
                        f"temporaries for {io / 2**20:,.1f} MiB of inputs and "
                        "outputs (XLA's memory analysis, compiled here)",
                        "likely")]
    return []


def find_missing_donation(text: str, args: tuple[Any, ...], outputs: Any
                          ) -> list[Finding]:
    """Outputs shaped like inputs of at least `DONATION_BYTES`, in a
    module that aliases no input to an output."""
    if hlo.aliases(text):
        return []
    shapes = {(tuple(x.shape), str(x.dtype)): x
              for x in jax.tree.leaves(args) if hasattr(x, "dtype")}
    matching = [shapes[key] for key in {
        (tuple(y.shape), str(y.dtype)) for y in jax.tree.leaves(outputs)
        if hasattr(y, "dtype")} if key in shapes]
    size = _nbytes(matching)
    if size < DONATION_BYTES:
        return []
    return [Finding("no-donation", f"{len(matching)} output shape(s) equal "
                    f"to input shapes, {size / 2**20:,.1f} MiB, and no "
                    "input_output_alias in the compiled module", "likely")]
