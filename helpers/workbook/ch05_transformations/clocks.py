"""The three clocks of chapter 5's timed tables, and how to read them.

Every timed row holds the wall clock of calls made with the profiler off
(``ms``), the profiler's span of other calls, from their first piece of
compiled work to their last (``device ms``), and those pieces' durations
summed (``kernel ms``); see `helpers.measuring.device_time`. On a CPU the
pieces are XLA:CPU's thunks, run on the host's own cores, where the
profiler records each one: calls made under it run slower, so the span
can exceed the wall time, and thunks that run side by side on several
threads can sum to more than the span. These functions say so, computed
from the tables, wherever it happens.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


# Each timed table of `claims.measure`: its section's name, and its wall,
# span and kernel columns.
TIMED = {"vmap": ("vmap", "ms", "device ms", "kernel ms"),
         "scan": ("scan", "run ms", "run device ms", "run kernel ms"),
         "remat": ("remat", "ms", "device ms", "kernel ms"),
         "forward": ("value_and_grad", "ms", "device ms", "kernel ms"),
         "precision": ("bf16", "ms", "device ms", "kernel ms")}


def clock_numbers(data: dict[str, Any]) -> dict[str, Any]:
    """Over every timed table in ``data`` (`claims.measure`): the timed
    ``rows``; those whose span exceeds their wall time (``over wall``,
    the largest ratio ``worst`` and the tables they are in,
    ``sections``); and those whose kernels sum to more than their span
    (``over span``: one call's pieces ran side by side)."""
    rows = over_wall = over_span = 0
    worst, sections = 1.0, []
    for key, (section, wall, span, kernel) in TIMED.items():
        frame = pd.DataFrame(data[key])
        if span not in frame:
            continue
        rows += len(frame)
        slower = frame[span] > frame[wall]
        over_wall += int(slower.sum())
        over_span += int((frame[kernel] > frame[span] * 1.001).sum())
        if slower.any():
            sections.append(section)
            worst = max(worst, float((frame[span] / frame[wall]).max()))
    return {"rows": rows, "over wall": over_wall, "over span": over_span,
            "worst": worst, "sections": sections}


