"""The first calls of a freshly jitted function, read as a series: how
the second call compares with later ones, and whether the times drift
as the calls go on (chapter 1's warm-up section).

`drift` summarises the recorded times; `state_columns` lays the GPU's
clock, temperature and power beside each call where NVML recorded them
(`helpers.measuring.gpu_state`).
"""

from __future__ import annotations

import statistics
from typing import Any

import pandas as pd
from scipy import stats


def drift(calls_ms: list[float]) -> dict[str, float]:
    """The first calls' shape: the compiling call, the second against the
    median of calls 11 to 30, the medians of calls 2-10 and 21-30, their
    change, and the correlation of time with call number from call 2 on.

    Example:
        >>> d = drift([900.0] + [3.0 + 0.01 * i for i in range(29)])
        >>> round(d["change"], 3), round(d["correlation"], 2)
        (0.064, 1.0)
    """
    if len(calls_ms) < 30:
        raise ValueError(f"drift needs 30 calls; it got {len(calls_ms)}")
    later = statistics.median(calls_ms[10:30])
    early = statistics.median(calls_ms[1:10])
    late = statistics.median(calls_ms[20:30])
    numbers = list(range(2, len(calls_ms) + 1))
    return {"first_ms": calls_ms[0], "second_ratio": calls_ms[1] / later,
            "early_ms": early, "late_ms": late, "change": late / early - 1,
            "correlation": float(stats.pearsonr(numbers,
                                                calls_ms[1:]).statistic)}


def state_columns(states: list[dict[str, Any] | None]) -> pd.DataFrame:
    """The SM clock (MHz), temperature (°C) and power (W) NVML read after
    each call, by call number (``states[0]`` after call 1); empty where it
    read nothing (no NVIDIA GPU).

    Example:
        >>> state_columns([None, None]).empty
        True
    """
    rows = {number: {"SM clock (MHz)": s["sm_clock_mhz"],
                     "temperature (°C)": s["temperature_c"],
                     "power (W)": s["power_w"]}
            for number, s in enumerate(states, 1) if s}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("call")
