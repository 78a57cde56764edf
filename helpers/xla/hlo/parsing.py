"""Read HLO text into a small model: computations of typed instructions.

An HLO module is a set of named computations. The ENTRY computation is what
runs; the others are called from it: fused computations (the body of one
kernel), while-loop bodies and conditions, reducers, branches. Each line of
a computation is one instruction::

    %name = f32[2,3]{1,0} opcode(f32[2,3]{1,0} %operand, ...), key=value, ...

`parse` reads the text once into a `Module` of `Instruction` s, each with
its `Shape`, operands and attributes; the rest of `helpers.xla.hlo` reads that
model, never the text.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any


from helpers.xla.hlo import scanning

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
            if scanning.matching(text, 0) != len(text) - 1:
                raise ValueError(f"cannot read the shape {text!r}")
            inner = text[1:-1].strip()
            return cls(text, elements=tuple(
                cls.parse(part) for part in scanning.split_top(inner)) if inner
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
        text = scanning.unquoted(self.attrs.get("backend_config", ""))
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
        return {m["key"]: scanning.unquoted(m["value"])
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
        shape_end = scanning.token_end(line, at)
        shape = line[at:shape_end]
        opcode = _OPCODE.match(line, shape_end)
        if not opcode:
            raise ValueError("no opcode(...) after the shape")
        open_at = opcode.end() - 1
        close_at = scanning.matching(line, open_at)
        operand_text = line[open_at + 1:close_at]
        attributes = line[close_at + 1:]
        operands = (() if opcode["op"] in LITERAL_OPS else tuple(
            _operand(p) for p in scanning.split_top(operand_text)))
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
    split = scanning.last_top_space(text)
    if split < 0:
        return text.lstrip("%"), None
    return text[split + 1:].lstrip("%"), Shape.parse(text[:split])


def _attribute_items(text: str) -> list[tuple[str, str]]:
    """``', kind=kLoop, calls=%f'`` -> ``[('kind', 'kLoop'), ...]``."""
    items = []
    for part in scanning.split_top(text):
        key, sep, value = part.strip().partition("=")
        if sep:
            items.append((key.strip(), value.strip()))
    return items


def attribute(instruction: Instruction, key: str) -> str | None:
    """The value of ``key=...`` on an instruction, without a leading ``%``
    or quotes (``calls=%fused`` gives ``'fused'``), or None."""
    value = instruction.attrs.get(key)
    return None if value is None else scanning.unquoted(value).lstrip("%")


def braced_attribute(instruction: Instruction, key: str) -> str | None:
    """The ``{...}`` value of ``key={...}``, nested braces included, or
    None when the key is absent or its value is not in braces."""
    value = instruction.attrs.get(key)
    return value if value is not None and value.startswith("{") else None


