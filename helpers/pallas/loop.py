"""What a fused kernel runs, said once: a `Loop` of ``length`` steps of
``fn(carry, x, *consts) -> (carry, y)``, forwards or in reverse.

`helpers.pallas.scan` (one chain) and `helpers.pallas.triton.chains`
(many chains per program) write the same loop inside their Pallas
kernels: `run_in_kernel` is that body, reading the inputs from the
kernel's refs (`Refs`) and writing each step's output, and the carry
entering each step when the backward pass needs it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax


@dataclasses.dataclass(frozen=True)
class Loop:
    """``length`` steps of ``fn(carry, x, *consts) -> (carry, y)``, from the
    last step to the first when ``reverse`` (as `jax.lax.scan` does).

    Frozen, so it can be a static (non-differentiated) argument of a custom
    VJP, and passed whole instead of three positional arguments.
    """

    fn: Callable[..., Any]
    length: int
    reverse: bool = False

    def step_index(self, j: Any) -> Any:
        """The step the loop's ``j``-th iteration runs."""
        return self.length - 1 - j if self.reverse else j

    def with_step(self, fn: Callable[..., Any], *,
                  reverse: bool | None = None) -> Loop:
        """The same loop over another step function (a padded one, or the
        backward step), optionally in the other direction."""
        return dataclasses.replace(
            self, fn=fn, reverse=self.reverse if reverse is None else reverse)


@dataclasses.dataclass(frozen=True)
class Refs:
    """A kernel's refs by role: the inputs (``init``, ``xs``, ``consts``),
    then the outputs (``carry``, ``ys`` and, for a backward pass, ``saved``:
    the carry entering each step)."""

    init: tuple[Any, ...]
    xs: tuple[Any, ...]
    consts: tuple[Any, ...]
    carry: tuple[Any, ...]
    ys: tuple[Any, ...]
    saved: tuple[Any, ...] = ()

    @classmethod
    def split(cls, refs: tuple[Any, ...], counts: tuple[int, ...]) -> Refs:
        """Cut a kernel's refs by ``counts`` (init, xs, consts, carry, ys);
        whatever is left is ``saved``."""
        init, xs, consts, carry, ys, saved = cut(refs, counts)
        return cls(init, xs, consts, carry, ys, saved)


def cut(refs: tuple[Any, ...], counts: tuple[int, ...]
        ) -> list[tuple[Any, ...]]:
    """A kernel's refs in consecutive groups of ``counts``, and whatever is
    left as one more group (Pallas hands a kernel its refs flat).

    Example:
        >>> cut(("a", "b", "c", "d"), (1, 2))
        [('a',), ('b', 'c'), ('d',)]
    """
    groups, start = [], 0
    for count in counts:
        groups.append(tuple(refs[start:start + count]))
        start += count
    return groups + [tuple(refs[start:])]


def run_in_kernel(loop: Loop, refs: Refs, carry_tree: Any,
                  xs_tree: Any) -> None:
    """The loop, inside a Pallas kernel: read the initial carry and the
    constants, run the steps (step ``i`` reads ``x[i]``, writes ``y[i]``
    and, when ``refs.saved`` is given, the carry entering it), and write
    the final carry."""
    constants = [ref[...] for ref in refs.consts]

    def body(j: jax.Array, carry: Any) -> Any:
        i = loop.step_index(j)
        x = jax.tree.unflatten(xs_tree, [ref[i] for ref in refs.xs])
        for ref, leaf in zip(refs.saved, jax.tree.leaves(carry)):
            ref[i] = leaf
        carry, y = loop.fn(carry, x, *constants)
        for ref, leaf in zip(refs.ys, jax.tree.leaves(y)):
            ref[i] = leaf
        return carry

    carry = jax.tree.unflatten(carry_tree, [ref[...] for ref in refs.init])
    carry = jax.lax.fori_loop(0, loop.length, body, carry)
    for ref, leaf in zip(refs.carry, jax.tree.leaves(carry)):
        ref[...] = leaf
