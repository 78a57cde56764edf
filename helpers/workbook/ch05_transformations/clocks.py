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

from helpers.workbook.ch05_transformations import claims

# Each timed table of `claims.measure`: its section's name, and its wall,
# span and kernel columns.
TIMED = {"vmap": ("vmap", "ms", "device ms", "kernel ms"),
         "scan": ("scan", "run ms", "run device ms", "run kernel ms"),
         "remat": ("remat", "ms", "device ms", "kernel ms"),
         "forward": ("value_and_grad", "ms", "device ms", "kernel ms"),
         "precision": ("bf16", "ms", "device ms", "kernel ms")}


def _counts(data: dict[str, Any]) -> dict[str, Any]:
    """Rows whose span exceeds their wall time, and rows whose kernels sum
    to more than their span, over every timed table in ``data``."""
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


def clock_note(data: dict[str, Any], whose: str = "this run's") -> str:
    """The paragraph that introduces the three clocks of the timed tables
    and, from the numbers in ``data`` (`claims.measure`), says where the
    span exceeds the wall time or the kernels exceed the span, and why,
    and which clock the chapter's verdicts read (`verdict_clocks`).
    ``whose`` names the run ("the H100's", "this machine's")."""
    from helpers.page import prose

    c = _counts(data)
    on_cpu = claims.measured_on_cpu(data)
    text = ("The timed tables below read three clocks: *wall ms*, the "
            "wall clock of calls made with the profiler off; *device ms*, "
            "the profiler's span of other calls, from their first piece of "
            "compiled work to their last; and *kernel ms*, those pieces "
            "summed.")
    if on_cpu:
        text += (" On a CPU the pieces are XLA:CPU's compiled steps "
                 "(thunks), run on the host's own cores, and the profiler "
                 "records each one on those cores: calls made under it run "
                 "slower.")
    if c["over wall"]:
        tables = "table" if len(c["sections"]) == 1 else "tables"
        text += (f" {'So in' if on_cpu else 'In'} {c['over wall']} of "
                 f"{whose} {c['rows']} timed rows (in the "
                 f"{prose.and_list(c['sections'])} {tables}) the span exceeds "
                 f"the wall time, by up to {c['worst']:.2f} times: calls "
                 "under the profiler ran slower than those the wall clock "
                 "timed without it.")
    if c["over span"]:
        rows = "row" if c["over span"] == 1 else "rows"
        text += (f" In {c['over span']} {rows} the pieces sum to more than "
                 "the span, because one call's pieces ran side by side on "
                 f"several {'threads' if on_cpu else 'streams'}.")
    return f"{text} {verdict_clocks(data)}"


def verdict_clocks(data: dict[str, Any]) -> str:
    """Which clock the verdicts on ``data`` read: the wall clock, and for
    bf16 the clock `claims.bf16_clock` picks, with the reason."""
    if claims.bf16_clock(data) == "ms":
        why = ("the clock the profiler does not slow" if
               claims.measured_on_cpu(data) else "the only one recorded")
        return ("Every verdict on this machine's numbers therefore reads "
                f"the wall clock, {why}.")
    return ("The verdicts read the wall clock, except bf16's, which reads "
            "the span: for one large matrix product it is the device's own "
            "time, without the host's part of the call.")


def scan_clocks(data: dict[str, Any], where: str) -> str:
    """The unrolled loop's run time over the scan's at the longest
    length by both clocks, naming the one the verdict uses and saying so
    when the two disagree on which is faster: on a CPU, where the
    profiler slows the span, the wall clock then decides; elsewhere
    neither is clearly faster."""
    r = claims.scan_ratios(data)
    said = (f"{where}, at {r['length']} steps, the unrolled loop ran "
            f"{claims.times(r['run'])} times the scan's time by the wall "
            "clock, the clock the verdict at the end of the chapter uses")
    span = r["device run"]
    if span is None:
        return said + "."
    if (span > 1) == (r["run"] > 1):
        return f"{said}, and {claims.times(span)} times by the span."
    if claims.measured_on_cpu(data):
        # The clock note says why the span does not decide on a CPU.
        return (f"{said}, but {claims.times(span)} times by the span, "
                "which the profiler slows on this machine, so the wall "
                "clock decides.")
    return (f"{said}, but {claims.times(span)} times by the span: the two "
            "clocks disagree on which version is faster, so at these "
            "sizes neither is clearly faster.")
