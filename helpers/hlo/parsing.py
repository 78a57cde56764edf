"""Compile a function and read its optimised HLO text into a small model.

An HLO module is a set of named computations. The ENTRY computation is what
runs; the others are called from it: fused computations (the body of one
kernel), while-loop bodies and conditions, reducers, branches. Each line of
a computation is one instruction::

    %name = f32[2,3]{1,0} opcode(f32[2,3]{1,0} %operand, ...), key=value, ...

`parse` reads the text once into a `Module` of `Instruction` s, each with
its `Shape`, operands and attributes; the rest of `helpers.hlo` reads that
model, never the text.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from typing import Any, Callable

import jax

_COMMENT = re.compile(r"/\*.*?\*/")
# "ROOT %name = ..." or "name = ...": the start of an instruction.
_ASSIGN = re.compile(r"^(?P<root>ROOT\s+)?%?(?P<name>[^\s=%]+)\s*=\s*")
# "ENTRY %main.5 (x: f32[4]) -> f32[4] {" or "fused_computation {".
_HEADER = re.compile(r"^(?P<entry>ENTRY\s+)?%?(?P<name>[^\s(%{]+)")
_OPCODE = re.compile(r"\s*(?P<op>[\w\-]+)\(")
# "f32[8,<=4]{1,0:T(8,128)S(1)}": element type, dimensions, layout.
_ARRAY = re.compile(r"^(?P<dtype>[a-z][a-z0-9]*)\[(?P<dims>[^\]]*)\]"
                    r"(?:\{(?P<layout>.*)\})?$")
# Operations whose parentheses hold a literal, not operands.
LITERAL_OPS = frozenset({"parameter", "constant"})
# "{1}: (0, {}, may-alias)" inside the module header's input_output_alias.
_ALIAS = re.compile(r"\{(?P<out>[\d,\s]*)\}:\s*\((?P<param>\d+),\s*"
                    r"\{(?P<pidx>[\d,\s]*)\}(?:,\s*(?P<kind>[\w\-]+))?\)")
_CLOSING = {"(": ")", "[": "]", "{": "}"}
# What the readers of this package take: a function (compiled here with
# the example arguments given next), or compiled HLO text; None is what
# ``Compiled.as_text()`` is typed to return when a backend prints nothing,
# and gets a clear error.
Program = Callable[..., Any] | str | None


@dataclasses.dataclass(frozen=True)
class Shape:
    """An HLO shape: an array such as ``f32[8,128]{1,0}``, or a tuple.

    Attributes:
        text: the shape as written.
        dtype: the element type (``'f32'``, ``'pred'``, ``'token'``);
            None for a tuple.
        dims: the dimensions; a dynamic one (``<=4``) gives its bound, an
            unknown one ``-1``.
        layout: what the braces hold, as written (``'1,0:T(8,128)'``):
            the minor-to-major order, then any tiling and memory space.
        elements: a tuple's shapes (empty for an array).

    Example:
        >>> Shape.parse("f32[8,128]{1,0:T(8,128)}").minor_to_major
        (1, 0)
        >>> len(Shape.parse("(f32[2]{0}, (s32[], pred[]))").arrays)
        3
    """

    text: str
    dtype: str | None = None
    dims: tuple[int, ...] = ()
    layout: str | None = None
    elements: tuple["Shape", ...] = ()

    @classmethod
    def parse(cls, text: str) -> "Shape":
        """Read a shape as HLO text writes it.

        Raises:
            ValueError: the text is not a shape.
        """
        text = text.strip()
        if text.startswith("("):
            if _matching(text, 0) != len(text) - 1:
                raise ValueError(f"cannot read the shape {text!r}")
            inner = text[1:-1].strip()
            return cls(text, elements=tuple(
                cls.parse(part) for part in _split_top(inner)) if inner
                else ())
        array = _ARRAY.match(text)
        if not array:
            raise ValueError(f"cannot read the shape {text!r}")
        dims = tuple(_dimension(d) for d in array["dims"].split(",")
                     if d.strip())
        return cls(text, array["dtype"], dims, array["layout"])

    @property
    def is_tuple(self) -> bool:
        return self.dtype is None

    @property
    def minor_to_major(self) -> tuple[int, ...] | None:
        """The layout's dimension order, minor first (None if unstated)."""
        if not self.layout:
            return None
        order = self.layout.split(":", 1)[0]
        return tuple(int(v) for v in order.split(",") if v.strip())

    @property
    def arrays(self) -> tuple["Shape", ...]:
        """The arrays of the shape: itself, or a tuple's, flattened."""
        if not self.is_tuple:
            return (self,)
        return tuple(a for e in self.elements for a in e.arrays)

    def __str__(self) -> str:
        return self.text


def _dimension(text: str) -> int:
    text = text.strip().removeprefix("<=")
    return -1 if text == "?" else int(text)


class Module(dict[str, list["Instruction"]]):
    """A parsed module: ``{computation name: its instructions}``, each
    computation once, in the order printed.

    Attributes:
        name: the module's name (``HloModule jit_f, ...``).
        entry_name: the name of the ENTRY computation, the one that runs.
        header: the module's first line, as written (its attributes:
            ``is_scheduled``, ``input_output_alias``, layouts).
    """

    def __init__(self, name: str, header: str) -> None:
        super().__init__()
        self.name, self.header, self.entry_name = name, header, ""

    @property
    def entry(self) -> list["Instruction"]:
        """The instructions of the ENTRY computation."""
        return self[self.entry_name]


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One HLO instruction: ``name = shape op(operands), attributes``.

    The text fields keep what XLA wrote; the parsed ones (`result`,
    `operand_shapes`, `attrs`) are read from them.

    Attributes:
        name: without the ``%``.
        op: the opcode, e.g. ``'fusion'``.
        shape: the result shape as written.
        operands: the operand names, without ``%``.
        attributes: everything after the operands, as written.
        is_root: the computation's ROOT.
        operand_text: the parentheses' content as written (``"0"`` for
            ``parameter(0)``).
        result: the result shape, parsed.
        operand_shapes: each operand's shape where the text states it
            (XLA prints ``f32[8]{0} %x``), else None.
        attrs: ``{key: value as written}`` of the attributes.
        line: the line of the module text it was read from.
    """

    name: str
    op: str
    shape: str
    operands: tuple[str, ...]
    attributes: str
    is_root: bool
    operand_text: str = ""
    result: Shape | None = dataclasses.field(default=None, compare=False)
    operand_shapes: tuple[Shape | None, ...] = dataclasses.field(
        default=(), compare=False)
    attrs: dict[str, str] = dataclasses.field(
        default_factory=dict, compare=False, hash=False)
    line: int = dataclasses.field(default=0, compare=False)

    @property
    def backend_config(self) -> dict[str, Any]:
        """The ``backend_config`` JSON, decoded, whether XLA printed it
        bare or as a quoted string ({} when absent or not JSON)."""
        text = _unquoted(self.attrs.get("backend_config", ""))
        if not text.startswith("{"):
            return {}
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError:
            return {}
        return decoded if isinstance(decoded, dict) else {}

    @property
    def metadata(self) -> dict[str, str]:
        """``metadata={op_name="..." source_line=3}`` as a dict of strings."""
        text = self.attrs.get("metadata", "")
        return {m["key"]: _unquoted(m["value"])
                for m in _METADATA_ITEM.finditer(text)}


_METADATA_ITEM = re.compile(r'(?P<key>\w+)=(?P<value>"(?:[^"\\]|\\.)*"|'
                            r'[^\s}]+)')


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
    """Read HLO module text into a `Module`: its computations, each a list
    of parsed `Instruction` s.

    Reads what XLA prints: names with or without ``%``, operands with or
    without their shapes, tiled and memory-space layouts, tuple shapes,
    backend configs bare or quoted, scheduled modules.

    Raises:
        ValueError: naming the line, for a line inside a computation that
            is not an instruction, or text without an ENTRY computation.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() takes HLO text (a str), got a "
                        f"{type(text).__name__}.")
    module = Module("", "")
    current: list[Instruction] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        # Long tuple shapes carry "/*index=5*/" comments; drop them.
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        if line.startswith("HloModule") and not module.header:
            module.header = line
            module.name = line.split()[1].rstrip(",") if " " in line else ""
        elif current is not None and line == "}":
            current = None
        elif current is not None:
            current.append(_instruction(line, number))
        elif line.endswith("{") and not _ASSIGN.match(line):
            header = _HEADER.match(line)
            if not header:
                raise ValueError(f"line {number}: cannot read this "
                                 f"computation header: {raw.strip()[:200]}")
            current = module.setdefault(header["name"], [])
            if header["entry"]:
                module.entry_name = header["name"]
        # Anything else outside a computation (stack-frame tables that
        # newer XLA appends) is not part of the program.
    if not module.entry_name:
        raise ValueError("no ENTRY computation found: is this HLO module "
                         "text (compiled.as_text())?")
    return module


def _instruction(line: str, number: int) -> Instruction:
    """One instruction line, parsed; a ValueError names the line."""
    try:
        assign = _ASSIGN.match(line)
        if not assign:
            raise ValueError("no 'name = ...'")
        at = assign.end()
        shape_end = _token_end(line, at)
        shape = line[at:shape_end]
        opcode = _OPCODE.match(line, shape_end)
        if not opcode:
            raise ValueError("no opcode(...) after the shape")
        open_at = opcode.end() - 1
        close_at = _matching(line, open_at)
        operand_text = line[open_at + 1:close_at]
        attributes = line[close_at + 1:]
        operands = (() if opcode["op"] in LITERAL_OPS
                    else tuple(_operand(p) for p in _split_top(operand_text)))
        return Instruction(
            name=assign["name"], op=opcode["op"], shape=shape,
            operands=tuple(name for name, _ in operands),
            attributes=attributes, is_root=bool(assign["root"]),
            operand_text=operand_text, result=Shape.parse(shape),
            operand_shapes=tuple(shape for _, shape in operands),
            attrs=dict(_attribute_items(attributes)), line=number)
    except ValueError as err:
        raise ValueError(f"line {number}: cannot read this instruction "
                         f"({err}): {line[:200]}") from None


def _operand(text: str) -> tuple[str, Shape | None]:
    """``'f32[8]{0} %x'``, ``'%x'`` or ``'x'``: the name, and the shape
    when one is written before it."""
    text = text.strip()
    split = _last_top_space(text)
    if split < 0:
        return text.lstrip("%"), None
    return text[split + 1:].lstrip("%"), Shape.parse(text[:split])


def _attribute_items(text: str) -> list[tuple[str, str]]:
    """``', kind=kLoop, calls=%f'`` -> ``[('kind', 'kLoop'), ...]``."""
    items = []
    for part in _split_top(text):
        key, sep, value = part.strip().partition("=")
        if sep:
            items.append((key.strip(), value.strip()))
    return items


def _unquoted_chars(text: str, start: int = 0
                    ) -> Iterator[tuple[int, str, int]]:
    """``(index, char, depth)`` of the characters outside quoted strings,
    from ``start``; ``depth`` counts the brackets open once ``char`` is
    read (an opening bracket raises it, a closing one lowers it)."""
    depth, quoted, escaped = 0, False, False
    for at in range(start, len(text)):
        char = text[at]
        if quoted:
            quoted = not (char == '"' and not escaped)
            escaped = char == "\\" and not escaped
            continue
        if char == '"':
            quoted = True
            continue
        if char in _CLOSING:
            depth += 1
        elif char in _CLOSING.values():
            depth -= 1
        yield at, char, depth


def _matching(text: str, start: int) -> int:
    """The index of the bracket closing the one at ``start``, skipping
    quoted strings and nested brackets."""
    for at, char, depth in _unquoted_chars(text, start):
        if depth == 0 and char in _CLOSING.values():
            return at
    raise ValueError(f"unbalanced {text[start]!r}")


def _top_level(text: str) -> Iterator[tuple[int, str]]:
    """``(index, char)`` of the characters outside brackets and quotes."""
    for at, char, depth in _unquoted_chars(text):
        if depth == 0 and char not in _CLOSING.values():
            yield at, char


def _split_top(text: str) -> list[str]:
    """Split at the commas outside brackets and quotes; drop empty parts."""
    cuts = [at for at, char in _top_level(text) if char == ","]
    parts = [text[a + 1:b] for a, b in zip([-1] + cuts, cuts + [len(text)])]
    return [part for part in parts if part.strip()]


def _token_end(text: str, start: int) -> int:
    """Where the token starting at ``start`` ends: the first space outside
    brackets (a tuple shape has spaces inside its parentheses)."""
    space = next((at for at, char in _top_level(text[start:])
                  if char == " "), None)
    if space is None:
        raise ValueError("no space after the shape")
    return start + space


def _last_top_space(text: str) -> int:
    spaces = [at for at, char in _top_level(text) if char == " "]
    return spaces[-1] if spaces else -1


def _unquoted(text: str) -> str:
    """A quoted attribute value's content, escapes undone; else as is."""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text[1:-1]
    return text


def module_text(fn_or_text: Program,
                args: tuple[Any, ...]) -> str:
    """HLO text as given, or compiled from a function and its arguments."""
    if fn_or_text is None:
        raise TypeError("got None instead of HLO text: the compiled object "
                        "printed nothing (as_text() returned None).")
    if isinstance(fn_or_text, str):
        if args:
            raise TypeError("pass either HLO text, or a function with its "
                            "arguments, not text with arguments.")
        return fn_or_text
    return compiled_text(fn_or_text, *args)


def module(fn_or_text: Program, args: tuple[Any, ...]
           ) -> Module:
    """The parsed module of HLO text, or of a function compiled for args."""
    return parse(module_text(fn_or_text, args))


def op_names(fn_or_text: Program, *args: Any
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
    return {inst.name: inst.metadata["op_name"]
            for instructions in module(fn_or_text, args).values()
            for inst in instructions if "op_name" in inst.metadata}


def attribute(instruction: Instruction, key: str) -> str | None:
    """The value of ``key=...`` on an instruction, without a leading ``%``
    or quotes (``calls=%fused`` gives ``'fused'``), or None."""
    value = instruction.attrs.get(key)
    return None if value is None else _unquoted(value).lstrip("%")


def braced_attribute(instruction: Instruction, key: str) -> str | None:
    """The ``{...}`` value of ``key={...}``, nested braces included, or
    None when the key is absent or its value is not in braces."""
    value = instruction.attrs.get(key)
    return value if value is not None and value.startswith("{") else None


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.replace(" ", "").split(",") if v)


def aliases(fn: Program, *args: Any) -> list[Alias]:
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
