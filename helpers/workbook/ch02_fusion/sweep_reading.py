"""How chapter 2 names the kernel that ran a point of its sweep.

On today's XLA:GPU the fusion autotuner may hand a reduction to a Triton
fusion (kind ``kCustom``; the fusion's name keeps the kind XLA's rule
gave it) or keep XLA's own emitter. The sweep's ``fusions`` column says
which, so the chapter names the kernel that ran each slow point
(`helpers.workbook.ch02_fusion.numbers.slowest`) rather than the kind
the rule predicted.
"""

from __future__ import annotations

# The slowest points a sentence names, per dtype.
SHOWN = 2


def kernel_in_words(fusions: str) -> str:
    """A sweep row's ``fusions`` as a reader says it.

    Example:
        >>> kernel_in_words("kCustom (named kLoop) reduce")
        'a Triton fusion'
        >>> kernel_in_words("kInput reduce")
        "XLA's own kInput emitter"
    """
    if fusions.startswith("kCustom"):
        return "a Triton fusion"
    return f"XLA's own {fusions.split()[0]} emitter"
