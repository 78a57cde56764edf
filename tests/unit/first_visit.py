"""The first H100 visit's recordings (2026-11-23, jax 0.11.2, blocked wall
clock), kept here after the second visit replaced them in ``recorded/``:
the helpers still read recordings of that shape, and these tests check
that they do."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Iterator

from helpers.measuring import recorded, results

FOLDER = Path(__file__).parent / "recordings" / "first-visit"


@contextlib.contextmanager
def _reading() -> Iterator[None]:
    before = os.environ.get("BOOK_RECORDED_DIR")
    os.environ["BOOK_RECORDED_DIR"] = str(FOLDER)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("BOOK_RECORDED_DIR")
        else:
            os.environ["BOOK_RECORDED_DIR"] = before


def load(name: str) -> dict[str, Any]:
    """The first visit's recording ``name``, checked like any recording."""
    with _reading():
        return recorded.load(name)


def reference(name: str) -> results.Result:
    """The first visit's recording ``name`` as `results.reference` gives
    it."""
    with _reading():
        return results.reference(name)
