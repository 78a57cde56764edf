"""Chapter 1's measurements on every recorded GPU, side by side.

The prose quotes the reference GPU. Where another GPU was recorded too
(`helpers.measuring.results.other_gpus`), the chapter shows its numbers
beside the reference's in one table (`table`), and a written paragraph
quotes where they differ (`comparison_numbers`): which ceiling moved,
and whether the chapter's goal (calls back to back agree with device
time) holds on each.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.workbook.ch01_measuring import recording, verdicts

def row(data: dict[str, Any]) -> dict[str, Any]:
    """One GPU's headline numbers from its ``01_measuring/summary`` data:
    the clock that timed it, the two ceilings, the host's part of a
    blocked call, and the goal's ratio."""
    copy, matmul = recording.copy_rates(data), recording.matmul_rates(data)
    return {"clock": data["clock"],
            "copy GB/s": copy.device,
            "default float32 TFLOP/s": matmul.default,  # TF32 from Ampere on
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


def comparison_numbers(reference: dict[str, Any], other: dict[str, Any]
                       ) -> dict[str, float]:
    """Where ``other`` differs from ``reference`` (both by device time):
    its ceilings over the reference's (``copy_ratio``, ``matmul_ratio``),
    a memory-bound floor there as a share of the reference's
    (``floor_share``), and the goal on each: the time a large call adds
    back to back beyond its kernel's span (``*_added_us``), the span, and
    their ratio (``*_agreement``; the goal is within
    `verdicts.AGREEMENT` of 1)."""
    ref, new = row(reference), row(other)
    numbers = {"other_copy_gbps": new["copy GB/s"],
               "copy_ratio": new["copy GB/s"] / ref["copy GB/s"],
               "matmul_ratio": (new["default float32 TFLOP/s"]
                                / ref["default float32 TFLOP/s"]),
               "floor_share": ref["copy GB/s"] / new["copy GB/s"]}
    for name, data in (("reference", reference), ("other", other)):
        large = recording.profile_rows(data).iloc[-1]
        numbers[f"{name}_added_us"] = (large["back_to_back_us"]
                                       - large["span_us"])
        numbers[f"{name}_span_us"] = large["span_us"]
        numbers[f"{name}_agreement"] = verdicts.back_to_back_agreement(data)
    numbers["added_ratio"] = (numbers["other_added_us"]
                              / numbers["reference_added_us"])
    return numbers
