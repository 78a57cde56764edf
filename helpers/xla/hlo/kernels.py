"""What one call launches: fusions, custom calls, kernels, while loops.

On a GPU each top-level ``fusion`` becomes one kernel; its ``kind=`` names
the emitter that wrote it (``kLoop`` elementwise, ``kInput`` reductions,
``kOutput`` epilogues, ``kCustom`` for Triton and other custom fusions). A
``custom-call`` is a library call (cuBLAS, cuDNN, LAPACK on a CPU). A
``while`` runs its body once per iteration: XLA:GPU's WhileThunk runs the
body ``n`` times when the trip count is known at compile time, and
otherwise evaluates the condition on the device and copies the predicate
to the host after every iteration (xla/backends/gpu/runtime/
while_thunk.cc).
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import re
from typing import Any, Callable

from helpers.xla.hlo.compiling import Program, module, module_text
from helpers.xla.hlo.parsing import (Instruction, Module, attribute,
                                     braced_attribute)

# Instructions that launch nothing by themselves: they name buffers, pass
# control, or wait. Everything else at the top level launches work.
_NO_LAUNCH = {"parameter", "constant", "tuple", "get-tuple-element",
              "bitcast", "after-all", "add-dependency", "opt-barrier",
              "partition-id", "replica-id", "domain", "call", "while",
              "conditional"}


class FusionKind(enum.StrEnum):
    """The emitter XLA:GPU writes a fusion's kernel with (its ``kind=``).
    Each member is also its HLO text: ``FusionKind.INPUT == 'kInput'``."""

    LOOP = "kLoop"      # elementwise: each thread computes outputs alone
    INPUT = "kInput"    # a reduction: threads cooperate on each output
    OUTPUT = "kOutput"  # a producer with its consumer fused as epilogue
    CUSTOM = "kCustom"  # Triton, cuDNN and other custom fusions

    def __repr__(self) -> str:  # lists and tables show 'kLoop', as in HLO
        return repr(self.value)


def _kind(text: str) -> FusionKind | str:
    """The `FusionKind` named ``text``; another kind stays its text."""
    return FusionKind(text) if text in FusionKind._value2member_map_ \
        else text


@dataclasses.dataclass(frozen=True)
class Fusion:
    """A fusion that runs as one kernel on a GPU.

    Attributes:
        name: the instruction name, e.g. ``'fusion.3'``.
        kind: the emitter, a `FusionKind` (``'kLoop'``, ``'kInput'``...),
            or XLA's text for a kind this package does not know.
        root_op: the opcode of the fused computation's ROOT, e.g.
            ``'reduce'``.
        operand_shapes: shapes of the fusion's inputs.
        output_shape: shape of its result.
    """

    name: str
    kind: FusionKind | str
    root_op: str
    operand_shapes: tuple[str, ...]
    output_shape: str

    @property
    def named_kind(self) -> FusionKind | str:
        """The kind the fusion had when XLA:GPU named it: ``'kLoop'`` for
        ``loop_...``, ``'kInput'`` for ``input_...``, else `kind`. They
        differ when a later pass changed the emitter: in jax 0.11.2 on an
        H100, XLA:GPU's block-level rewriter hands some reductions to
        Triton (``kind`` becomes ``'kCustom'``), and the name keeps the
        choice its reduction heuristic made."""
        prefix = self.name.split("_", 1)[0]
        return {"loop": FusionKind.LOOP, "input": FusionKind.INPUT}.get(
            prefix, self.kind)


@dataclasses.dataclass(frozen=True)
class CustomCall:
    """A call into a library or hand-written kernel.

    Attributes:
        name: the instruction name.
        target: what is called, e.g. ``'__cublas$gemm'``.
        output_shape: the shape of its result.
    """

    name: str
    target: str
    output_shape: str


@dataclasses.dataclass(frozen=True)
class WhileLoop:
    """A while loop of the compiled module.

    Attributes:
        name: the ``while`` instruction's name.
        trip_count: iterations, when XLA proved the count at compile time;
            None when it depends on data (then every iteration also runs
            the condition and sends the predicate to the host).
        body_kernels: kernels one iteration of the body launches (None if
            the body holds a loop of unknown trip count).
        condition_kernels: kernels one evaluation of the condition
            launches.
    """

    name: str
    trip_count: int | None
    body_kernels: int | None
    condition_kernels: int | None


def _launched(mod: Module, computation: str | None = None
              ) -> list[Instruction]:
    """The instructions that run at the top level of ``computation`` (by
    default the entry) and of everything it reaches through calls, loops
    and branches (but not the insides of fusions, which are one kernel
    each)."""
    found = []
    for inst in mod.get(computation or mod.entry_name, []):
        found.append(inst)
        if inst.op == "call":
            found += _launched(mod, attribute(inst, "to_apply") or "")
        elif inst.op == "while":
            found += _launched(mod, attribute(inst, "condition") or "")
            found += _launched(mod, attribute(inst, "body") or "")
        elif inst.op == "conditional":
            for branch in _branches(inst):
                found += _launched(mod, branch)
    return found


def _branches(inst: Instruction) -> list[str]:
    listed = braced_attribute(inst, "branch_computations") or ""
    names = re.findall(r"%?([\w.\-]+)", listed)
    return names or [n for n in (attribute(inst, "true_computation"),
                                 attribute(inst, "false_computation")) if n]


def fusions(fn: Program, *args: Any) -> list[Fusion]:
    """The fusions of ``fn(*args)``'s compiled module, loops included.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.

    Example:
        >>> x = jnp.ones((4, 8))
        >>> [f.kind for f in fusions(lambda x: (x * 2).sum(1), x)]  # CPU
        ['kLoop']
    """
    mod = module(fn, args)
    shapes = {i.name: i.shape for body in mod.values() for i in body}
    found = []
    for inst in _launched(mod):
        if inst.op != "fusion":
            continue
        called = mod.get(attribute(inst, "calls") or "", [])
        root = next((i.op for i in called if i.is_root), "?")
        found.append(Fusion(
            name=inst.name, kind=_kind(attribute(inst, "kind") or "?"),
            root_op=root,
            operand_shapes=tuple(shapes.get(n, "?") for n in inst.operands),
            output_shape=inst.shape))
    return found


def op_counts(fn: Program, *args: Any,
              entry_only: bool = True) -> collections.Counter[str]:
    """How often each opcode appears in the compiled module.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.
        entry_only: count only the entry computation (what is launched),
            not the bodies of fusions and loops.
    """
    mod = module(fn, args)
    computations = [mod.entry] if entry_only else list(mod.values())
    return collections.Counter(i.op for body in computations for i in body)


# Library calls that compute a matrix product: XLA:GPU turns many dots
# into cuBLAS (and cuBLASLt) calls, which leave no ``dot`` in the module.
GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul")


def matrix_products(fn: Program, *args: Any) -> int:
    """The matrix products in a compiled module: ``dot`` instructions
    anywhere (fusion bodies, where Triton's GEMMs keep theirs, included)
    and calls to a GEMM library (`GEMM_TARGETS`), which is how XLA:GPU
    compiles many of them.

    Example:
        >>> matrix_products(jnp.dot, jnp.ones((4, 4)), jnp.ones((4, 4)))
        1
    """
    mod = module(fn, args)
    return sum(_is_gemm(i) for body in mod.values() for i in body)


def _is_gemm(inst: Instruction) -> bool:
    return inst.op == "dot" or (inst.op == "custom-call" and
                                _custom_call_target(inst).startswith(
                                    GEMM_TARGETS))


def source_products(fn: Program, *args: Any) -> int:
    """The matrix products the source asked for (``dot_general``s), each
    counted once where XLA launches it, whatever it became: a ``dot``, a
    GEMM library call, or, on a GPU, the reduction fusion XLA:GPU writes a
    matrix-vector product as (its ``op_name`` still ends in
    ``dot_general``; `matrix_products` counts none there). A loop body's
    products count once.
    """
    return sum(_is_product(i) for i in _launched(module(fn, args)))


def _is_product(inst: Instruction) -> bool:
    # XLA:CPU's dots may lose their metadata; XLA:GPU's reductions keep it.
    return launches_kernel(inst) and (
        _is_gemm(inst)
        or inst.metadata.get("op_name", "").endswith("dot_general"))


def custom_calls(fn: Program, *args: Any
                 ) -> list[CustomCall]:
    """The library calls one run makes (cuBLAS, cuDNN, LAPACK, Pallas...).

    Example:
        >>> [c.target for c in custom_calls(jnp.linalg.cholesky, jnp.eye(3))]
        ['lapack_spotrf_ffi']
    """
    return [CustomCall(i.name, _custom_call_target(i), i.shape)
            for i in _launched(module(fn, args)) if i.op == "custom-call"]


def _custom_call_target(inst: Instruction) -> str:
    return attribute(inst, "custom_call_target") or "?"


def kernels(fn: Program, *args: Any) -> list[Instruction]:
    """The instructions that launch work, each listed once (a loop body's
    kernels appear once however many times the loop runs).

    On a GPU each is one kernel launch (a library call may launch a few);
    on a CPU each is one step of XLA's runtime.
    """
    return [i for i in _launched(module(fn, args)) if launches_kernel(i)]


def launches_kernel(inst: Instruction) -> bool:
    """True for an instruction that launches work on the device (a fusion,
    a library call, a collective's start), not bookkeeping."""
    return inst.op not in _NO_LAUNCH and not inst.op.endswith("-done")


def _count(mod: Module, computation: str,
           counted: Callable[[Instruction], bool] = launches_kernel
           ) -> int | None:
    """Instructions for which ``counted`` holds (by default: kernels) that
    one run of ``computation`` executes; None when a loop inside has no
    known trip count."""
    total = 0
    for inst in mod.get(computation, []):
        if inst.op == "call":
            part = _count(mod, attribute(inst, "to_apply") or "", counted)
        elif inst.op == "while":
            trips = _trip_count(inst)
            body = _count(mod, attribute(inst, "body") or "", counted)
            part = None if trips is None or body is None else trips * body
        elif inst.op == "conditional":
            counts = [_count(mod, b, counted) for b in _branches(inst)]
            known = [c for c in counts if c is not None]
            part = max(known, default=0) if len(known) == len(counts) \
                else None
        else:
            part = int(counted(inst))
        if part is None:
            return None
        total += part
    return total


def _trip_count(inst: Instruction) -> int | None:
    known = inst.backend_config.get("known_trip_count", {})
    return int(known["n"]) if "n" in known else None


def kernel_count(fn: Program, *args: Any) -> int:
    """Kernels one call of ``fn(*args)`` launches, loops unrolled by their
    known trip counts.

    Raises:
        ValueError: a while loop's trip count depends on data; count per
            iteration with `while_loops` instead.

    Example:
        >>> def step(i, x):
        ...     return jnp.tanh(x) * 2
        >>> x = jnp.ones((4, 8))
        >>> kernel_count(lambda x: lax.fori_loop(0, 10, step, x), x)  # CPU
        22
    """
    mod = module(fn, args)
    count = _count(mod, mod.entry_name)
    if count is None:
        unknown = [w.name for w in _loops(mod) if w.trip_count is None]
        raise ValueError(
            f"the while loop(s) {unknown} have no trip count known at "
            "compile time, so the kernels per call depend on the data. "
            "Use while_loops() for the kernels per iteration.")
    return count


def executed_count(fn: Program, ops: set[str],
                   *args: Any) -> int | None:
    """How many instructions with an opcode in ``ops`` one call executes,
    loops unrolled by their known trip counts (None when a loop's count is
    unknown): a loop of three permutes counts three, not one.

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> from helpers.multi_device import meshes
        >>> def shifts(v):  # three shifts around a ring of two
        ...     return lax.fori_loop(
        ...         0, 3, lambda i, v: lax.ppermute(v, "i", [(0, 1), (1, 0)]),
        ...         v)
        >>> f = jax.jit(jax.shard_map(shifts, mesh=meshes.mesh((2,), ("i",)),
        ...                           in_specs=P("i"), out_specs=P("i")))
        >>> executed_count(f, {"collective-permute"}, jnp.ones(4))
        3
    """
    mod = module(fn, args)
    return _count(mod, mod.entry_name, lambda i: i.op in ops)


def while_loops(fn: Program, *args: Any) -> list[WhileLoop]:
    """Every while loop of the compiled module (nested ones too), with its
    trip count and the kernels one iteration launches.

    Example:
        >>> def step(i, x):
        ...     return jnp.tanh(x) * 2
        >>> x = jnp.ones((4, 8))
        >>> while_loops(lambda x: lax.fori_loop(0, 8000, step, x), x)
        ...     # doctest: +ELLIPSIS
        [WhileLoop(name='while.0', trip_count=8000, body_kernels=2, ...)]
    """
    return _loops(module(fn, args))


def _loops(mod: Module) -> list[WhileLoop]:
    return [WhileLoop(
        name=inst.name, trip_count=_trip_count(inst),
        body_kernels=_count(mod, attribute(inst, "body") or ""),
        condition_kernels=_count(mod, attribute(inst, "condition") or ""))
        for body in mod.values() for inst in body if inst.op == "while"]


def launch_summary(fn: Program, *args: Any
                   ) -> dict[str, Any]:
    """What one call launches, in three numbers a table can hold: the
    fusion kinds and library calls (each counted) and the kernels in all.

    Example:
        >>> launch_summary(lambda x: jnp.sin(x).sum(), jnp.ones(8))  # CPU
        {'fusion kinds': {'kLoop': 1}, 'custom calls': {}, 'kernels': 1}
    """
    text = module_text(fn, args)
    kinds = collections.Counter(f.kind for f in fusions(text))
    calls = collections.Counter(c.target for c in custom_calls(text))
    return {"fusion kinds": dict(kinds), "custom calls": dict(calls),
            "kernels": kernel_count(text)}


def reduction_kinds(fn: Program, *args: Any) -> str:
    """The emitter kinds of the fusions whose root is a ``reduce``, joined
    by ``/`` (``'kInput'``, ``'kLoop/kInput'``), or ``'no reduce fusion'``.

    Example:
        >>> reduction_kinds(lambda x: x.sum(1), jnp.ones((4, 8)))  # CPU
        'kLoop'
    """
    kinds = sorted({f.kind for f in fusions(fn, *args)
                    if f.root_op == "reduce"})
    return "/".join(kinds) or "no reduce fusion"
