"""Chapter 6's sentences about the reference GPU, computed from its data.

A flag's effect is real only when it shows in the compiled program and
its time differs from the default's by more than the same program differs
from itself in another process (the noise between processes). Recordings
since the first H100 visit run the default twice (`flag_runs.AGAIN`) and
automatic PGLE's baseline twice, and keep a digest of each module; the
first recording has neither, so its sentences say what they could not
check, and use the one same-program pair it has (the small-kernel loop,
timed by `flag_runs.measure` and, without PGLE, by `flag_runs.measure_jit`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page.prose import and_list
from helpers.workbook.ch06_xla_flags import flag_runs

LAUNCHES = ("fusion kinds", "custom calls", "kernels")
# Two times within this share of each other are the same.
SAME = 0.05


def _rows(data: dict[str, Any], program: str) -> dict[str, dict[str, Any]]:
    return {row["flags"]: row for row in data["rows"]
            if row["program"] == program and "error" not in row}


def noise(data: dict[str, Any], program: str) -> float | None:
    """The relative difference between two processes running the same
    program with no flags, or None when the recording has no such pair."""
    rows = _rows(data, program)
    if "(none)" in rows and flag_runs.AGAIN in rows:
        return abs(rows[flag_runs.AGAIN]["median s"]
                   / rows["(none)"]["median s"] - 1)
    return None


def threshold(data: dict[str, Any], program: str, flag: str
              ) -> float | None:
    """How far a setting's time must move from the default's to count:
    the larger of the noise between processes (`noise`) and the spread
    within a run (IQR over median) of the default and of the setting. A
    difference smaller than the spread of the samples it compares is not
    one a median can show. None without the noise."""
    floor = noise(data, program)
    rows = _rows(data, program)
    if floor is None or flag not in rows:
        return floor
    spreads = [rows[name].get("spread") or 0.0 for name in ("(none)", flag)]
    return max(floor, *spreads)


def same_module(row: dict[str, Any], default: dict[str, Any]
                ) -> bool | None:
    """Whether a setting compiled the default's optimised HLO (by the
    modules' digests), or None when the recording kept no digests."""
    if "module" in row and "module" in default:
        return bool(row["module"] == default["module"])
    return None


def setting(data: dict[str, Any], program: str, flag: str) -> str | None:
    """One flag's effect on one program against the default: in time,
    against the noise between processes, and in the compiled module."""
    rows = _rows(data, program)
    if "(none)" not in rows or flag not in rows:
        return None
    default, row = rows["(none)"], rows[flag]
    ratio = row["median s"] / default["median s"]
    same = same_module(row, default)
    between = noise(data, program)
    floor = threshold(data, program, flag)
    text = f"`{flag}` took {ratio:.2f} times the default's time on *{program}*"
    if floor is None:  # `unjudged` says so once, for every setting
        real = None
    else:
        real = abs(ratio - 1) > floor
        what = ("the same program's difference from itself in another "
                "process" if floor == between else
                "the spread of the times within a run")
        text += (f", {'beyond' if real else 'within'} the noise ({floor:.1%}"
                 f": {what})")
    if same is None:
        module = ("; its kinds and count of kernels "
                  + ("are the default's" if all(
                      row.get(k) == default.get(k) for k in LAUNCHES)
                     else "differ from the default's"))
    elif same:
        module = ("; it compiled the same optimised HLO as the default"
                  + (", so it acts after the HLO (on how the kernels are "
                     "launched or tuned)" if real else
                     ": the flag changed nothing measurable"
                     if real is False else ""))
    else:
        module = "; it compiled a different program"
    verdict = ("" if real is None else
               " A real effect." if real else " No effect shown.")
    return text + module + "." + verdict


def profiler_inflation(data: dict[str, Any], gpu: str) -> str | None:
    """Where the device span, measured under the profiler, is longer than
    the whole call unprofiled (by the wall clock): the profiler's own cost
    on each kernel of a many-kernel program. Then the unprofiled wall
    clock is the better measure, and each setting is read by it too.
    None where no program's span exceeds its call."""
    said = []
    for program in dict.fromkeys(row["program"] for row in data["rows"]):
        rows = _rows(data, program)
        default = rows.get("(none)")
        if default is None or not default.get("wall s") or \
                default["median s"] <= default["wall s"] * (1 + SAME):
            continue
        by_wall = [f"`{flag}` took {row['wall s'] / default['wall s']:.2f} "
                   "times the default's" for flag, row in rows.items()
                   if flag not in ("(none)", flag_runs.AGAIN)
                   and row.get("wall s")]
        said.append(
            f"*{program}*'s device span under the profiler, "
            f"{default['median s'] * 1e3:.3g} ms, is "
            f"{default['median s'] / default['wall s']:.2f} times its whole "
            f"unprofiled call ({default['wall s'] * 1e3:.3g} ms by the wall "
            "clock): running under the profiler, which records each of its "
            f"{default['kernels']} kernels, made it slower, so its spans "
            "overstate the program's time. By the unprofiled wall clock, "
            + and_list(by_wall) + _wall_noise(rows) + ".")
    return (f"On the {gpu}, " + " ".join(said)) if said else None


def _wall_noise(rows: dict[str, dict[str, Any]]) -> str:
    """The default's two processes apart by the wall clock, as a clause."""
    again, default = rows.get(flag_runs.AGAIN), rows["(none)"]
    if not again or not again.get("wall s"):
        return ""
    apart = abs(again["wall s"] / default["wall s"] - 1)
    return (f", where the default's second process differed from its first "
            f"by {apart:.1%}")


def decided(data: dict[str, Any], program: str, flag: str) -> bool:
    """Whether the recording decides a setting: it ran without error, the
    default ran twice (the noise is known) and both modules' digests were
    kept (the compiled programs can be compared)."""
    rows = _rows(data, program)
    return (flag in rows and "(none)" in rows
            and noise(data, program) is not None
            and same_module(rows[flag], rows["(none)"]) is not None)


def unjudged(data: dict[str, Any], program: str) -> str | None:
    """Once for a recording that cannot judge its settings: what it
    lacks (a second run of the default, the modules' digests). None when
    it has both."""
    rows = _rows(data, program)
    missing = []
    if noise(data, program) is None:
        missing.append("ran the default once, so the noise between two "
                       "processes is not known and no difference is judged")
    if rows and not any("module" in row for row in rows.values()):
        missing.append("kept no digest of the compiled modules, so they "
                       "are compared by their kernels only")
    if not missing:
        return None
    return "This recording " + ", and ".join(missing) + "."


def autotuning(data: dict[str, Any], gpu: str) -> str | None:
    """What turning autotuning off cost at run time and saved at compile
    time, for the matmul with its epilogue."""
    rows = _rows(data, "matmul_epilogue")
    off, default = rows.get("--xla_gpu_autotune_level=0"), rows.get("(none)")
    if off is None or default is None:
        return None
    run = off["median s"] / default["median s"]
    compile_saved = default["compile s"] / off["compile s"]
    verdict = ("autotuning's search is worth its compile time many times "
               "over" if run > 2 else
               "autotuning bought little at run time for this program")
    return (f"On the {gpu}, with autotuning off "
            "(`--xla_gpu_autotune_level=0`) the bf16 matmul with its "
            f"epilogue ran {run:.1f} times as long and compiled "
            f"{compile_saved:.1f} times as fast: {verdict}. XLA:GPU then "
            "takes the first candidate kernel it generates instead of "
            "timing them.")


def pgle(data: dict[str, Any], gpu: str) -> str | None:
    """Automatic PGLE against the same program without it, judged against
    the difference between two processes running that program."""
    auto = data.get("auto_pgle", {})
    without, with_pgle = auto.get("without"), auto.get("with")
    if without is None or with_pgle is None:
        return None
    ratio = with_pgle["median s"] / without["median s"]
    again = auto.get("without, again")
    if again is not None:
        floor = abs(again["median s"] / without["median s"] - 1)
        pair = "a second process without PGLE"
    else:
        other = _rows(data, "small_kernels").get("(none)")
        if other is None:
            return None
        floor = abs(other["median s"] / without["median s"] - 1)
        pair = "the same program without PGLE in the flags table's process"
    compiled = with_pgle["compilations"] == without["compilations"] + 1
    note = "" if compiled else ": no recompilation"
    text = (f"On the {gpu}, the small-kernel loop took {ratio:.2f} times as "
            f"long with automatic PGLE as without "
            f"({with_pgle['compilations']} compilations against "
            f"{without['compilations']}{note}). {pair[0].upper()}"
            f"{pair[1:]} differed by {floor:.0%}, ")
    if abs(ratio - 1) > floor:
        return text + "less than PGLE's difference: a real effect."
    return text + ("more than PGLE's difference: no effect shown. On one "
                   "GPU there is no communication for PGLE's schedule to "
                   "overlap.")


def table(data: dict[str, Any]) -> pd.DataFrame:
    """The recording's rows as a page shows them: program and setting as
    the index (a flag without its ``--xla_gpu_`` prefix), the median in
    ms, the kernels, and the fusion kinds as words (``kCustom 1, kLoop
    1``); columns empty in every row are left out. (The compile times are
    in the figure and the autotuning paragraph.)"""
    rows = []
    for row in data["rows"]:
        shown = {"program": row["program"],
                 "setting": row["flags"].removeprefix("--xla_gpu_"),
                 "ms": row.get("median s", float("nan")) * 1e3,
                 "kernels": row.get("kernels")}
        for column, header in zip(LAUNCHES[:2], ("fusions", "custom calls")):
            counts = row.get(column) or {}
            shown[header] = ", ".join(f"{k} {n}" for k, n in counts.items())
        if "error" in row:
            shown["error"] = row["error"]
        rows.append(shown)
    frame = pd.DataFrame(rows).set_index(["program", "setting"])
    return frame.loc[:, frame.replace("", None).notna().any()]
