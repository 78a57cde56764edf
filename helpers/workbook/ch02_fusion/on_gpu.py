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
