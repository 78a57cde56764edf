"""Reading what XLA compiled: fusions, ops, kernels.

`jax.jit(f).lower(*args).compile().as_text()` is the optimised HLO module
that actually runs. Each top-level ``fusion`` instruction of its entry
computation becomes one GPU kernel; its ``kind=`` says which emitter wrote
it (``kLoop`` elementwise, ``kInput`` reductions, ``kOutput`` epilogues,
``kCustom`` for Triton and other custom fusions). This module turns that
text into small Python records a chapter can print or a test can assert on.
"""

from __future__ import annotations

import collections
import dataclasses
import re
from typing import Any, Callable

import jax

# "%name = f32[2,3]{1,0} opcode(operands...), attr=..., ..." (HLO text).
_INSTRUCTION = re.compile(
    r"^\s*(?P<root>ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*"
    r"(?P<shape>\([^=]*?\)|[\w\[\]{},:\s]*?)\s+"
    r"(?P<op>[\w\-]+)\((?P<operands>.*?)\)(?P<attrs>.*)$")
_COMPUTATION = re.compile(r"^(?P<entry>ENTRY\s+)?%?(?P<name>[\w.\-]+)\s.*\{$")
_OPERAND = re.compile(r"%([\w.\-]+)")


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One HLO instruction: ``name = shape op(operands), attributes``."""

    name: str
    op: str
    shape: str
    operands: tuple[str, ...]
    attributes: str
    is_root: bool


@dataclasses.dataclass(frozen=True)
class Fusion:
    """A fusion of the entry computation: one kernel on a GPU.

    Attributes:
        name: the instruction name, e.g. ``'fusion.3'``.
        kind: the emitter, e.g. ``'kLoop'`` or ``'kInput'``.
        root_op: the opcode of the fused computation's ROOT, e.g.
            ``'reduce'``.
        operand_shapes: shapes of the fusion's inputs.
        output_shape: shape of its result.
    """

    name: str
    kind: str
    root_op: str
    operand_shapes: tuple[str, ...]
    output_shape: str


def compile(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Lower and compile ``fn`` for ``args``, with errors a reader can act on.

    Args:
        fn: a function or an already jitted one.
        *args, **kwargs: example arguments (arrays or ShapeDtypeStructs).

    Returns:
        The `jax.stages.Compiled` object.
    """
    if not callable(fn):
        raise TypeError(f"expected a function to compile, got a "
                        f"{type(fn).__name__}. Pass the function itself.")
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    name = getattr(fn, "__name__", repr(fn))
    try:
        return jitted.lower(*args, **kwargs).compile()
    except jax.errors.ConcretizationTypeError as err:
        raise TypeError(
            f"{name} cannot be jitted: it uses a traced value where Python "
            "needs a concrete one (an `if` on an array, a shape computed "
            "from data). Use jnp.where / lax.cond, or mark the argument "
            f"static. JAX said: {str(err).splitlines()[0]}") from err
    except TypeError as err:
        raise TypeError(
            f"{name} could not be traced with the arguments given "
            f"({_describe_args(args, kwargs)}): {err}") from err


def _describe_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    shapes = [f"{getattr(a, 'dtype', type(a).__name__)}"
              f"{list(getattr(a, 'shape', []))}" for a in args]
    shapes += [f"{k}=..." for k in kwargs]
    return ", ".join(shapes) or "no arguments"


def compiled_text(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The optimised HLO module XLA compiled for ``fn(*args)``, as text."""
    return compile(fn, *args, **kwargs).as_text()


def parse(text: str) -> dict[str, list[Instruction]]:
    """Split HLO module text into ``{computation name: instructions}``.

    The entry computation is also stored under the key ``'ENTRY'``.
    """
    computations: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    for line in text.splitlines():
        header = _COMPUTATION.match(line.strip())
        if header and "=" not in line.split("{")[0].split("(")[0]:
            current = computations.setdefault(header["name"], [])
            if header["entry"]:
                computations["ENTRY"] = current
            continue
        if line.strip() == "}":
            current = None
            continue
        match = _INSTRUCTION.match(line)
        if match and current is not None:
            current.append(Instruction(
                name=match["name"], op=match["op"],
                shape=match["shape"].strip(),
                operands=tuple(_OPERAND.findall(match["operands"])),
                attributes=match["attrs"], is_root=bool(match["root"])))
    if "ENTRY" not in computations:
        raise ValueError("no ENTRY computation found: is this HLO module "
                         "text (compiled.as_text())?")
    return computations


def _module(fn_or_text: Callable[..., Any] | str, args: tuple[Any, ...]
            ) -> dict[str, list[Instruction]]:
    if isinstance(fn_or_text, str):
        if args:
            raise TypeError("pass either HLO text, or a function with its "
                            "arguments, not text with arguments.")
        return parse(fn_or_text)
    return parse(compiled_text(fn_or_text, *args))


def _attribute(attributes: str, key: str) -> str | None:
    match = re.search(rf"\b{key}=%?([\w.\-]+)", attributes)
    return match.group(1) if match else None


def fusions(fn: Callable[..., Any] | str, *args: Any) -> list[Fusion]:
    """The fusions of the entry computation of ``fn(*args)``'s compiled HLO.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.

    Example:
        >>> [f.kind for f in fusions(lambda x: (x * 2).sum(1), x)]
        ['kInput']
    """
    module = _module(fn, args)
    shapes = {inst.name: inst.shape for inst in module["ENTRY"]}
    found = []
    for inst in module["ENTRY"]:
        if inst.op != "fusion":
            continue
        called = module.get(_attribute(inst.attributes, "calls") or "", [])
        root = next((i.op for i in called if i.is_root), "?")
        found.append(Fusion(
            name=inst.name, kind=_attribute(inst.attributes, "kind") or "?",
            root_op=root,
            operand_shapes=tuple(shapes.get(n, "?") for n in inst.operands),
            output_shape=inst.shape))
    return found


def op_counts(fn: Callable[..., Any] | str, *args: Any,
              entry_only: bool = True) -> collections.Counter[str]:
    """How often each opcode appears in the compiled module.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.
        entry_only: count only the entry computation (what is launched),
            not the bodies of fusions and loops.
    """
    module = _module(fn, args)
    computations = ([module["ENTRY"]] if entry_only else
                    [body for name, body in module.items() if name != "ENTRY"])
    return collections.Counter(i.op for body in computations for i in body)
