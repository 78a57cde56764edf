"""Point-to-point transfers (`psend`/`precv`) and the patterns that hang.

`jax.lax.psend` and `jax.lax.precv` lower to the ``send`` and ``recv``
operations of StableHLO; on NVIDIA GPUs each becomes NCCL sends and
receives. JAX's GPU performance guide states two rules for them
(https://docs.jax.dev/en/latest/gpu_performance_tips.html):

1. a single ``psend`` or ``precv`` whose source-target pairs form a cycle
   deadlocks: every device in the cycle waits on the next one;
2. a ``psend`` without a matching ``precv`` (or the reverse) deadlocks:
   one side waits for a partner that never comes.

Both can be read from the program text before anything runs, which is what
`deadlocks` does. The program only has to be *lowered* for a GPU, which
works on any machine (``lowering_platforms=("cuda",)``); running it needs
GPUs.

jax 0.12 deprecates ``psend`` and ``precv`` without naming a replacement;
``jax.lax.ppermute`` is the supported way to move arrays between devices.
`psend` and `precv` here are JAX's own functions, fetched without the
deprecation warning (`api_status` reports it instead), so that the book's
examples of the source's code keep running while this jax has them.
"""

from __future__ import annotations

import collections
import dataclasses
import re
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


def psend(x: Any, axis_name: Any, perm: list[Pair]) -> Any:
    """``jax.lax.psend`` (deprecated since jax 0.12), without the warning.

    Raises:
        NotImplementedError: this jax no longer has it; use
            ``jax.lax.ppermute``.
    """
    return _require("psend")(x, axis_name, perm)


def precv(token: Any, out_shape: Any, axis_name: Any, perm: list[Pair]
          ) -> Any:
    """``jax.lax.precv`` (deprecated since jax 0.12), without the warning.
    """
    return _require("precv")(token, out_shape, axis_name, perm)


def _require(name: str) -> Callable[..., Any]:
    fn, _ = _fetch(name)
    if fn is None:
        raise NotImplementedError(
            f"jax {jax.__version__} has no jax.lax.{name}: it was "
            "deprecated in jax 0.12 and has been removed. Move arrays "
            "between devices with jax.lax.ppermute.")
    return fn
# StableHLO: "stablehlo.send"(...) <{... source_target_pairs = dense<[[0,
# 1], [1, 2]]> : tensor<2x2xi64>}>
_STABLEHLO = re.compile(
    r'"?stablehlo\.(?P<kind>send|recv|collective_permute)"?\b'
    r'.*?source_target_pairs\s*=\s*'
    r'dense<(?P<pairs>[^>]*)>\s*:\s*tensor<(?P<n>\d+)x2xi64>')


@dataclasses.dataclass(frozen=True)
class Transfer:
    """One ``send``, ``recv`` or collective permute of a lowered program.

    Attributes:
        kind: ``'send'``, ``'recv'`` or ``'permute'`` (a `ppermute`, which
            sends and receives in one collective step and so cannot hang
            in these two ways).
        pairs: its ``(source, target)`` device pairs.
        line: the line number in the program text (1-based).
    """

    kind: str
    pairs: tuple[Pair, ...]
    line: int


def lowered_for_gpu(fn: Callable[..., Any], *args: Any) -> str:
    """The StableHLO text of ``fn(*args)`` lowered for NVIDIA GPUs.

    Lowering needs no GPU, so this runs on a CPU-only machine; ``fn`` is
    jitted here when it is not already.
    """
    jitted = fn if hasattr(fn, "trace") else jax.jit(fn)
    traced = jitted.trace(*args)
    return traced.lower(lowering_platforms=("cuda",)).as_text()


def transfers(text: str) -> list[Transfer]:
    """Every send, recv and permute in StableHLO text, in program order.

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> from helpers import meshes
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
    if not isinstance(text, str):
        raise TypeError("transfers() takes StableHLO text; get it with "
                        "lowered_for_gpu(fn, *args).")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = _STABLEHLO.search(line)
        if match:
            kind = match["kind"].replace("collective_permute", "permute")
            found.append(Transfer(kind, _pairs(match), number))
    return found


def _pairs(match: re.Match[str]) -> tuple[Pair, ...]:
    values = [int(v) for v in re.findall(r"-?\d+", match["pairs"])]
    count = int(match["n"])
    if len(values) == 1:  # MLIR prints a constant tensor as one value
        values *= 2 * count
    return tuple((values[i], values[i + 1])
                 for i in range(0, len(values), 2))


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


def deadlocks(program: str | Callable[..., Any], *args: Any) -> list[str]:
    """The deadlock rules a program breaks, in words; ``[]`` when none.

    Args:
        program: StableHLO text, or a function to lower for a GPU with the
            example ``args``.

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> from helpers import meshes
        >>> ring = [(s, (s + 1) % 4) for s in range(4)]
        >>> def step(v):  # the whole ring in one psend: a cycle
        ...     like = jax.ShapeDtypeStruct(v.shape, v.dtype)
        ...     return precv(psend(v, "i", ring), like, "i", ring)
        >>> program = jax.jit(jax.shard_map(
        ...     step, mesh=meshes.mesh((4,), ("i",)), in_specs=P("i"),
        ...     out_specs=P("i"), check_vma=False))
        >>> deadlocks(program, jnp.ones(8))[0]
        'send at line 6: its pairs form the cycle 0 -> 1 -> 2 -> 3 -> 0'
    """
    text = program if isinstance(program, str) else lowered_for_gpu(
        program, *args)
    found = [t for t in transfers(text) if t.kind != "permute"]
    problems = []
    for t in found:
        cycle = find_cycle(t.pairs)
        if cycle:
            ring = " -> ".join(str(d) for d in cycle + cycle[:1])
            problems.append(f"{t.kind} at line {t.line}: its pairs form "
                            f"the cycle {ring}")
    sends = collections.Counter(t.pairs for t in found if t.kind == "send")
    recvs = collections.Counter(t.pairs for t in found if t.kind == "recv")
    for pairs in sorted(set(sends) | set(recvs)):
        if sends[pairs] != recvs[pairs]:
            problems.append(f"{sends[pairs]} send(s) but {recvs[pairs]} "
                            f"recv(s) with pairs {list(pairs)}: each psend "
                            "needs a precv with the same pairs")
    return problems
