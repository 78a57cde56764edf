"""Compile a function and split its optimised HLO text into computations.

An HLO module is a set of named computations. The ENTRY computation is what
runs; the others are called from it: fused computations (the body of one
kernel), while-loop bodies and conditions, reducers, branches. Each line of
a computation is one instruction::

    %name = f32[2,3]{1,0} opcode(%operand, ...), attribute=value, ...
"""

from __future__ import annotations

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
_COMMENT = re.compile(r"/\*.*?\*/")
# "{1}: (0, {}, may-alias)" inside the module header's input_output_alias.
_ALIAS = re.compile(r"\{(?P<out>[\d,\s]*)\}:\s*\((?P<param>\d+),\s*"
                    r"\{(?P<pidx>[\d,\s]*)\}(?:,\s*(?P<kind>[\w\-]+))?\)")

Module = dict[str, list["Instruction"]]


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One HLO instruction: ``name = shape op(operands), attributes``."""

    name: str
    op: str
    shape: str
    operands: tuple[str, ...]
    attributes: str
    is_root: bool
    operand_text: str = ""  # as written: "%a, %b", or "0" for parameter(0)


@dataclasses.dataclass(frozen=True)
class Alias:
    """An output that may reuse an input's buffer (donation, in-place).

    Attributes:
        output_index: the output's position in the result tuple (``()`` for
            a single, untupled result).
        parameter: which argument of the compiled function it aliases.
        parameter_index: the position inside that argument's tuple.
        kind: ``'may-alias'`` or ``'must-alias'``.
    """

    output_index: tuple[int, ...]
    parameter: int
    parameter_index: tuple[int, ...]
    kind: str


def compile(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Lower and compile ``fn`` for ``args``, with errors a reader can act on.

    Args:
        fn: a function or an already jitted one.
        *args, **kwargs: example arguments (arrays or ShapeDtypeStructs).

    Returns:
        The `jax.stages.Compiled` object.

    Example:
        >>> compile(lambda x: x + 1, jnp.ones(3)).as_text()[:9]
        'HloModule'
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


def parse(text: str) -> Module:
    """Split HLO module text into ``{computation name: instructions}``.

    The entry computation is also stored under the key ``'ENTRY'``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() takes HLO text (a str), got a "
                        f"{type(text).__name__}.")
    computations: Module = {}
    current: list[Instruction] | None = None
    for line in text.splitlines():
        # Long tuple shapes carry "/*index=5*/" comments; drop them.
        line = _COMMENT.sub("", line)
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
                attributes=match["attrs"], is_root=bool(match["root"]),
                operand_text=match["operands"]))
    if "ENTRY" not in computations:
        raise ValueError("no ENTRY computation found: is this HLO module "
                         "text (compiled.as_text())?")
    return computations


def module_text(fn_or_text: Callable[..., Any] | str,
                args: tuple[Any, ...]) -> str:
    """HLO text as given, or compiled from a function and its arguments."""
    if isinstance(fn_or_text, str):
        if args:
            raise TypeError("pass either HLO text, or a function with its "
                            "arguments, not text with arguments.")
        return fn_or_text
    return compiled_text(fn_or_text, *args)


def module(fn_or_text: Callable[..., Any] | str, args: tuple[Any, ...]
           ) -> Module:
    """The parsed module of HLO text, or of a function compiled for args."""
    return parse(module_text(fn_or_text, args))


_OP_NAME = re.compile(r'op_name="(?P<op_name>[^"]*)"')


def op_names(fn_or_text: Callable[..., Any] | str, *args: Any
             ) -> dict[str, str]:
    """Each instruction's ``op_name`` metadata: the JAX source path.

    JAX records where each HLO instruction came from as a path such as
    ``jit(f)/attn_q_k/dot_general``, ``jax.named_scope`` names included;
    a fusion carries the path of the operation it was built around. A
    profile names kernels after HLO instructions, so this dict is what
    ties a kernel back to the scope in the source.

    Returns:
        ``{instruction name: op_name}`` over all computations, for the
        instructions that have one.
    """
    found = {}
    for instructions in module(fn_or_text, args).values():
        for inst in instructions:
            match = _OP_NAME.search(inst.attributes)
            if match:
                found[inst.name] = match["op_name"]
    return found


def attribute(instruction: Instruction, key: str) -> str | None:
    """The value of ``key=...`` on an instruction (one token), or None."""
    match = re.search(rf"\b{key}=%?([\w.\-$]+)", instruction.attributes)
    return match.group(1) if match else None


def braced_attribute(instruction: Instruction, key: str) -> str | None:
    """The ``{...}`` value of ``key={...}``, nested braces included."""
    start = instruction.attributes.find(f"{key}=")
    if start < 0:
        return None
    text = instruction.attributes[start + len(key) + 1:]
    depth = 0
    for end, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return text[:end + 1]
    return None


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.replace(" ", "").split(",") if v)


def aliases(fn: Callable[..., Any] | str, *args: Any) -> list[Alias]:
    """Which outputs of the compiled module may reuse an input buffer.

    Donating an argument (``jax.jit(f, donate_argnums=0)``) lets XLA write
    the result into the argument's memory; the module header then lists
    the pair under ``input_output_alias``.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.

    Example:
        >>> aliases(jax.jit(lambda x: x * 2, donate_argnums=0), jnp.ones(4))
        [Alias(output_index=(), parameter=0, parameter_index=(), ...)]
    """
    text = module_text(fn, args)
    header = text.split("\n", 1)[0]
    start = header.find("input_output_alias=")
    if start < 0:
        return []
    return [Alias(_ints(m["out"]), int(m["param"]), _ints(m["pidx"]),
                  m["kind"] or "may-alias")
            for m in _ALIAS.finditer(header[start:])]
