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
profile: the chapter's sweep times ``a @ b`` compiled both ways, and
`autotuner_record` keeps the two as the chapter's recording of them. On
a CPU the option changes nothing.
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

AUTOTUNER_FLAG = "xla_gpu_experimental_enable_fusion_autotuner"
AUTOTUNER_OFF = {AUTOTUNER_FLAG: False}
# The sweep's two compilations of a @ b, by the setting each was
# compiled with.
SETTINGS = {"a @ b": "autotuner on", "a @ b, autotuner off": "autotuner off"}


def autotuner_record(sweep: pd.DataFrame, batch: Sequence[int]
                     ) -> dict[str, Any]:
    """The sweep's ``a @ b`` compiled with the fusion autotuner on (the
    default) and off, as the chapter records them.

    Args:
        sweep: the sweep's rows: ``K``, ``dtype``, ``version`` (the keys of
            `SETTINGS` among others), ``device ms``, ``wall ms``,
            ``spread`` and ``fusions``.
        batch: the batch shape the sweep ran at.

    Returns:
        ``{'batch': [...], 'rows': {...}}``: per row K, dtype, setting,
        device and wall ms, the spread, and the fusion kinds of the
        program that ran.

    Example:
        >>> rows = pd.DataFrame({"K": [25, 25, 25], "dtype": ["float32"] * 3,
        ...     "version": ["a @ b", "a @ b, autotuner off", "CuPy"],
        ...     "device ms": [0.4, 0.9, 2.0], "wall ms": [0.5, 1.0, 2.1],
        ...     "spread": [0.01] * 3, "fusions": ["kCustom", "kLoop", ""]})
        >>> autotuner_record(rows, (1000, 1000))["rows"]["setting"]
        ['autotuner on', 'autotuner off']
    """
    part = sweep[sweep["version"].isin(SETTINGS)]
    if part.empty:
        raise ValueError("the sweep has no a @ b rows: time the versions "
                         f"{list(SETTINGS)} in it first.")
    part = part.assign(setting=part["version"].map(SETTINGS))
    columns = ["K", "dtype", "setting", "device ms", "wall ms", "spread",
               "fusions"]
    return {"batch": [int(side) for side in batch],
            "rows": part[columns].to_dict(orient="list")}


# The row lengths whose autotuning the chapter reads: the first K where
# XLA's own kInput emitter is flat, one where the autotuner kept it and
# one where it took Triton's kernel.
LOGGED_KS = (35, 40, 45)


def autotuner_candidates(batch: Sequence[int],
                         ks: Sequence[int] = LOGGED_KS
                         ) -> list[dict[str, Any]]:
    """What the fusion autotuner timed for ``a @ b`` at each K in float32:
    every candidate kernel of each fusion, its time and the backend kept,
    from XLA:GPU's autotuning log (`helpers.xla.autotune_logs`). Run in a
    fresh process (`helpers.xla.fresh_process`): a process that compiled
    the same fusions before answers from its autotuning cache and times
    nothing. Empty on a machine without a GPU, which does not autotune."""
    from helpers.xla import fresh_process

    return fresh_process.call(_candidates_here, list(batch), list(ks))


def _candidates_here(batch: list[int], ks: list[int]
                     ) -> list[dict[str, Any]]:
    import tempfile
    from pathlib import Path

    import jax
    import jax.numpy as jnp

    from helpers.xla import autotune_logs

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for k in ks:
            log = Path(folder) / f"k{k}.txt"
            a = jnp.ones((*batch, 3, k), jnp.float32)
            b = jnp.ones((*batch, k, 1), jnp.float32)
            jax.jit(jnp.matmul).lower(a, b).compile(
                compiler_options={"xla_gpu_dump_autotune_logs_to": str(log)})
            text = log.read_text() if log.exists() else ""
            rows += [{"K": k, **row}
                     for row in autotune_logs.candidates(text)]
    return rows
