"""Chapter 6's two clocks: the device span under the profiler and the
unprofiled wall clock of the same call. The profiler records each kernel,
which slows a program of many small kernels; where the span comes out
longer than the whole unprofiled call, the span overstates the program's
time and the wall clock is the measure to read (section 6.4's settings,
section 6.5's automatic PGLE, on the reference GPU and on this machine).

A difference by the wall clock is judged against the same program's
difference from itself in a second process and, where the run kept it
(``wall spread``, from `flag_runs.measure_jit` and `flag_runs.measure`),
the spread of the wall times within a run.
"""

from __future__ import annotations

from typing import Any

from helpers.workbook.ch06_xla_flags import flag_runs
from helpers.workbook.ch06_xla_flags.verdicts import SAME, runs


def span_over_call(default: dict[str, Any]) -> bool:
    """Whether a run's device span under the profiler is longer than its
    whole unprofiled call by more than `SAME` (``default`` holds
    ``median s`` and ``wall s``): the profiler, recording each kernel,
    slowed it, so its spans overstate the program's time."""
    return bool(default.get("wall s")) and \
        default["median s"] > default["wall s"] * (1 + SAME)


def wall_noise(default: dict[str, Any], again: dict[str, Any] | None,
               *others: dict[str, Any]) -> tuple[float, float | None] | None:
    """By the wall clock: how far ``again`` (the default in a second
    process) was from ``default``, and the largest spread of the wall
    times within the runs (``default``, ``again`` and ``others``), or
    None for it where a run kept none. None without both wall clocks."""
    if not again or not again.get("wall s") or not default.get("wall s"):
        return None
    spreads = [run.get("wall spread") for run in (default, again, *others)]
    known = [float(spread) for spread in spreads if spread is not None]
    return (abs(again["wall s"] / default["wall s"] - 1),
            max(known) if len(known) == len(spreads) else None)


def inflated_programs(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """For each program whose default's span exceeds its unprofiled call
    by more than `SAME`: that span and call (s), their ratio, its kernels a
    call, how far the default's second process was from its first by the
    wall clock (``apart``), and the settings whose wall time moved
    further than that (``beyond``)."""
    found = {}
    for program in dict.fromkeys(row["program"] for row in data["rows"]):
        rows = runs(data, program)
        default = rows.get("(none)")
        if not default or not span_over_call(default):
            continue
        others = {flag: row for flag, row in rows.items()
                  if flag not in ("(none)", flag_runs.AGAIN)
                  and row.get("wall s")}
        judged = wall_noise(default, rows.get(flag_runs.AGAIN),
                            *others.values())
        apart = None if judged is None else judged[0]
        floor = max(judged[0], judged[1] or 0.0) if judged else None
        found[program] = {
            "span": default["median s"], "call": default["wall s"],
            "ratio": default["median s"] / default["wall s"],
            "kernels": default.get("kernels"), "apart": apart,
            "beyond": [] if floor is None else [
                flag for flag, row in others.items()
                if abs(row["wall s"] / default["wall s"] - 1) > floor]}
    return found


def pgle_numbers(data: dict[str, Any]) -> dict[str, Any] | None:
    """Automatic PGLE on the small-kernel loop (``data``'s ``auto_pgle``
    run and the settings' default run), for the page's paragraph: the
    loop's span without PGLE (s) against its unprofiled call (``wall``,
    s), the kernels a call, PGLE's time over the time without by the
    unprofiled wall clock, and how far a second process without PGLE was
    from the first (``apart``). None without the runs."""
    auto = data.get("auto_pgle", {})
    without, with_pgle = auto.get("without"), auto.get("with")
    again = auto.get("without, again")
    if not (without and with_pgle and again and without.get("wall s")
            and with_pgle.get("wall s") and again.get("wall s")):
        return None
    return {"span": without["median s"], "wall": without["wall s"],
            "span_over_call": without["median s"] / without["wall s"],
            "kernels": runs(data, "small_kernels").get(
                "(none)", {}).get("kernels"),
            "pgle_over_without": with_pgle["wall s"] / without["wall s"],
            "apart": abs(again["wall s"] / without["wall s"] - 1)}
