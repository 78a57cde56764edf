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

from helpers.examine import costs
from helpers.examine.findings import Finding, count_of
from helpers.examine.in_jaxpr import Loop
from helpers.xla import hlo

WARP = 32  # threads; XLA:GPU's reduction emitter takes rows this long
# A loop shorter than this is not worth a finding about its launches.
MANY_STEPS = 100
# A loop's overhead is a finding when it is at least this share of the
# step's own work at its slowest (float32 on CUDA cores): launches as long
# as the work, a round trip half as long. A step of real work (a GRU's
# 3 GFLOP, 60 µs) hides both; a step of a few operations does not.
LAUNCH_SHARE = 1.0
ROUND_TRIP_SHARE = 0.5
# Temporaries count as large from this size, and this many times the
# function's inputs and outputs together; they are a slow pattern when an
# all-pairs array made them (`helpers.examine.in_jaxpr.all_pairs`).
LARGE_BYTES = 64 * 2**20
LARGE_RATIO = 4
# Donation matters from this many bytes of matching inputs.
DONATION_BYTES = 2**20
# A kLoop reduction costs a reader time from this many bytes read: 16 MB
# is 5 µs at the H100's copy bandwidth.
MATTERS_BYTES = 16 * 2**20
# ... and is slow when chapter 2 measured its row length below this share
# of the copy bandwidth on the H100: a quarter longer than it need be.
KLOOP_SLOW_SHARE = 0.8


def find_loops(text: str, target: str, min_graph: int | None,
               loops: list[Loop], rates: costs.Rates | None
               ) -> list[Finding]:
    """While loops that ask the host every step, and loop bodies launched
    kernel by kernel, in the compiled module ``text``, where that costs
    time beside the step's own work.

    Args:
        text: compiled HLO text.
        target: what it was compiled for, for the evidence.
        min_graph: XLA:GPU's minimum CUDA-graph size, when ``text`` is an
            XLA:GPU module; None for other backends (no graphs).
        loops: the program's loops with one step's work
            (`helpers.examine.in_jaxpr.loops`), matched to the module's.
        rates: the H100's overheads (`helpers.examine.costs.h100`); None
            where its recordings are missing: then a loop is judged by its
            form alone.
    """
    found = []
    for loop in hlo.while_loops(text):
        work = _step_work(loop.trip_count, loops)
        if loop.trip_count is None:
            found += _round_trip(loop, target, work, rates)
        # a loop of unknown length waits for the host anyway: that is
        # its finding; a long loop of known length launches its body
        long = loop.trip_count is not None and loop.trip_count >= MANY_STEPS
        if long and loop.body_kernels and min_graph is not None:
            found += _launches(loop, target, min_graph, work, rates)
    return found


def _step_work(trips: int | None, loops: list[Loop]) -> costs.Work | None:
    """One step's work of the program loop an HLO loop comes from: a scan
    of its length, else any while loop (XLA may prove a while loop's
    count); the largest where several could be it, so that a loop is
    never judged busier with launches than it is."""
    same = [loop.work for loop in loops
            if loop.kind == "scan" and loop.trips == trips]
    candidates = same or [loop.work for loop in loops
                          if loop.kind == "while"]
    return max(candidates, key=lambda w: (w.flops, w.bytes), default=None)


def _round_trip(loop: Any, target: str, work: costs.Work | None,
                rates: costs.Rates | None) -> list[Finding]:
    head = (f"`{loop.name}` ({target}): trip count unknown, condition of "
            f"{count_of(loop.condition_kernels, 'kernel')} read back by the "
            "host "
            "every step")
    if rates is None or work is None:
        return [Finding("host-round-trip", head, "likely")]
    step = work.seconds(rates)
    if rates.round_trip_s < ROUND_TRIP_SHARE * step:
        return []  # small beside the step's own work
    return [Finding("host-round-trip", f"{head}; the step's own work: "
                    f"{work.said(rates)}", "certain",
                    cost=costs.round_trips(None, rates))]


def _launches(loop: Any, target: str, min_graph: int,
              work: costs.Work | None, rates: costs.Rates | None
              ) -> list[Finding]:
    kernels = loop.body_kernels
    graph = kernels >= min_graph
    head = (f"`{loop.name}` ({target}): {count_of(kernels, 'kernel')} per "
            "step, "
            f"{loop.trip_count:,} steps; " + (
                "replayed as a CUDA graph each step" if graph else
                f"fewer than the {min_graph} a CUDA graph needs"))
    if rates is None:
        # without the H100's costs only the one-by-one launches are sure
        return [] if graph else [Finding("launches-per-step", head,
                                         "likely")]
    cost = costs.launches(kernels, loop.trip_count, rates, graph=graph)
    if work is None:
        return [] if graph else [Finding("launches-per-step", head,
                                         "likely", cost=cost)]
    each = rates.graph_launch_s if graph else rates.launch_s
    if kernels * each < LAUNCH_SHARE * work.seconds(rates):
        return []  # the launches hide behind the step's own work
    return [Finding("launches-per-step", f"{head}; the step's own work: "
                    f"{work.said(rates)}", "likely", cost=cost)]


def find_kloop_reductions(text: str, target: str,
                          rates: costs.Rates | None = None
                          ) -> list[Finding]:
    """Row reductions over short rows that XLA:GPU emitted as kLoop
    fusions (one thread per row, each walking its own contiguous row, so a
    warp's loads land a row apart), reading enough bytes for it to cost
    time: a logsumexp over ten logits is not one. (A kLoop reduction over
    a major dimension is not one either: neighbouring threads read
    neighbouring elements.)"""
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
        moved = sum(_shape_bytes(s) for s in fusion.operand_shapes)
        if moved < MATTERS_BYTES:
            continue
        for reduce in body:
            length = _row_length(reduce, shapes)
            if length is not None and length < WARP:
                found += _kloop_finding(
                    f"`{fusion.name}` ({target}): kLoop reduce of rows of "
                    f"{length} contiguous elements, "
                    f"{', '.join(fusion.operand_shapes)} to "
                    f"{fusion.output_shape}", length, moved, rates)
                break
    return found


def _kloop_finding(evidence: str, length: int, moved: int,
                   rates: costs.Rates | None) -> list[Finding]:
    """A kLoop reduction judged by what chapter 2 measured of one over
    rows of about the same length on the H100: slow below
    `KLOOP_SLOW_SHARE` of the copy bandwidth, else nothing. Without that
    recording, or the H100's rates, a possible finding."""
    speed = costs.kloop_speed(length)
    if rates is None or speed is None:
        return [Finding("kloop-reduction", evidence, "possible")]
    if speed.share >= KLOOP_SLOW_SHARE:
        return []
    floor = moved / rates.copy_bytes_per_s
    cost = (costs.traffic(moved, 1, rates, "its bytes read") + "; chapter "
            f"2's product with rows of {speed.length} ran at "
            f"{speed.share:.0%} of that bandwidth, about "
            f"{costs.seconds(floor / speed.share)} ({speed.source})")
    return [Finding("kloop-reduction", evidence, "likely", cost=cost)]


# Bytes per element of XLA's element types.
_ITEM_BYTES = {"pred": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1,
               "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
               "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8,
               "c128": 16}


def _shape_bytes(text: str) -> int:
    """The bytes of an array shape as HLO writes it (``f32[8,128]{1,0}``);
    0 for one it cannot read."""
    try:
        shape = hlo.Shape.parse(text)
    except ValueError:
        return 0
    return sum(math.prod(a.dims) * _ITEM_BYTES.get(a.dtype or "", 0)
               for a in shape.arrays)


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


def find_memory(temp: int | None, target: str, args: tuple[Any, ...],
                outputs: Any, pairs: list[tuple[str, int]],
                rates: costs.Rates | None) -> list[Finding]:
    """Temporaries much larger than the inputs and outputs, by XLA's
    memory analysis of the program compiled for ``target`` (the H100's
    where it was compiled for one: XLA:GPU fuses differently from the
    CPU, and keeps other buffers).

    ``pairs`` are the all-pairs arrays the function makes, each with its
    bytes (`helpers.examine.in_jaxpr.all_pairs`). With one, the temporaries are
    a finding: that array can be made and used a block at a time. Without
    one they are a note: random draws or a stack of steps a program needs
    whole (a Monte Carlo's paths) are large and still the fast way.
    """
    if temp is None:
        return []
    io = _nbytes(args) + _nbytes(outputs)
    if temp < LARGE_BYTES or temp < LARGE_RATIO * io:
        return []
    evidence = (f"{temp / 2**20:,.0f} MiB of temporaries for "
                f"{io / 2**20:,.1f} MiB of inputs and outputs (XLA's memory "
                f"analysis, {target})")
    if pairs:
        made, nbytes = pairs[0]
        cost = "" if rates is None else costs.traffic(
            nbytes, 2, rates, "the all-pairs array written and read back")
        return [Finding("large-temporaries", f"{evidence}; {made}",
                        "likely", cost=cost)]
    return [Finding("large-temporaries", f"{evidence}; no all-pairs array "
                    "made them", "possible", slow=False)]


def temp_bytes(compiled: Any) -> int | None:
    """The temporaries of a program compiled here, by XLA's memory
    analysis; None where the backend gives none."""
    analysis = compiled.memory_analysis()
    temp = getattr(analysis, "temp_size_in_bytes", None) if analysis else None
    return None if temp is None else int(temp)


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
    # the same shapes alone do not say the output replaces its input
    # (jnp.sin of an array is not a state update): a note, unless calls
    # show an output fed back in (`helpers.examine.retracing`)
    said = count_of(len(matching), "output shape")
    return [Finding("no-donation", f"{said} equal to input shapes, "
                    f"{size / 2**20:,.1f} MiB, and no "
                    "input_output_alias in the compiled module", "possible",
                    slow=False)]
