"""Chapter 5's sentences on matmul precision: bf16 against float32, and
float32 at the default precision against 'highest', each read from the
measured table by the clock the verdicts read (`claims.bf16_clock`), so
that this machine's sentence and the closing table say the same thing.
"""

from __future__ import annotations

from typing import Any

from helpers.page.tables import number
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


def float32_precisions(data: dict[str, Any]) -> str:
    """Float32 at the default precision against 'highest' at the largest
    n of ``data`` (`claims.measure`): their errors and times. Where the
    two errors are the same, the backend ran the same arithmetic for
    both, and the sentence says that a gap between their times is the
    run's variation, not the precision's."""
    big = claims.largest(data["precision"], "n")
    clock = claims.bf16_clock(data)
    error = big["rel error"]
    default, highest = error[claims.DEFAULT], error[claims.HIGHEST]
    ms = big[clock]
    ratio = ms[claims.HIGHEST] / ms[claims.DEFAULT]
    both = (f"{number(ms[claims.DEFAULT])} ms against "
            f"{number(ms[claims.HIGHEST])} ms "
            f"{claims.CLOCK_WORDS[clock]}")
    if abs(default / highest - 1) >= 0.01:
        return (f"Float32 itself {claims.ran(ratio)} at the default "
                f"precision as at 'highest' ({both}), for a relative error "
                f"of {millionths(default)} millionths against "
                f"{millionths(highest)}, {default / highest:.0f} times as "
                "large.")
    said = ("Float32 gave the same relative error at the default precision "
            f"as at 'highest', {millionths(default)} millionths: this "
            "backend ran the same arithmetic for both")
    if abs(ratio - 1) < 0.1:
        return f"{said}, and their times agree within 10% ({both})."
    return (f"{said}, so when the default {claims.ran(ratio)} as "
            f"'highest' ({both}), that was the run's variation, not the "
            "precision's.")


def here(data: dict[str, Any], where: str) -> str:
    """bf16 against float32 at the default precision at the largest n of
    this machine's ``data``, by the clock its verdict in the closing table
    reads, then float32's two precisions (`float32_precisions`).
    ``where`` names the machine ('Here (cpu)')."""
    b = claims.bf16_numbers(data)
    big = claims.largest(data["precision"], "n")[b["clock"]]
    verdict = claims.findings(data)[claims.BF16].verdict
    first = (f"{where}, at n = {b['n']}, {claims.BF16_WORDS[b['kind']]} "
             f"{claims.ran(b['default'])} as float32 at the default "
             f"precision {claims.CLOCK_WORDS[b['clock']]} "
             f"({number(big[b['kind']])} ms against "
             f"{number(big[claims.DEFAULT])} ms), with a relative error of "
             f"{b['error']:.2%}: {claims.verdict_clause(verdict)} here.")
    if b["default"] <= 1.1:
        # No faster: the explanation, which the GPU's tensor cores escape.
        first += (" A processor without bf16 matrix units gains nothing "
                  "from bf16: it converts the inputs and multiplies in "
                  "float32.")
    return f"{first} {float32_precisions(data)}"


def speed_against_peaks(data: dict[str, Any], predicted: float) -> str:
    """bf16's speed-up over the default precision against ``predicted``,
    the ratio of the peak rates, as a sentence."""
    share = claims.bf16_numbers(data)["default"] / predicted
    if share >= 0.9:
        return (f"That reaches the speed-up of {predicted:.2g} the peak "
                "rates predict.")
    return (f"That is {share:.0%} of the speed-up of {predicted:.2g} the "
            "peak rates predict.")
