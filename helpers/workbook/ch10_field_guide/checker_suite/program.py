"""A program of the checker's suite: the function, how to make its
arguments (and its calls), and the pattern it shows."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

Spec = jax.ShapeDtypeStruct
F32, BF16 = jnp.float32, jnp.bfloat16


@dataclasses.dataclass(frozen=True)
class Program:
    """One program of the suite.

    Attributes:
        name: what it is, in a few words.
        fn: the function examined.
        arguments: makes its example arguments.
        expected: the slow pattern it shows (None: a good program).
        calls: makes a sequence of calls' arguments, where its pattern
            shows across calls.
        x64: it needs 64-bit types.
    """

    name: str
    fn: Callable[..., Any]
    arguments: Callable[[], tuple[Any, ...]]
    expected: str | None = None
    calls: Callable[[], list[tuple[Any, ...]]] | None = None
    x64: bool = False


def key() -> jax.Array:
    """A random key for the programs that draw numbers."""
    return jax.random.key(0)
