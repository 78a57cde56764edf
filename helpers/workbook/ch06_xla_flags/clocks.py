"""Chapter 6's two clocks: the device span under the profiler and the
unprofiled wall clock of the same call. The profiler records each kernel,
which slows a program of many small kernels; where the span comes out
longer than the whole unprofiled call, the span overstates the program's
time and the wall clock is the measure to read (section 6.4's settings,
section 6.5's automatic PGLE, on the reference GPU and on this machine).

A difference by the wall clock is judged against the same program's
difference from itself in a second process and, where the run kept it
(``wall spread``, from `flag_runs.measure_jit` and `flag_runs.measure`),
the spread of the wall times within a run. The first H100 recording ran
PGLE's baseline once; its sentences use the one same-program pair it has
(the small-kernel loop, timed by `flag_runs.measure` and, without PGLE,
by `flag_runs.measure_jit`).
"""

from __future__ import annotations

from typing import Any

from helpers.workbook.ch06_xla_flags import flag_runs
from helpers.workbook.ch06_xla_flags.verdicts import SAME, duration, runs


def span_inflation(whose: str, default: dict[str, Any]) -> str | None:
    """A sentence on ``whose`` device span against its unprofiled call
    when the span is longer by more than `SAME` (``default`` holds
    ``median s``, ``wall s`` and perhaps ``kernels``); None otherwise."""
    if not default.get("wall s") or \
            default["median s"] <= default["wall s"] * (1 + SAME):
        return None
    kernels = (f"each of its {default['kernels']} kernels"
               if default.get("kernels") else "each of its kernels")
    return (f"{whose} device span under the profiler, "
            f"{duration(default['median s'])}, is "
            f"{default['median s'] / default['wall s']:.2f} times its whole "
            f"unprofiled call ({duration(default['wall s'])} by the wall "
            f"clock): running under the profiler, which records {kernels}, "
            "made it slower, so its spans overstate the program's time.")


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
        if not default or span_inflation("", default) is None:
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


def pgle_comparison(auto: dict[str, Any], where: str,
                    other: dict[str, Any] | None = None) -> str | None:
    """Automatic PGLE against the same program without it, by the span,
    judged against the difference between two processes without it
    (``auto``'s ``"without, again"``, else ``other``, the same program
    timed in another process). Ends with ``'a real effect.'`` or ``'no
    effect shown.'``; None without the runs."""
    without, with_pgle = auto.get("without"), auto.get("with")
    again = auto.get("without, again")
    if without is None or with_pgle is None or (again or other) is None:
        return None
    ratio = with_pgle["median s"] / without["median s"]
    pair = ("A second process without PGLE" if again is not None else
            "The same program without PGLE in the flags table's process")
    floor = abs((again or other or {})["median s"] / without["median s"] - 1)
    text = (f"{where}, the small-kernel loop took {ratio:.2f} times as long "
            f"with automatic PGLE as without "
            f"({duration(with_pgle['median s'])} against "
            f"{duration(without['median s'])}{_compilations(auto)}). "
            f"{pair} differed by {floor:.0%}, ")
    if abs(ratio - 1) > floor:
        return text + "less than PGLE's difference: a real effect."
    return text + "more than PGLE's difference: no effect shown."


def _compilations(auto: dict[str, Any]) -> str:
    """The compilations with PGLE and without, as a clause."""
    with_pgle, without = auto["with"], auto["without"]
    note = ("" if with_pgle["compilations"] == without["compilations"] + 1
            else ": no recompilation")
    return (f"; {with_pgle['compilations']} compilations against "
            f"{without['compilations']}{note}")


def pgle_by_wall(auto: dict[str, Any], kernels: int | None = None
                 ) -> str | None:
    """Where the loop's span without PGLE exceeds its call
    (`span_inflation`): PGLE's runs by the unprofiled wall clock, judged
    against the two processes without PGLE and the spread of the wall
    times; a difference beyond the processes of a run that kept no
    spread is a reason to measure again, not a verdict. None where the
    span is within its call."""
    without, with_pgle = auto.get("without"), auto.get("with")
    if without is None or with_pgle is None:
        return None
    first = span_inflation("Without PGLE, the small-kernel loop's",
                           {**without, "kernels": kernels})
    if first is None or not with_pgle.get("wall s"):
        return first
    moved = with_pgle["wall s"] / without["wall s"]
    text = (f"{first} By the unprofiled wall clock, with automatic PGLE it "
            f"took {moved:.2f} times the time without")
    judged = wall_noise(without, auto.get("without, again"), with_pgle)
    if judged is None:
        return text + "."
    apart, spread = judged
    text += (f", where the second process without PGLE differed from its "
             f"first by {apart:.1%}")
    if spread is not None:
        text += (f" and the wall times within a run spread by up to "
                 f"{spread:.1%}")
    if abs(moved - 1) <= max(apart, spread or 0.0):
        bound = "that" if spread is None else "the larger of the two"
        return text + (". By the wall clock PGLE's difference is no larger "
                       f"than {bound}: no effect shown.")
    if spread is None:
        return text + (". By the wall clock PGLE's difference is larger "
                       "than that.")
    return text + (". By the wall clock PGLE's difference is larger than "
                   "both: a real effect.")


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
