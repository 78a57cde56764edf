"""A sentence the author wrote about the data, and the check beside it.

A chapter's prose is written by its author, its numbers glued in. Where
a sentence's truth depends on a GPU's data (a ratio above 1, a kernel at
its ceiling), a removed cell calls `check` with the claim in words and
the test that decides it. When a new recording contradicts the sentence,
the page fails to build and names the claim: the author then rewrites
the sentence. A dry run's numbers are this machine's, not the GPU's the
sentence is about, so only a GPU's data are checked.
"""

from __future__ import annotations

from typing import Any


class ClaimContradicted(AssertionError):
    """The data no longer support a sentence of the page."""


def check(result: Any, claim: str, holds: bool) -> None:
    """Fail the page's build when ``result`` (a
    `helpers.measuring.results.Result`) is a GPU's measurement and the
    sentence ``claim`` does not hold on it.

    Args:
        result: the recording the sentence quotes.
        claim: the sentence's claim, in words, for the error.
        holds: whether the data support it.

    Raises:
        ClaimContradicted: a GPU's data contradict the claim.

    Example:
        >>> from helpers.measuring.results import Result
        >>> check(Result("x", "dry run", {}, None), "2 > 3", 2 > 3)
        >>> check(Result("x", "recorded", {}, {}), "2 < 3", 2 < 3)
    """
    if not isinstance(claim, str) or not claim:
        raise ValueError("check needs the claim in words, as the page "
                         "states it.")
    if getattr(result, "measured_on_a_gpu", False) and not holds:
        raise ClaimContradicted(
            f"the page says {claim!r}, and {getattr(result, 'name', 'its')}"
            " recording no longer supports it: rewrite the sentence.")
