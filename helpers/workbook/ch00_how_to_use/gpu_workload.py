"""The one program the how-to page times (`helpers.xla.gpu_floors`): its
first measurement, ``x + 1`` on a million numbers, 24 calls."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from helpers.xla.gpu_floors import Program


def programs() -> list[Program]:
    """``x + 1``, timed at `bench.benchmark`'s defaults."""
    x = jax.ShapeDtypeStruct((1_000_000,), jnp.float32)
    return [Program("x + 1", lambda v: v + 1, (x,), 24)]
