"""The programs the field guide runs on a GPU, and how often
(`helpers.xla.gpu_floors`), for the how-to page's table of Colab's GPUs:
each timed case's slow and fixed version, 24 calls each
(`guide.before_after`: `bench.benchmark` at its defaults).
"""

from __future__ import annotations

from typing import Any, Callable

import jax

from helpers.workbook.ch10_field_guide.cases import CASES
from helpers.xla.gpu_floors import Program

CALLS = 24


def _bound(fn: Callable[..., Any], args: tuple[Any, ...]
           ) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``fn`` with its Python numbers (a static step count) fixed, and
    the array arguments left to pass."""
    arrays = tuple(a for a in args if isinstance(a, jax.Array))

    def call(*given: Any) -> Any:
        supply = iter(given)
        return fn(*(next(supply) if isinstance(a, jax.Array) else a
                    for a in args))
    return call, arrays


def programs() -> list[Program]:
    """Every timed case's two versions."""
    found = []
    for name, case in CASES.items():
        if case.measure != "time":
            continue  # memory and compilations are read at compile time
        with jax.enable_x64(case.x64):
            args = case.arguments()
        for version, fn in (("slow", case.slow), ("fixed", case.fixed)):
            bound, arrays = _bound(fn, args)
            found.append(Program(f"{name}, {version}", bound, arrays,
                                 CALLS, x64=case.x64))
    return found
