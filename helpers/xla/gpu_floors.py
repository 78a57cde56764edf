"""What a set of programs costs on a GPU, predicted without one.

A chapter that runs on a GPU it was not written for (a T4 on Colab's free
tier) needs three answers before a reader spends their quota on it: does
each program compile for that GPU, does it fit in its memory, and how long
does the device take at least. `cost` answers them for one `Program`
compiled for the GPU `helpers.xla.crosscompile` targets, with no GPU
present:

- *compiles*: XLA:GPU's own verdict for the target (a Pallas kernel for
  Mosaic GPU fails below a Hopper; its error is kept);
- *memory*: the compiled program's `memory_analysis` (arguments, outputs,
  temporaries);
- *floor*: the time no implementation can beat, at the datasheet's rates
  (`helpers.measuring.datasheet`): its bytes, each argument read once and
  each output written once, over the memory's bandwidth, or its FLOPs
  (JAX's cost analysis of the lowered program) over the fastest unit for
  its dtype, whichever is longer.

The floor leaves out what a device adds to it: kernel launches, a loop's
steps (XLA's cost analysis counts a loop's body once) and every cache
miss. A prediction made from floors is therefore a lower bound on the
device's time.

>>> import jax, jax.numpy as jnp
>>> x = jax.ShapeDtypeStruct((1024, 1024), jnp.float32)
>>> square = Program("x @ x", lambda a: a @ a, (x,), calls=10)
>>> square.calls
10
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import time
from typing import Any, Callable

from helpers.measuring import datasheet


@dataclasses.dataclass(frozen=True)
class Program:
    """A program a chapter runs on a GPU, and how often.

    Attributes:
        name: what the chapter calls it.
        fn: the function (jitted when costed).
        args: its arguments, as arrays or ``jax.ShapeDtypeStruct``s.
        calls: how many times the chapter calls it, warm-ups included.
        dtype: the dtype its products run in (``'float32'``,
            ``'bfloat16'``, ``'float64'``): it picks the floor's rate.
        highest: float32 products at ``precision='highest'``, which no
            TF32 tensor core runs.
        budget_s: the timing's budget (``max_seconds``), which stops a
            slow program's calls early.
        live_outputs: how many of its outputs are alive at once (calls
            queued back to back keep each one).
        x64: traced with 64-bit types on (``jax.enable_x64``), as every
            float64 program is.
    """

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    calls: int = 1
    dtype: str = "float32"
    highest: bool = False
    budget_s: float | None = None
    live_outputs: int = 1
    x64: bool = False


def cost(program: Program) -> dict[str, Any]:
    """``program`` compiled for the child's GPU (a `crosscompile` child
    only): whether it compiled (and XLA's first line of why not), the
    seconds compiling took here, its bytes and FLOPs, and the memory it
    holds at its peak."""
    from helpers.xla import crosscompile
    row: dict[str, Any] = {"name": program.name, "calls": program.calls,
                           "dtype": program.dtype,
                           "highest": program.highest,
                           "budget_s": program.budget_s}
    import jax
    wide = program.x64 or program.dtype == "float64"
    start = time.perf_counter()
    try:
        with jax.enable_x64(wide):
            compiled = crosscompile.compile_for_gpu(program.fn,
                                                    *program.args)
    except Exception as err:  # XLA's verdict on this GPU, kept as text
        lines = str(err).strip().splitlines() or [type(err).__name__]
        return {**row, "compiles": False, "why not": lines[0][:300],
                "error": type(err).__name__}
    seconds = time.perf_counter() - start
    memory = compiled.memory_analysis()
    arguments = memory.argument_size_in_bytes
    outputs = memory.output_size_in_bytes
    return {**row, "compiles": True, "compile_s": seconds,
            "bytes": arguments + outputs, "flops": _flops(program, wide),
            "peak_bytes": (arguments + program.live_outputs * outputs
                           + memory.temp_size_in_bytes
                           - memory.alias_size_in_bytes)}


def _flops(program: Program, wide: bool) -> float:
    """The program's FLOPs by XLA's cost analysis of it lowered for the
    host (a lowering for a compile-only GPU reports none), or 0 for a
    program only a GPU can lower (a Pallas kernel): its floor is then its
    bytes alone."""
    import jax
    try:
        with jax.enable_x64(wide):
            lowered = jax.jit(program.fn).trace(*program.args).lower()
    except Exception:  # a kernel with no CPU lowering
        return 0.0
    return float((lowered.cost_analysis() or {}).get("flops", 0.0))


def target_memory(share: float = 0.75) -> int | None:
    """The bytes JAX takes by default (``share`` of them) on the GPU a
    `crosscompile` child compiles for, for a workload that sizes its
    arrays by memory as its chapter does on that GPU; None outside such a
    child."""
    from helpers.xla import crosscompile
    if not crosscompile.compiling_for_gpu():
        return None
    return int(share * crosscompile.target_spec()["device_memory_size"])


def costs_of(workload: str) -> list[dict[str, Any]]:
    """A child function: `cost` of every `Program` that ``workload``
    (``"module:function"``, a function of no arguments) returns."""
    module, name = workload.split(":")
    programs = getattr(importlib.import_module(module), name)()
    return [cost(program) for program in programs]


def floor_s(row: dict[str, Any], sheet: datasheet.Peaks) -> float:
    """One call's floor, in seconds, for a `cost` row on ``sheet``'s
    GPU: its bytes at the memory's bandwidth or its FLOPs at the fastest
    rate for its dtype, whichever is longer.

    Example:
        >>> t4 = datasheet.peaks("Tesla T4")
        >>> row = {"bytes": 3 * 2**28, "flops": 2 * 8192**3,
        ...        "dtype": "float32", "highest": False}
        >>> round(floor_s(row, t4) * 1e3)  # 1.1 TFLOP at 8.1 TFLOP/s
        136
    """
    rate = (sheet.fp32_flops_per_s if row.get("highest")
            else datasheet.fastest_rate(sheet, row["dtype"]))
    return max(row["bytes"] / sheet.memory_bytes_per_s,
               row["flops"] / rate)


def device_s(row: dict[str, Any], sheet: datasheet.Peaks) -> float:
    """Every call's floor together: ``calls`` times `floor_s`, or fewer
    calls where a timing budget stops a slow program early (the timing
    keeps at least four: a first call and three samples)."""
    floor = floor_s(row, sheet)
    calls = row["calls"]
    if row.get("budget_s") and floor > 0:
        calls = min(calls, 4 + math.ceil(row["budget_s"] / floor))
    return calls * floor
