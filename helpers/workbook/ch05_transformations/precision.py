"""Chapter 5's numbers on matmul precision: bf16 against float32, and
float32 at the default precision against 'highest', each read from the
measured table by the clock the verdicts read (`claims.bf16_clock`), so
that the page's paragraph and the closing table read the same numbers.
"""

from __future__ import annotations

from typing import Any

from helpers.workbook.ch05_transformations import claims


def millionths(error: float) -> str:
    """A relative error in millionths, without an exponent: two
    significant figures below 100, whole numbers above (as the field
    guide quotes them).

    Example:
        >>> millionths(2.94e-4), millionths(8.12e-7)
        ('294', '0.81')
    """
    return f"{error * 1e6:.2g}" if error < 1e-4 else f"{error * 1e6:.0f}"




def precision_numbers(data: dict[str, Any]) -> dict[str, Any]:
    """At the largest n of ``data`` (`claims.measure`), by the clock the
    verdicts read: bf16's numbers (`claims.bf16_numbers`), and float32 at
    the default precision against 'highest': ``f32_speedup`` (highest's
    time over the default's), both times in ms and both relative errors,
    and ``f32_error_ratio``, the default's error over highest's."""
    numbers = claims.bf16_numbers(data)
    big = claims.largest(data["precision"], "n")
    ms = big[numbers["clock"]]
    error = big["rel error"]
    default, highest = error[claims.DEFAULT], error[claims.HIGHEST]
    return {**numbers,
            "f32_speedup": ms[claims.HIGHEST] / ms[claims.DEFAULT],
            "default_ms": float(ms[claims.DEFAULT]),
            "highest_ms": float(ms[claims.HIGHEST]),
            "default_error": float(default), "highest_error": float(highest),
            "f32_error_ratio": float(default / highest)}
