"""Point-to-point transfers (`psend`/`precv`) and the patterns that hang.

`jax.lax.psend` and `jax.lax.precv` lower to the ``send`` and ``recv``
operations of StableHLO; on NVIDIA GPUs each becomes NCCL sends and
receives. JAX's GPU performance guide states two rules for them
(https://docs.jax.dev/en/latest/gpu_performance_tips.html):

1. a single ``psend`` or ``precv`` whose source-target pairs form a cycle
   deadlocks: every device in the cycle waits on the next one;
2. a ``psend`` without a matching ``precv`` (or the reverse) deadlocks:
   one side waits for a partner that never comes.

Both can be read from the program before anything runs, which is what
`deadlocks` does: it walks the lowered program's StableHLO operations
(``lowered.compiler_ir("stablehlo")``) and reads each transfer's pairs
from its ``source_target_pairs`` attribute. The program only has to be
*lowered* for a GPU, which works on any machine
(``lowering_platforms=("cuda",)``); running it needs GPUs.

jax 0.12 deprecates ``psend`` and ``precv`` without naming a replacement;
``jax.lax.ppermute`` is the supported way to move arrays between devices.
`psend` and `precv` here are JAX's own functions, fetched without the
deprecation warning (`api_status` reports it instead), so that the book's
examples of the source's code keep running while this jax has them.

Only GPUs run them. Inside `simulated`, the two stand in for what they
move: a ``precv`` receives, along its pairs, the array its ``psend`` was
given, as one ``jax.lax.ppermute`` would; so a program of them gives its
numbers on a CPU's simulated devices too, while `deadlocks` still reads
the program lowered for GPUs.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import re
from collections.abc import Iterator
from typing import Any, Callable

import jax

Pair = tuple[int, int]


@dataclasses.dataclass(frozen=True)
class ApiStatus:
    """What the installed jax says of ``jax.lax.psend``/``precv``.

    Attributes:
        available: jax still has them.
        deprecation: the warning accessing them gives, or None.
        deprecated_in: the version their docstrings name, or None.
    """

    available: bool
    deprecation: str | None
    deprecated_in: str | None


def _fetch(name: str) -> tuple[Callable[..., Any] | None, str | None]:
    """``jax.lax.<name>`` and its deprecation message, if any.

    A deprecated name of ``jax.lax`` sits in the module's
    ``_deprecations`` table as ``(message, function)``; reading the table
    does not fire the warning (which jax gives once per process, so it
    cannot be caught reliably either)."""
    deprecated = getattr(jax.lax, "_deprecations", {}).get(name)
    if deprecated is not None:
        message, fn = deprecated
        return fn, message
    return getattr(jax.lax, name, None), None


def api_status() -> ApiStatus:
    """Whether this jax has ``psend``/``precv``, and what it says of them.

    Example:
        >>> api_status().available
        True
    """
    fn, message = _fetch("psend")
    version = None
    if fn is not None:
        found = re.search(r"deprecated::\s*(\S+)", fn.__doc__ or "")
        version = found[1] if found else None
    return ApiStatus(fn is not None, message, version)


# Set by `simulated`: psend and precv stand in for each other's transfer.
_SIMULATING = False


@dataclasses.dataclass(frozen=True)
class _Sent:
    """What a simulated `psend` returns in place of its token: the array
    and the pairs it was sent along."""

    value: Any
    perm: tuple[Pair, ...]


@contextlib.contextmanager
def simulated() -> Iterator[None]:
    """Within this context, `psend` and `precv` run anywhere: a
    ``precv(token, ...)`` returns what its ``psend`` sent, moved along the
    ``precv``'s pairs by ``jax.lax.ppermute``. Trace (call for the first
    time) the program inside it. It moves the same numbers as the real
    pair; it cannot deadlock, so check the program with `deadlocks`.

    Example:
        >>> with simulated():
        ...     token = psend(1.0, "i", [(0, 1)])
        >>> type(token).__name__
        '_Sent'
    """
    global _SIMULATING
    before, _SIMULATING = _SIMULATING, True
    try:
        yield
    finally:
        _SIMULATING = before


def psend(x: Any, axis_name: Any, perm: list[Pair]) -> Any:
    """``jax.lax.psend`` (deprecated since jax 0.12), without the warning;
    inside `simulated`, the array and its pairs for `precv`.

    Raises:
        NotImplementedError: this jax no longer has it; use
            ``jax.lax.ppermute``.
    """
    if _SIMULATING:
        return _Sent(x, tuple((int(s), int(t)) for s, t in perm))
    return _require("psend")(x, axis_name, perm)


def precv(token: Any, out_shape: Any, axis_name: Any, perm: list[Pair]
          ) -> Any:
    """``jax.lax.precv`` (deprecated since jax 0.12), without the warning;
    inside `simulated`, ``jax.lax.ppermute`` of what the matching `psend`
    sent.

    Raises:
        ValueError: inside `simulated`, ``token`` is not what a `psend`
            returned there, or its pairs or shape are not ``precv``'s.
    """
    if _SIMULATING:
        if not isinstance(token, _Sent):
            raise ValueError("precv's token must be what psend returned "
                             "(pass psend's result to precv).")
        if token.perm != tuple((int(s), int(t)) for s, t in perm):
            raise ValueError(f"precv's pairs {list(perm)} are not its "
                             f"psend's {list(token.perm)}: on GPUs the "
                             "unmatched sends would wait forever.")
        sent = (jax.numpy.shape(token.value),
                jax.numpy.result_type(token.value))
        if sent != (tuple(out_shape.shape), out_shape.dtype):
            raise ValueError(f"precv expects {out_shape.shape} "
                             f"{out_shape.dtype} but psend sent {sent[0]} "
                             f"{sent[1]}.")
        return jax.lax.ppermute(token.value, axis_name, perm)
    return _require("precv")(token, out_shape, axis_name, perm)


def _require(name: str) -> Callable[..., Any]:
    fn, _ = _fetch(name)
    if fn is None:
        raise NotImplementedError(
            f"jax {jax.__version__} has no jax.lax.{name}: it was "
            "deprecated in jax 0.12 and has been removed. Move arrays "
            "between devices with jax.lax.ppermute.")
    return fn
# The StableHLO operations that move data between devices, by the kind
# `Transfer` names them, and the jax.lax function that makes each.
_KINDS = {"stablehlo.send": "send", "stablehlo.recv": "recv",
          "stablehlo.collective_permute": "permute"}
_FUNCTIONS = {"send": "psend", "recv": "precv", "permute": "ppermute"}
_SOURCE = re.compile(r'"(?P<file>[^"]+)":(?P<line>\d+)')
# Frames in the book's own helpers are not the reader's code.
_HELPERS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NOTEBOOK_CELL = re.compile(r"ipykernel_\d+|<ipython-input-")


@dataclasses.dataclass(frozen=True)
class Transfer:
    """One ``send``, ``recv`` or collective permute of a lowered program.

    Attributes:
        kind: ``'send'``, ``'recv'`` or ``'permute'`` (a `ppermute`, which
            sends and receives in one collective step and so cannot hang
            in these two ways).
        pairs: its ``(source, target)`` device pairs.
        position: its place among the program's transfers, from 1, in
            program order.
        source: the line of the caller's own code that made it,
            ``'file.py:12'`` or ``'line 3 of a notebook cell'``; ``''``
            when only the book's helpers made it.
    """

    kind: str
    pairs: tuple[Pair, ...]
    position: int
    source: str = ""

    def __str__(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return (f"the {_FUNCTIONS[self.kind]} with pairs "
                f"{list(self.pairs)}{where}")


def lowered_for_gpu(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` lowered for NVIDIA GPUs: a `jax.stages.Lowered`, whose
    ``compiler_ir("stablehlo")`` `transfers` reads and whose
    ``as_text()`` shows the program.

    Lowering needs no GPU, so this runs on a CPU-only machine; ``fn`` is
    jitted here when it is not already.
    """
    jitted = fn if hasattr(fn, "trace") else jax.jit(fn)
    return jitted.trace(*args).lower(lowering_platforms=("cuda",))


def transfers(lowered: Any) -> list[Transfer]:
    """Every send, recv and permute of a lowered program, in program
    order, read from its StableHLO operations (not from the text).

    Args:
        lowered: what `lowered_for_gpu` returns.

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> from helpers.multi_device import meshes
        >>> forward = [(0, 1), (1, 2), (2, 3)]
        >>> def step(v):  # the forward edges as a pair, the back as permute
        ...     like = jax.ShapeDtypeStruct(v.shape, v.dtype)
        ...     got = precv(psend(v, "i", forward), like, "i", forward)
        ...     return got + jax.lax.ppermute(v, "i", [(3, 0)])
        >>> ring = jax.jit(jax.shard_map(
        ...     step, mesh=meshes.mesh((4,), ("i",)), in_specs=P("i"),
        ...     out_specs=P("i"), check_vma=False))
        >>> [t.kind for t in transfers(lowered_for_gpu(ring, jnp.ones(8)))]
        ['send', 'recv', 'permute']
    """
    if not hasattr(lowered, "compiler_ir"):
        raise TypeError(f"transfers() takes a lowered program, got a "
                        f"{type(lowered).__name__}; get one with "
                        "lowered_for_gpu(fn, *args).")
    found: list[Transfer] = []
    for op in _operations(lowered.compiler_ir("stablehlo").operation):
        kind = _KINDS.get(op.name)
        if kind is not None:
            found.append(Transfer(kind, _pairs(op), len(found) + 1,
                                  _source(op)))
    return found


def _operations(parent: Any) -> Iterator[Any]:
    """Every operation nested in ``parent``, in program order."""
    for region in parent.regions:
        for block in region:
            for op in block:
                yield op.operation
                yield from _operations(op.operation)


def _pairs(op: Any) -> tuple[Pair, ...]:
    """The ``source_target_pairs`` attribute, an N x 2 integer tensor (a
    splat, one value for every entry, when all are equal)."""
    from jaxlib.mlir import ir

    attribute = ir.DenseIntElementsAttr(op.attributes["source_target_pairs"])
    count = ir.RankedTensorType(attribute.type).shape[0]
    values = [int(attribute[i]) for i in range(len(attribute))]
    if len(values) == 1:
        values *= 2 * count
    return tuple((values[i], values[i + 1])
                 for i in range(0, len(values), 2))


def _source(op: Any) -> str:
    """The innermost Python frame of the location that is not in the
    book's helpers: the caller's own line, or ``''``."""
    for file, line in _SOURCE.findall(str(op.location)):
        path = os.path.abspath(file)
        if path.startswith(_HELPERS + os.sep):
            continue
        if _NOTEBOOK_CELL.search(file):
            return f"line {line} of a notebook cell"
        return f"{os.path.basename(file)}:{line}"
    return ""


def find_cycle(pairs: tuple[Pair, ...] | list[Pair]) -> tuple[int, ...]:
    """A cycle among ``(source, target)`` pairs, or ``()`` when none.

    Example:
        >>> find_cycle([(0, 1), (1, 2), (2, 0)])
        (0, 1, 2)
        >>> find_cycle([(0, 1), (1, 2)])
        ()
    """
    successors = collections.defaultdict(list)
    for source, target in pairs:
        successors[source].append(target)
    state: dict[int, str] = {}  # 'open' while on the path, then 'done'

    def visit(node: int, path: list[int]) -> tuple[int, ...]:
        state[node] = "open"
        path.append(node)
        for nxt in successors[node]:
            if state.get(nxt) == "open":
                return tuple(path[path.index(nxt):])
            if nxt not in state:
                cycle = visit(nxt, path)
                if cycle:
                    return cycle
        state[node] = "done"
        path.pop()
        return ()

    for start in sorted(successors):
        if start not in state:
            cycle = visit(start, [])
            if cycle:
                return cycle
    return ()


def deadlocks(program: Any, *args: Any) -> list[str]:
    """The deadlock rules a program breaks, in words; ``[]`` when none.

    Args:
        program: a lowered program (`lowered_for_gpu`), or a function to
            lower for a GPU with the example ``args``.

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> from helpers.multi_device import meshes
        >>> ring = [(s, (s + 1) % 4) for s in range(4)]
        >>> def step(v):  # the whole ring in one psend: a cycle
        ...     like = jax.ShapeDtypeStruct(v.shape, v.dtype)
        ...     return precv(psend(v, "i", ring), like, "i", ring)
        >>> program = jax.jit(jax.shard_map(
        ...     step, mesh=meshes.mesh((4,), ("i",)), in_specs=P("i"),
        ...     out_specs=P("i"), check_vma=False))
        >>> print(deadlocks(program, jnp.ones(8))[0])  # doctest: +ELLIPSIS
        the psend with pairs [(0, 1), (1, 2), (2, 3), (3, 0)] (...) ...
    """
    lowered = program if hasattr(program, "compiler_ir") else \
        lowered_for_gpu(program, *args)
    found = [t for t in transfers(lowered) if t.kind != "permute"]
    problems = []
    for t in found:
        cycle = find_cycle(t.pairs)
        if cycle:
            ring = " -> ".join(str(d) for d in cycle + cycle[:1])
            problems.append(f"{t} contains the cycle {ring}: each device "
                            "in it waits for the next")
    sends = collections.Counter(t.pairs for t in found if t.kind == "send")
    recvs = collections.Counter(t.pairs for t in found if t.kind == "recv")
    for pairs in sorted(set(sends) | set(recvs)):
        if sends[pairs] != recvs[pairs]:
            problems.append(f"{_count(sends[pairs], 'psend')} but "
                            f"{_count(recvs[pairs], 'precv')} with pairs "
                            f"{list(pairs)}: each psend needs a precv with "
                            "the same pairs")
    return problems


def _count(n: int, name: str) -> str:
    """``'no psend'``, ``'1 psend'``, ``'2 psends'``."""
    return f"no {name}" if n == 0 else f"{n} {name}{'s' if n > 1 else ''}"
