"""Chapter 6's sentences and tables about the flag settings on the
reference GPU, computed from its data (`clocks` reads the same data by
the wall clock where the profiler slows a program, and judges PGLE).

A flag's effect is real only when it shows in the compiled program and
its time differs from the default's by more than the same program differs
from itself in another process (the noise between processes). A recording
runs the default twice (`flag_runs.AGAIN`) and keeps a digest of each
module; where a run failed, the sentences say what they could not check.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.page import tables
from helpers.workbook.ch06_xla_flags import flag_runs

LAUNCHES = ("fusion kinds", "custom calls", "kernels")
# Two times within this share of each other are the same.
SAME = 0.05


def runs(data: dict[str, Any], program: str) -> dict[str, dict[str, Any]]:
    """A program's runs that did not fail, by their flags."""
    return {row["flags"]: row for row in data["rows"]
            if row["program"] == program and "error" not in row}


def noise(data: dict[str, Any], program: str) -> float | None:
    """The relative difference between two processes running the same
    program with no flags, or None when the recording has no such pair."""
    rows = runs(data, program)
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
    rows = runs(data, program)
    if floor is None or flag not in rows:
        return floor
    spreads = [rows[name].get("spread") or 0.0 for name in ("(none)", flag)]
    return max(floor, *spreads)


def same_module(row: dict[str, Any], default: dict[str, Any]) -> bool:
    """Whether a setting compiled the default's optimised HLO (by the
    modules' digests)."""
    return bool(row["module"] == default["module"])


def digests_agree(data: dict[str, Any], program: str) -> bool | None:
    """Whether the default's two processes compiled modules with the same
    digest, or None where one of them failed. Where they differ, the
    digest is not a stable name for the program, and a setting's
    different digest shows nothing."""
    rows = runs(data, program)
    pair = [rows.get(name, {}).get("module") for name in ("(none)",
                                                           flag_runs.AGAIN)]
    return None if None in pair else pair[0] == pair[1]


def _judged(data: dict[str, Any], program: str, flag: str
            ) -> tuple[float, float | None, bool | None] | None:
    """A setting's time over the default's, the noise it must beat
    (`threshold`) and whether its module is the default's (None where
    the digests cannot tell); None without both rows."""
    rows = runs(data, program)
    if "(none)" not in rows or flag not in rows:
        return None
    default, row = rows["(none)"], rows[flag]
    same = (same_module(row, default)
            if digests_agree(data, program) is not False else None)
    return (row["median s"] / default["median s"],
            threshold(data, program, flag), same)


def _settings(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(program, flag) of every setting the recording ran, in order."""
    return [(row["program"], row["flags"]) for row in data["rows"]
            if row["flags"] not in ("(none)", flag_runs.AGAIN)
            and "error" not in row]


def times(ratio: float) -> str:
    """A ratio of times as the prose writes it: 1.01, 41.5."""
    return f"{ratio:.3g}" if ratio >= 10 else f"{ratio:.2f}"


def duration(seconds: float) -> str:
    """A time as the prose writes it, in ms from a millisecond up, else in
    µs: ``'1.56 ms'``, ``'288 µs'``."""
    if abs(seconds) >= 1e-3:
        return f"{tables.number(seconds * 1e3)} ms"
    return f"{tables.number(seconds * 1e6)} µs"


def outcome(data: dict[str, Any], program: str, flag: str) -> str | None:
    """``'slower'``, ``'faster'`` or ``'the same'``: a setting's time
    against its default's, judged against the noise (`threshold`); None
    when the recording cannot say (no such run, or the default ran once).
    """
    ratio, floor, _ = _judged(data, program, flag) or (1.0, None, None)
    if floor is None:
        return None
    if abs(ratio - 1) <= floor:
        return "the same"
    return "slower" if ratio > 1 else "faster"


def settings_table(data: dict[str, Any],
                   expected: dict[tuple[str, str], str | None] | None = None
                   ) -> pd.DataFrame:
    """Each setting against its program's default, in words: its time
    as a multiple of the default's, the noise it had to beat
    (`threshold`), which way it ran (`outcome`), what was predicted
    where ``expected`` gives it by (program, flag), and whether it
    compiled the default's module. (The wall clock, which
    `clocks.inflated_programs` reads where the profiler slows a
    program, is in `table`.)"""
    rows = []
    for program, flag in _settings(data):
        ratio, floor, same = _judged(data, program, flag) or (None, None,
                                                              None)
        shown = {"program": program,
                 "setting": flag.removeprefix("--xla_gpu_"),
                 "× default": "—" if ratio is None else times(ratio)}
        shown["noise"] = "—" if floor is None else f"{floor:.1%}"
        # "same" for "the same": the column's header says what it is
        shown["ran"] = (outcome(data, program, flag) or "—"
                        ).removeprefix("the ")
        if expected is not None:
            shown["predicted"] = (expected[program, flag] or "none made"
                                  if (program, flag) in expected else "—"
                                  ).removeprefix("the ")
        shown["same HLO"] = {True: "yes", False: "no",
                             None: "unknown"}[same]
        rows.append(shown)
    return pd.DataFrame(rows).set_index(["program", "setting"])


def settings_numbers(data: dict[str, Any]) -> dict[str, Any] | None:
    """What the paragraph under chapter 6's settings table quotes and
    checks; None without settings.

    Returns:
        ``noise``: the lowest and highest noise a setting was judged
        against (`threshold`), or None where none is known;
        ``moved_after``: the settings that compiled the default's module
        and still moved beyond the noise (they act after the HLO);
        ``unstable``: the programs whose default compiled modules with
        different digests in its two processes; ``judged``: whether every
        program's default ran in both its processes (the noise is known);
        ``ratio`` and ``ran``: each setting's time over its default's, and
        `outcome`'s word for it, by flag.
    """
    settings = _settings(data)
    if not settings:
        return None
    programs = list(dict.fromkeys(program for program, _ in settings))
    known = [floor for program, flag in settings
             if (floor := threshold(data, program, flag)) is not None]
    return {
        "noise": (min(known), max(known)) if known else None,
        "moved_after": [flag for program, flag in settings
                        if outcome(data, program, flag)
                        not in (None, "the same")
                        and (_judged(data, program, flag)
                             or (0, 0, None))[2]],
        "unstable": [p for p in programs if digests_agree(data, p) is False],
        "judged": all(noise(data, p) is not None for p in programs),
        "ratio": {flag: judged[0] for program, flag in settings
                  if (judged := _judged(data, program, flag))},
        "ran": {flag: outcome(data, program, flag)
                for program, flag in settings}}


def decided(data: dict[str, Any], program: str, flag: str) -> bool:
    """Whether the recording decides a setting: it ran without error, the
    default ran twice (the noise is known), and the default's two
    processes compiled the same module, so the setting's digest says
    whether it changed the program (the "same HLO" column is not
    unknown)."""
    rows = runs(data, program)
    return (flag in rows and "(none)" in rows
            and noise(data, program) is not None
            and digests_agree(data, program) is True)


def autotuning_numbers(data: dict[str, Any]) -> dict[str, float] | None:
    """The matmul with its epilogue with autotuning off against its
    default: ``run`` (the time off over the default's) and ``compile``
    (the default's compile time over the time off's). None without both
    runs."""
    rows = runs(data, "matmul_epilogue")
    off, default = rows.get("--xla_gpu_autotune_level=0"), rows.get("(none)")
    if off is None or default is None:
        return None
    return {"run": off["median s"] / default["median s"],
            "compile": default["compile s"] / off["compile s"]}


def table(data: dict[str, Any]) -> pd.DataFrame:
    """The recording's rows as a page shows them: program and setting as
    the index (a flag without its ``--xla_gpu_`` prefix), the medians in
    ms (the device span under the profiler, the unprofiled wall clock),
    the kernels (beside the program's name where every setting ran the
    same count), and the fusion kinds as words (``kCustom 1, kLoop
    1``); columns empty in every row are left out. (The compile times are
    in the figure and the autotuning paragraph.)"""
    rows = []
    for row in data["rows"]:
        shown = {"program": row["program"],
                 "setting": row["flags"].removeprefix("--xla_gpu_"),
                 "span ms": row.get("median s", float("nan"))
                 * 1e3,
                 "wall ms": row.get("wall s", float("nan")) * 1e3,
                 "kernels": row.get("kernels")}
        for column, header in zip(LAUNCHES[:2], ("fusions", "custom calls")):
            counts = row.get(column) or {}
            shown[header] = ", ".join(f"{k} {n}" for k, n in counts.items())
        if "error" in row:
            shown["error"] = row["error"]
        rows.append(shown)
    frame = pd.DataFrame(rows)
    kernels = frame.groupby("program")["kernels"].nunique(dropna=False)
    if (kernels == 1).all() and frame["kernels"].notna().all():
        # the same count in every setting: said once, beside the program
        frame["program"] = [f"{p}, {k:.0f} kernels a call" for p, k in
                            zip(frame["program"], frame["kernels"])]
        frame = frame.drop(columns="kernels")
    frame = frame.set_index(["program", "setting"])
    return frame.loc[:, frame.replace("", None).notna().any()]
