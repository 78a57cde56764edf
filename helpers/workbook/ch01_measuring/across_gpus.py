"""Chapter 1's measurements on every recorded GPU, side by side.

The prose quotes the reference GPU. Where another GPU was recorded too
(`helpers.measuring.results.other_gpus`), the chapter shows its numbers
beside the reference's in one table, and a sentence computed from both
says where they differ: which ceiling moved, and whether the chapter's
goal (calls back to back agree with device time) holds on each.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.workbook.ch01_measuring import recording, verdicts

# Two costs within this factor of each other count as the same.
SAME_COST = 1.25


def row(data: dict[str, Any]) -> dict[str, Any]:
    """One GPU's headline numbers from its ``01_measuring/summary`` data:
    the two ceilings, the host's part of a blocked call, and the goal's
    ratio (None where the recording does not hold it)."""
    copy, matmul = recording.copy_rates(data), recording.matmul_rates(data)
    return {"clock": "device" if recording.by_device_clock(data)
            else "wall",
            "copy GB/s": copy.device,
            "TF32 TFLOP/s": matmul.default,
            "highest TFLOP/s": matmul.highest,
            "host µs a call": copy.overhead_us,
            "back to back / device": verdicts.back_to_back_agreement(data)}


def table(results: list[Any]) -> pd.DataFrame:
    """`row` for each recording (`helpers.measuring.results.Result`),
    indexed by the name the text calls its device (``'H100'``); the
    reference first."""
    return pd.DataFrame([row(r.data) for r in results],
                        index=pd.Index([r.short_name for r in results],
                                       name="GPU"))


def compare(reference: dict[str, Any], other: dict[str, Any],
            reference_gpu: str, other_gpu: str) -> str | None:
    """Where ``other`` differs from ``reference``: its ceilings as ratios
    of the reference's, and the goal's outcome on each. None unless both
    recordings are by device time (wall-clock ceilings hold the host)."""
    if not (recording.by_device_clock(reference)
            and recording.by_device_clock(other)):
        return None
    ref, new = row(reference), row(other)
    copy = new["copy GB/s"] / ref["copy GB/s"]
    matmul = new["TF32 TFLOP/s"] / ref["TF32 TFLOP/s"]
    text = (f"By device time, the {other_gpu}'s copy ceiling is "
            f"{copy:.2f} times the {reference_gpu}'s "
            f"({new['copy GB/s']:.4g} against {ref['copy GB/s']:.4g} "
            f"GB/s), and its TF32 matmul rate {matmul:.2f} times "
            f"({new['TF32 TFLOP/s']:.4g} against "
            f"{ref['TF32 TFLOP/s']:.4g} TFLOP/s).")
    if copy > 1 + verdicts.AGREEMENT and \
            abs(matmul - 1) <= verdicts.AGREEMENT:
        text += (f" Of the two ceilings only the memory's is higher: a "
                 f"memory-bound kernel's floor there is {1 / copy:.0%} of "
                 f"the {reference_gpu}'s, a compute-bound one's the same.")
    return text + " " + _goal_on_both(reference, other, reference_gpu,
                                      other_gpu)


def _goal_on_both(reference: dict[str, Any], other: dict[str, Any],
                  reference_gpu: str, other_gpu: str) -> str:
    """The goal on each GPU, with the time a call adds beyond its
    kernel's span, which decides it."""
    parts, added = [], {}
    for data, gpu in ((reference, reference_gpu), (other, other_gpu)):
        ratio = verdicts.back_to_back_agreement(data)
        if ratio is None:
            parts.append(f"the {gpu}'s recording timed no calls back to "
                         "back")
            continue
        large = recording.profile_rows(data).iloc[-1]
        added[gpu] = large["back_to_back_us"] - large["span_us"]
        met = abs(ratio - 1) <= verdicts.AGREEMENT
        parts.append(f"on the {gpu} a call added "
                     f"{added[gpu]:.3g} µs to its {large['span_us']:.4g} "
                     f"µs span ({ratio:.3f}: "
                     f"{'within' if met else 'outside'} "
                     f"{verdicts.AGREEMENT:.0%})")
    text = ("Timed back to back, where the chapter's goal asks them to "
            f"agree with device time to {verdicts.AGREEMENT:.0%}, "
            + "; ".join(parts) + ".")
    if len(added) == 2:
        (short, low), (long, high) = sorted(added.items(),
                                            key=lambda item: item[1])
        text += (" The time added a call is about the same on both, so it "
                 "is a larger share of the shorter kernel."
                 if high <= SAME_COST * low else
                 f" A call on the {long} adds {high / low:.1f} times what "
                 f"one on the {short} adds. Each GPU sat in its own host, "
                 "and these recordings do not say where the added time "
                 "goes (a profile of the calls back to back would).")
    return text
