"""A sentence the author wrote about the data, and the check beside it.

A chapter's prose is written by its author, its numbers glued in. Where
a sentence's truth depends on a GPU's data (a ratio above 1, a kernel at
its ceiling), a removed cell calls `check` with the claim in words and
the test that decides it. When a new recording contradicts the sentence,
the page fails to build and names the claim: the author then rewrites
the sentence. A dry run's numbers are this machine's, not the GPU's the
sentence is about, so only a GPU's data are checked.

On a GPU visit (`scripts/gpu_visit.py`) a contradicted claim does not
stop the chapter: the device time left would measure nothing. With
`LOG_VARIABLE` set, `check` appends the claim to that file and goes on;
the visit then keeps the chapter's recordings but not its page, and
names the claims to rewrite (`contradicted` reads them back).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The environment variable naming the file a visit collects contradicted
# claims in, one JSON object a line.
LOG_VARIABLE = "BOOK_CLAIMS_LOG"


class ClaimContradicted(AssertionError):
    """The data no longer support a sentence of the page."""


def check(result: Any, claim: str, holds: bool | Callable[[], bool]
          ) -> None:
    """Fail the page's build when ``result`` (a
    `helpers.measuring.results.Result`, or a tuple of them for a sentence
    that compares recordings) is a GPU's measurement and the sentence
    ``claim`` does not hold on it.

    Args:
        result: the recording the sentence quotes (all of them, where it
            quotes several: a dry run's stands in for one, and then the
            claim is not checked).
        claim: the sentence's claim, in words, for the error.
        holds: whether the data support it; or a function that says so,
            called only where the data are a GPU's (a dry run's numbers
            may lack what the test reads).

    Raises:
        ClaimContradicted: a GPU's data contradict the claim (on a visit,
            with `LOG_VARIABLE` set, it is noted there instead).

    Example:
        >>> from helpers.measuring.results import Result
        >>> check(Result("x", "dry run", {}, None), "2 > 3", 2 > 3)
        >>> check(Result("x", "recorded", {}, {}), "2 < 3", 2 < 3)
        >>> check((Result("x", "recorded", {}, {}),
        ...        Result("y", "dry run", {}, None)), "2 > 3", 2 > 3)
        >>> check(Result("x", "dry run", {}, None), "a dry run is not read",
        ...       lambda: 1 / 0 > 0)
    """
    if not isinstance(claim, str) or not claim:
        raise ValueError("check needs the claim in words, as the page "
                         "states it.")
    quoted = result if isinstance(result, tuple) else (result,)
    on_gpus = all(getattr(r, "measured_on_a_gpu", False) for r in quoted)
    if on_gpus and not (holds() if callable(holds) else holds):
        names = ", ".join(getattr(r, "name", "?") for r in quoted)
        message = (f"the page says {claim!r}, and the recording ({names}) "
                   "no longer supports it: rewrite the sentence.")
        log = os.environ.get(LOG_VARIABLE)
        if not log:
            raise ClaimContradicted(message)
        with Path(log).open("a") as out:
            out.write(json.dumps({"claim": claim, "recordings": names})
                      + "\n")
        print(f"claim contradicted (noted for the visit): {message}",
              file=sys.stderr)


def contradicted(log: Path) -> list[dict[str, str]]:
    """The claims a visit noted in ``log`` (`LOG_VARIABLE`), each
    ``{'claim', 'recordings'}``; empty when the file is missing."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()
            if line.strip()]


def check_here(claim: str, holds: bool) -> None:
    """Fail the page's build when the sentence ``claim`` does not hold on
    data every machine reads alike: a recording made without a GPU (what
    XLA:GPU compiled for one, here), or a datasheet. Unlike `check`, it
    is checked on every build.

    Raises:
        ClaimContradicted: the data contradict the claim.

    Example:
        >>> check_here("2 < 3", 2 < 3)
    """
    if not isinstance(claim, str) or not claim:
        raise ValueError("check_here needs the claim in words, as the page "
                         "states it.")
    if not holds:
        raise ClaimContradicted(
            f"the page says {claim!r}, and its data no longer support it: "
            "rewrite the sentence.")
