"""Chapter 4's attention block and its fused versions compiled for an
H100 (through `helpers.xla.crosscompile`), on any machine."""

from __future__ import annotations

from typing import Any

import jax

from helpers.workbook.ch04_profiling import fused
from helpers.workbook.ch04_profiling.attention import (GPU_SHAPE, init,
                                                       versions)
from helpers.xla import hlo

def structure() -> list[dict[str, Any]]:
    """A child function (`helpers.xla.crosscompile.run`): the einsum block
    and each fused implementation (`fused`) compiled for an H100 at the
    reference shape, with its kernels, its custom calls (a fused
    attention shows as one) and the temporary bytes XLA's buffer
    assignment gives it (the B H T T scores, where they are written to
    memory). An implementation
    that does not compile here gives the reason instead."""
    from helpers.xla import crosscompile

    sizes = GPU_SHAPE
    params, x = jax.eval_shape(lambda key: init(key, **sizes),
                               jax.random.key(0))
    programs = {"einsum": versions(sizes["n_head"])["einsum"],
                **fused.versions(sizes["n_head"])}
    rows = []
    for name, fn in programs.items():
        try:
            compiled = crosscompile.compile_for_gpu(fn, params, x)
        except Exception as refused:  # noqa: BLE001 - reported, not hidden
            rows.append({"version": name, "compiles": False,
                         "why not": str(refused).splitlines()[0][:160]})
            continue
        text = compiled.as_text()
        rows.append({
            "version": name, "compiles": True,
            "kernels": hlo.kernel_count(text),
            "custom calls": sorted(
                {c.target for c in hlo.custom_calls(text)}),
            "temporary MB": compiled.memory_analysis().temp_size_in_bytes
            / 1e6})
    return rows
