"""Chapter 6's predictions: what each GPU flag setting should do to its
program's time, written down before the measurement, and held against it.

A setting's outcome is ``'slower'`` or ``'faster'`` when its time moved by
more than the noise (`verdicts.threshold`: between two processes, or
within a run, whichever is larger), and ``'the same'`` when it stayed
inside it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from helpers.page.prose import and_list
from helpers.workbook.ch06_xla_flags import verdicts


class Prediction(NamedTuple):
    """What a setting should do to one program's run time, and why."""

    program: str
    flag: str
    expected: str  # 'slower', 'faster' or 'the same'
    because: str


PREDICTIONS = (
    Prediction("matmul_epilogue", "--xla_gpu_triton_gemm_any=false",
               "the same", "compiled for an H100, the module is the same "
               "with the flag or without it (the digests below), so only "
               "a choice the autotuner makes on the device could differ"),
    Prediction("matmul_epilogue", "--xla_gpu_autotune_level=0", "slower",
               "XLA:GPU then runs the first candidate kernel it generates "
               "instead of the fastest it timed"),
    Prediction("small_kernels", "--xla_gpu_enable_command_buffer=",
               "slower", "without CUDA graphs every small kernel is "
               "launched on its own, and chapter 3 measured what a launch "
               "costs"),
    Prediction("small_kernels",
               "--xla_gpu_enable_latency_hiding_scheduler=true",
               "the same", "the scheduler overlaps communication with "
               "compute, and one GPU has no communication"),
)


def outcome(data: dict[str, Any], program: str, flag: str) -> str | None:
    """``'slower'``, ``'faster'`` or ``'the same'`` against the noise
    (`verdicts.threshold`); None when the recording cannot say (no such
    run, or the default ran once)."""
    rows = {row["flags"]: row for row in data["rows"]
            if row["program"] == program and "error" not in row}
    floor = verdicts.threshold(data, program, flag)
    if floor is None or flag not in rows or "(none)" not in rows:
        return None
    ratio = rows[flag]["median s"] / rows["(none)"]["median s"]
    if abs(ratio - 1) <= floor:
        return "the same"
    return "slower" if ratio > 1 else "faster"


def held(data: dict[str, Any], gpu: str,
         predictions: tuple[Prediction, ...] = PREDICTIONS) -> str | None:
    """How many predictions the reference GPU's run bore out, naming each
    one it did not; None when the recording decides none of them."""
    decided = [(p, outcome(data, p.program, p.flag)) for p in predictions]
    decided = [(p, seen) for p, seen in decided if seen is not None]
    if not decided:
        return None
    missed = [f"`{p.flag}` on *{p.program}* was predicted {p.expected} "
              f"and ran {seen}" for p, seen in decided if seen != p.expected]
    if not missed:
        return f"On the {gpu}, all {len(decided)} predictions held."
    return (f"On the {gpu}, {len(decided) - len(missed)} of the "
            f"{len(decided)} predictions held; " + and_list(missed) + ".")


def as_markdown(predictions: tuple[Prediction, ...] = PREDICTIONS) -> str:
    """The predictions as the chapter lists them, one bullet each."""
    return "\n".join(f"- `{p.flag}` on *{p.program}*: **{p.expected}**, "
                      f"since {p.because}." for p in predictions)
