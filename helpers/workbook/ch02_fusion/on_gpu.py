"""Chapter 2 on the reference GPU: the sweep with XLA:GPU's fusion
autotuner on and off.

On a GPU, XLA:GPU's *fusion autotuner* times a fusion's kernel from XLA's
own emitter against a Triton ("block-level") kernel of the same fusion,
and keeps the faster: a Triton fusion shows as kind ``kCustom``. It times
on the device, so a compilation without one (`helpers.xla.crosscompile`)
takes the default, XLA's emitter, and the kinds it shows are the
heuristic's. Turning the autotuner off for one compilation
(`AUTOTUNER_OFF`, passed as ``compiler_options``) shows what the
heuristic's choice alone runs at, on the same device, in the same
process.

`autotuner_sweep` runs on a GPU; on a CPU only as a dry run
(`helpers.measuring.recorded`), where the option changes nothing and the
numbers mean nothing.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp

from helpers.measuring import device_time
from helpers.workbook.ch02_fusion import exercises
from helpers.xla import hlo

AUTOTUNER_FLAG = "xla_gpu_experimental_enable_fusion_autotuner"
AUTOTUNER_OFF = {AUTOTUNER_FLAG: False}
SETTINGS = {"autotuner on": None, "autotuner off": AUTOTUNER_OFF}


def reduce_kinds(compiled_text: str) -> str:
    """The fusion kinds of a module's reductions, with the kind its name
    keeps where a later choice changed it (``kCustom (named kLoop)``)."""
    kinds = [f"{f.kind}" if f.kind == f.named_kind else
             f"{f.kind} (named {f.named_kind})"
             for f in hlo.fusions(compiled_text)
             if f.root_op in ("reduce", "dot") or "dot" in f.name]
    return ", ".join(kinds) or "no fused reduce"


def autotuner_sweep(ks: Sequence[int], batch: Sequence[int],
                    dtypes: Sequence[str] = ("float32", "float64"),
                    repeat: int = 30) -> dict[str, Any]:
    """``a @ b`` for every K and dtype, compiled with the fusion autotuner
    on (the default) and off, each timed by the device's clock.

    Returns:
        ``{'batch': [...], 'rows': {...}}``: per row K, dtype, setting,
        device and wall ms, the spread, and the fusion kinds of the
        program that ran.
    """
    rows = []
    key_a, key_b = jax.random.split(jax.random.key(0))
    for dtype in dtypes:
        widest = (jax.random.normal(key_a, (*batch, 3, max(ks)), dtype),
                  jax.random.normal(key_b, (*batch, max(ks), 1), dtype))
        for k in ks:
            a, b = widest[0][..., :k], widest[1][..., :k, :]
            jitted = {setting: jax.jit(exercises.starter,
                                       compiler_options=options)
                      for setting, options in SETTINGS.items()}
            timed = device_time.measure_all(  # both in one profile
                {setting: (fn, [(a, b)]) for setting, fn in jitted.items()},
                repeat=repeat)
            for setting, timing in timed.items():
                text = jitted[setting].lower(a, b).compile().as_text()
                rows.append({"K": k, "dtype": str(jnp.dtype(dtype)),
                             "setting": setting,
                             "device ms": timing.median * 1e3,
                             "wall ms": timing.wall.median * 1e3,
                             "spread": timing.span.rel_spread,
                             "fusions": reduce_kinds(text or "")})
    return {"batch": [int(side) for side in batch],
            "rows": {column: [row[column] for row in rows]
                     for column in rows[0]}}
