"""Chapter 0 (How to use this book): a first exercise to try the checker."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from helpers.grading.exercises import Exercise, hlo_fact, matches_reference
from helpers.xla import hlo

_RNG = np.random.default_rng(0)
_CASES = [(_RNG.normal(size=n).astype(np.float32),) for n in (1, 7, 1000)]


def _reference(x):
    return jnp.sqrt(jnp.mean(x * x))


def starter(x):
    """Return the root mean square of x."""
    return jnp.mean(x)  # not yet: this is the plain mean


def solution(x):
    """Root mean square: the square root of the mean of the squares."""
    return jnp.sqrt(jnp.mean(jnp.square(x)))


def _one_pass(text: str) -> bool | str:
    """One reduction over x: a reduce, or a dot (``x @ x`` is one too)."""
    counts = hlo.op_counts(text, entry_only=False)
    reductions = counts["reduce"] + hlo.matrix_products(text)
    return reductions == 1 or f"found {reductions} reductions"


root_mean_square = Exercise(
    "Exercise 0.1: root mean square",
    [matches_reference(_reference, _CASES, rtol=1e-5,
                       hint="Square first, then average, then take the "
                            "square root."),
     hlo_fact("reads x in one pass (one reduction)", _one_pass,
              _CASES[-1], hint="Average the squares with one jnp.mean; "
                               "no Python loop over elements.")],
    hints=["The name says the order: the root of the mean of the squares."],
    reread="Try the checker",
    chapter="00_how_to_use", answer="rms", level="warm-up",
    starter=starter, solution=solution)
