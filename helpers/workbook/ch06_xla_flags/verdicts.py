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

from helpers.page import prose, tables
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


def digests_agree(data: dict[str, Any], program: str) -> bool | None:
    """Whether the default's two processes compiled modules with the same
    digest, or None without both digests. Where they differ, the digest
    is not a stable name for the program, and a setting's different
    digest shows nothing."""
    rows = _rows(data, program)
    pair = [rows.get(name, {}).get("module") for name in ("(none)",
                                                           flag_runs.AGAIN)]
    return None if None in pair else pair[0] == pair[1]


def _judged(data: dict[str, Any], program: str, flag: str
            ) -> tuple[float, float | None, bool | None] | None:
    """A setting's time over the default's, the noise it must beat
    (`threshold`) and whether its module is the default's (None where
    the digests cannot tell); None without both rows."""
    rows = _rows(data, program)
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


def settings_table(data: dict[str, Any]) -> pd.DataFrame:
    """Each setting against its program's default, in words: its time
    as a multiple of the default's, the noise it had to beat
    (`threshold`), whether it beat it, and whether it compiled the
    default's module (by digest)."""
    rows = []
    for program, flag in _settings(data):
        ratio, floor, same = _judged(data, program, flag) or (None, None,
                                                              None)
        rows.append({
            "program": program, "setting": flag.removeprefix("--xla_gpu_"),
            "× default": "—" if ratio is None else times(ratio),
            "noise": "—" if floor is None else f"{floor:.1%}",
            "beyond noise": "—" if floor is None or ratio is None
            else "yes" if abs(ratio - 1) > floor else "no",
            "same module": {True: "yes", False: "no",
                            None: "cannot tell"}[same]})
    return pd.DataFrame(rows).set_index(["program", "setting"])


def _module_words(data: dict[str, Any], program: str, flag: str,
                  same: bool | None) -> str:
    """What a setting's compiled module was, as a clause: by digest, or,
    in a recording without digests, by its kinds and count of kernels."""
    if same is not None:
        return (" with the same compiled module" if same else
                " with a different compiled module")
    rows = _rows(data, program)
    if any("module" in row for row in rows.values()):
        return ""  # digests kept, but the default's two disagree
    alike = all(rows[flag].get(k) == rows["(none)"].get(k)
                for k in LAUNCHES)
    return (" with the default's kinds and count of kernels" if alike else
            " with kinds or counts of kernels unlike the default's")


def _clause(data: dict[str, Any], program: str, flag: str) -> str:
    """One setting's outcome in a clause: its time beyond the noise or
    not, and its compiled module."""
    ratio, floor, same = _judged(data, program, flag) or (1.0, None, None)
    module = _module_words(data, program, flag, same)
    if floor is None:  # `unjudged` says why, once
        return f"`{flag}` took {times(ratio)} times the default's time{module}"
    if abs(ratio - 1) <= floor:
        return f"`{flag}` stayed within it{module}"
    after = (", so it acts after the HLO (on how kernels are launched or "
             "tuned)" if same else "")
    return (f"`{flag}` took {times(ratio)} times the default's "
            f"time{module}{after}")


def settings_story(data: dict[str, Any], gpu: str) -> str | None:
    """What every setting did on the reference GPU, the noise said once:
    a clause per setting, then what the recording cannot judge."""
    settings = _settings(data)
    if not settings:
        return None
    programs = list(dict.fromkeys(program for program, _ in settings))
    floors = [threshold(data, program, flag) for program, flag in settings]
    known = [floor for floor in floors if floor is not None]
    text = f"On the {gpu}, "
    if known:
        text += ("a setting's time counts as changed only beyond the "
                 "noise: the larger of the default's difference from "
                 "itself in a second process and the spread of the times "
                 f"within a run, from {min(known):.1%} to "
                 f"{max(known):.1%} here (the table gives each). ")
    text += ("Setting by setting, " + "; ".join(
        _clause(data, program, flag) for program, flag in settings) + ".")
    unstable = [p for p in programs if digests_agree(data, p) is False]
    if unstable:
        text += (" On " + prose.and_list(f"*{p}*" for p in unstable)
                 + " the default's two processes compiled modules with "
                 "different digests, so there a digest cannot tell whether "
                 "a setting changed the program.")
    caveats = {unjudged(data, program) for program in programs}
    return " ".join([text, *sorted(c for c in caveats if c)])


def profiler_inflation(data: dict[str, Any], gpu: str) -> str | None:
    """Where the device span, measured under the profiler, is longer than
    the whole call unprofiled (by the wall clock): the profiler's own cost
    on each kernel of a many-kernel program. Then the unprofiled wall
    clock is the better measure, and each setting is read by it too.
    None where no program's span exceeds its call."""
    said = []
    for program in dict.fromkeys(row["program"] for row in data["rows"]):
        rows = _rows(data, program)
        if "(none)" not in rows:
            continue
        others = {f"`{flag}`": row for flag, row in rows.items()
                  if flag not in ("(none)", flag_runs.AGAIN)}
        said.append(span_over_call(
            f"*{program}*'s", rows["(none)"], others, "the default's",
            rows.get(flag_runs.AGAIN), "the default's second process"))
    found = [sentence for sentence in said if sentence]
    return (f"On the {gpu}, " + " ".join(found)) if found else None


def span_over_call(whose: str, default: dict[str, Any],
                   others: dict[str, dict[str, Any]], baseline: str,
                   again: dict[str, Any] | None = None, again_name: str = ""
                   ) -> str | None:
    """`profiler_inflation`'s sentences for one program: ``whose`` device
    span against its unprofiled call, each of ``others`` by the wall
    clock against ``baseline`` (``"the default's"``), and how far
    ``again``, a second process of the default (called ``again_name``),
    was from it. None when the span is within its call."""
    if not default.get("wall s") or \
            default["median s"] <= default["wall s"] * (1 + SAME):
        return None
    by_wall = [f"{name} took {row['wall s'] / default['wall s']:.2f} times "
               f"{baseline}" for name, row in others.items()
               if row.get("wall s")]
    kernels = (f"each of its {default['kernels']} kernels"
               if default.get("kernels") else "each of its kernels")
    text = (f"{whose} device span under the profiler, "
            f"{duration(default['median s'])}, is "
            f"{default['median s'] / default['wall s']:.2f} times its whole "
            f"unprofiled call ({duration(default['wall s'])} by the wall "
            f"clock): running under the profiler, which records {kernels}, "
            "made it slower, so its spans overstate the program's time. By "
            "the unprofiled wall clock, " + and_list(by_wall))
    if again and again.get("wall s"):
        apart = abs(again["wall s"] / default["wall s"] - 1)
        text += f", where {again_name} differed from its first by {apart:.1%}"
    return text + "."


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


def pgle_comparison(auto: dict[str, Any], where: str,
                    other: dict[str, Any] | None = None) -> str | None:
    """Automatic PGLE against the same program without it, judged against
    the difference between two processes without it (``auto``'s
    ``"without, again"``, else ``other``, the same program timed in
    another process). Ends with ``'a real effect.'`` or ``'no effect
    shown.'``; None without the runs."""
    without, with_pgle = auto.get("without"), auto.get("with")
    again = auto.get("without, again")
    if without is None or with_pgle is None or (again or other) is None:
        return None
    ratio = with_pgle["median s"] / without["median s"]
    pair = ("A second process without PGLE" if again is not None else
            "The same program without PGLE in the flags table's process")
    floor = abs((again or other or {})["median s"] / without["median s"] - 1)
    note = ("" if with_pgle["compilations"] == without["compilations"] + 1
            else ": no recompilation")
    text = (f"{where}, the small-kernel loop took {ratio:.2f} times as long "
            f"with automatic PGLE as without "
            f"({duration(with_pgle['median s'])} against "
            f"{duration(without['median s'])}; "
            f"{with_pgle['compilations']} compilations against "
            f"{without['compilations']}{note}). {pair} differed by "
            f"{floor:.0%}, ")
    if abs(ratio - 1) > floor:
        return text + "less than PGLE's difference: a real effect."
    return text + "more than PGLE's difference: no effect shown."


def pgle(data: dict[str, Any], gpu: str) -> str | None:
    """`pgle_comparison` on the reference GPU, with why one GPU gives
    PGLE nothing to do."""
    text = pgle_comparison(data.get("auto_pgle", {}), f"On the {gpu}",
                           _rows(data, "small_kernels").get("(none)"))
    if text is None or text.endswith("a real effect."):
        return text
    return text + (" On one GPU there is no communication for PGLE's "
                   "schedule to overlap.")


def pgle_inflation(data: dict[str, Any], gpu: str) -> str | None:
    """`span_over_call` for the PGLE runs: where the loop's span without
    PGLE is longer than its call, the runs by the unprofiled wall clock,
    and whether their difference there beats the two processes without
    PGLE (the recording keeps no spread of the wall times, so a
    difference beyond them is a reason to measure again, not a verdict).
    """
    auto = data.get("auto_pgle", {})
    without, with_pgle = auto.get("without"), auto.get("with")
    if without is None or with_pgle is None:
        return None
    kernels = _rows(data, "small_kernels").get("(none)", {}).get("kernels")
    said = span_over_call(
        "Without PGLE, the small-kernel loop's", {**without,
                                                  "kernels": kernels},
        {"with automatic PGLE it": with_pgle}, "the time without",
        auto.get("without, again"), "the second process without PGLE")
    again = auto.get("without, again")
    if said is None or not again or not with_pgle.get("wall s"):
        return said and f"On the {gpu}, {said[0].lower()}{said[1:]}"
    apart = abs(again["wall s"] / without["wall s"] - 1)
    moved = abs(with_pgle["wall s"] / without["wall s"] - 1)
    return (f"On the {gpu}, {said[0].lower()}{said[1:]} " + (
        "By the wall clock PGLE's difference is larger than that, but the "
        "recording keeps no spread of the wall times: a reason to measure "
        "again, not a verdict." if moved > apart else
        "By the wall clock, too, PGLE's difference is no larger than the "
        "two processes without it: no effect shown."))


def table(data: dict[str, Any]) -> pd.DataFrame:
    """The recording's rows as a page shows them: program and setting as
    the index (a flag without its ``--xla_gpu_`` prefix), the medians in
    ms (the device span under the profiler, the unprofiled wall clock),
    the kernels, and the fusion kinds as words (``kCustom 1, kLoop
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
    frame = pd.DataFrame(rows).set_index(["program", "setting"])
    return frame.loc[:, frame.replace("", None).notna().any()]
