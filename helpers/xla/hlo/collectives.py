"""Collectives in a compiled module, with the devices each one groups.

A collective's ``replica_groups`` say which devices talk to each other:
``{{0,1},{2,3}}`` is two groups of two. XLA also prints them compactly as
an iota, ``[2,2]<=[4]`` (devices 0..3 reshaped to 2 groups of 2) or
``[2,2]<=[2,2]T(1,0)`` (transposed first: groups {0,2} and {1,3}), and
newer XLA by mesh axes, ``mesh['a'=2,'b'=4] {'b'}`` (devices numbered
row-major over the mesh; each group holds the devices that differ only along
the listed axes: {0,1,2,3} and {4,5,6,7}). A ``collective-permute`` lists
``source_target_pairs`` instead.
"""

from __future__ import annotations

import collections
import dataclasses
import re
from typing import Any

import numpy as np

from helpers.xla.hlo.kernels import launches_kernel
from helpers.xla.hlo.compiling import Program, module
from helpers.xla.hlo.parsing import Instruction, braced_attribute

_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
          "collective-permute", "collective-broadcast", "ragged-all-to-all")
_IOTA = re.compile(r"^\[(?P<shape>[\d,]+)\]<=\[(?P<dims>[\d,]+)"
                   r"\](?:T\((?P<perm>[\d,]+)\))?$")
_MESH = re.compile(r"^mesh\[(?P<axes>[^\]]*)\]\s*\{(?P<over>[^}]*)\}$")
_AXIS = re.compile(r"'(?P<name>[^']+)'=(?P<size>\d+)")


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


def collectives(fn: Program, *args: Any
                ) -> list[Collective]:
    """Every collective of the compiled module, loop bodies included.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> from helpers.multi_device import meshes
        >>> mesh = meshes.mesh((2, 2), ("a", "b"))  # 4 devices
        >>> step = jax.jit(jax.shard_map(
        ...     lambda v: jax.lax.psum(v, "a"), mesh=mesh,
        ...     in_specs=P("a", "b"), out_specs=P(None, "b")))
        >>> [(c.kind, c.groups) for c in collectives(step, jnp.ones((4, 4)))]
        [('all-reduce', ((0, 2), (1, 3)))]
    """
    return [_collective(inst) for body in module(fn, args).values()
            for inst in body if inst.op.removesuffix("-start") in _KINDS]


def collective_counts(fn: Program, *args: Any
                      ) -> dict[str, int]:
    """``{kind: count}`` of the collectives of the compiled module, a
    combined (tuple) all-reduce counted once.

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> from helpers.multi_device import meshes
        >>> step = jax.jit(jax.shard_map(
        ...     lambda v: jax.lax.psum(v, "a"), mesh=meshes.mesh((2,), ("a",)),
        ...     in_specs=P("a"), out_specs=P()))
        >>> collective_counts(step, jnp.ones(4))
        {'all-reduce': 1}
    """
    return dict(collections.Counter(c.kind for c in collectives(fn, *args)))


@dataclasses.dataclass(frozen=True)
class AsyncWindow:
    """An asynchronous collective and the work scheduled while it runs.

    Attributes:
        name: the ``*-start`` instruction.
        kind: e.g. ``'all-reduce'``.
        kernels_between: kernels XLA placed between the start and its
            ``*-done``: the compute that can hide the communication.
    """

    name: str
    kind: str
    kernels_between: int


def async_windows(fn: Program, *args: Any
                  ) -> list[AsyncWindow]:
    """The overlap XLA scheduled for each asynchronous collective of the
    entry computation. A compiled module is printed in its schedule's
    order, so the kernels between a ``*-start`` and its ``*-done`` are the
    ones that run while the communication does.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.
    """
    entry = module(fn, args).entry
    started: dict[str, tuple[int, str]] = {}
    windows = []
    for position, inst in enumerate(entry):
        kind = inst.op.removesuffix("-start")
        if inst.op.endswith("-start") and kind in _KINDS:
            started[inst.name] = (position, kind)
        elif inst.op.endswith("-done") and inst.operands and (
                inst.operands[0] in started):
            start, kind = started.pop(inst.operands[0])
            between = [i for i in entry[start + 1:position]
                       if launches_kernel(i) and not i.op.endswith("-start")]
            windows.append(AsyncWindow(inst.operands[0], kind, len(between)))
    return windows


def most_in_flight(fn: Program, *args: Any) -> int:
    """The most asynchronous collectives of the entry computation that are
    started and not yet done at one point of its schedule: how many
    transfers the schedule lets run at once.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.
    """
    outstanding: set[str] = set()
    most = 0
    for inst in module(fn, args).entry:
        if inst.op.endswith("-start") and (
                inst.op.removesuffix("-start") in _KINDS):
            outstanding.add(inst.name)
            most = max(most, len(outstanding))
        elif inst.op.endswith("-done") and inst.operands:
            outstanding.discard(inst.operands[0])
    return most


def _collective(inst: Instruction) -> Collective:
    return Collective(
        name=inst.name, kind=inst.op.removesuffix("-start"),
        is_async=inst.op.endswith("-start"), shape=inst.shape,
        groups=replica_groups(inst),
        pairs=tuple((p[0], p[1]) for p in _int_lists(
            braced_attribute(inst, "source_target_pairs") or "")))


def replica_groups(inst: Instruction) -> tuple[tuple[int, ...], ...]:
    """The device groups of a collective, from any printed form."""
    printed = inst.attrs.get("replica_groups", "")
    by_axes = _MESH.match(printed)
    if by_axes:
        return _mesh_groups(by_axes["axes"], by_axes["over"])
    iota = _IOTA.match(printed)
    if iota:
        dims = [int(d) for d in iota["dims"].split(",")]
        ids = np.arange(int(np.prod(dims))).reshape(dims)
        if iota["perm"]:
            ids = ids.transpose([int(p) for p in iota["perm"].split(",")])
        shape = [int(d) for d in iota["shape"].split(",")]
        return tuple(tuple(int(v) for v in g) for g in ids.reshape(shape))
    return tuple(_int_lists(braced_attribute(inst, "replica_groups") or ""))


def _mesh_groups(axes: str, over: str) -> tuple[tuple[int, ...], ...]:
    """Groups from ``'a'=2,'b'=4`` and ``'b'``: the devices that differ
    only along the listed axes."""
    sizes = {m["name"]: int(m["size"]) for m in _AXIS.finditer(axes)}
    listed = re.findall(r"'([^']+)'", over)
    unknown = [a for a in listed if a not in sizes]
    if not sizes or unknown:
        raise ValueError(f"cannot read replica_groups=mesh[{axes}] {{{over}}}"
                         "; please report this HLO form.")
    names = list(sizes)
    ids = np.arange(int(np.prod(list(sizes.values())))).reshape(
        list(sizes.values()))
    kept = [names.index(a) for a in names if a not in listed]
    varied = [names.index(a) for a in listed]
    width = int(np.prod([sizes[a] for a in listed]))
    grouped = ids.transpose(kept + varied).reshape(-1, width)
    return tuple(tuple(int(v) for v in g) for g in grouped)


def _int_lists(text: str) -> list[tuple[int, ...]]:
    """``'{{0,1},{2,3}}'`` -> ``[(0, 1), (2, 3)]``."""
    return [tuple(int(v) for v in inner.split(",") if v.strip())
            for inner in re.findall(r"\{([\d,\s]*)\}", text)
            if inner.strip()]
