"""Collectives in a compiled module, with the devices each one groups.

A collective's ``replica_groups`` say which devices talk to each other:
``{{0,1},{2,3}}`` is two groups of two. XLA also prints them compactly as
an iota, ``[2,2]<=[4]`` (devices 0..3 reshaped to 2 groups of 2) or
``[2,2]<=[2,2]T(1,0)`` (transposed first: groups {0,2} and {1,3}). A
``collective-permute`` lists ``source_target_pairs`` instead.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

import numpy as np

from helpers.hlo.parsing import Instruction, braced_attribute, module

_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
          "collective-permute", "collective-broadcast", "ragged-all-to-all")
_IOTA = re.compile(r"replica_groups=\[(?P<shape>[\d,]+)\]<=\[(?P<dims>[\d,]+)"
                   r"\](?:T\((?P<perm>[\d,]+)\))?")


@dataclasses.dataclass(frozen=True)
class Collective:
    """One collective operation.

    Attributes:
        name: the instruction name.
        kind: e.g. ``'all-reduce'`` (``-start`` stripped).
        is_async: True for ``*-start`` ops, which XLA overlaps with compute
            until the matching ``*-done``.
        shape: the shape of its result.
        groups: the device groups, e.g. ``((0, 1), (2, 3))``; empty for a
            permute, or when all devices form one group.
        pairs: ``(source, target)`` pairs of a ``collective-permute``.
    """

    name: str
    kind: str
    is_async: bool
    shape: str
    groups: tuple[tuple[int, ...], ...]
    pairs: tuple[tuple[int, int], ...]


def collectives(fn: Callable[..., Any] | str, *args: Any
                ) -> list[Collective]:
    """Every collective of the compiled module, loop bodies included.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.

    Example:
        >>> [(c.kind, c.groups) for c in collectives(step, x)]
        [('all-reduce', ((0, 2), (1, 3)))]
    """
    mod = module(fn, args)
    return [_collective(inst) for name, body in mod.items()
            if name != "ENTRY" for inst in body
            if inst.op.removesuffix("-start") in _KINDS]


def _collective(inst: Instruction) -> Collective:
    return Collective(
        name=inst.name, kind=inst.op.removesuffix("-start"),
        is_async=inst.op.endswith("-start"), shape=inst.shape,
        groups=replica_groups(inst),
        pairs=tuple(tuple(p) for p in _int_lists(
            braced_attribute(inst, "source_target_pairs") or "")))


def replica_groups(inst: Instruction) -> tuple[tuple[int, ...], ...]:
    """The device groups of a collective, from either printed form."""
    iota = _IOTA.search(inst.attributes)
    if iota:
        dims = [int(d) for d in iota["dims"].split(",")]
        ids = np.arange(int(np.prod(dims))).reshape(dims)
        if iota["perm"]:
            ids = ids.transpose([int(p) for p in iota["perm"].split(",")])
        shape = [int(d) for d in iota["shape"].split(",")]
        return tuple(tuple(int(v) for v in g) for g in ids.reshape(shape))
    return tuple(_int_lists(braced_attribute(inst, "replica_groups") or ""))


def _int_lists(text: str) -> list[tuple[int, ...]]:
    """``'{{0,1},{2,3}}'`` -> ``[(0, 1), (2, 3)]``."""
    return [tuple(int(v) for v in inner.split(",") if v.strip())
            for inner in re.findall(r"\{([\d,\s]*)\}", text)
            if inner.strip()]
