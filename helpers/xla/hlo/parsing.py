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
        if text.startswith("b(") and text.endswith(")"):
            # a buffer: XLA's b(shape), read as the shape it holds
            return dataclasses.replace(cls.parse(text[2:-1]), text=text)
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
                            r"'(?:[^'\\]|\\.)*'|[^\s,}]+)")


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

    Reads the forms XLA's own parser accepts (tested against the installed
    jaxlib's): names with or without ``%``; operands with or without
    shapes, or nested instructions (named ``<opcode>.anon`` as XLA names
    them); shapes left out for XLA to infer; instructions over several
    lines; every layout part, dynamic dimensions, tuple and buffer shapes;
    attributes in any order, quoted or braced; comments, execution
    threads, stack-frame tables.

    Raises:
        ValueError: naming the line, for a line inside a computation that
            is not an instruction, or text without an ENTRY computation.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() takes HLO text (a str), got a "
                        f"{type(text).__name__}.")
    module = Module("", "")
    current: list[Instruction] | None = None
    pending, first = "", 0  # an instruction written over several lines
    for number, raw in enumerate(text.splitlines(), start=1):
        # Long tuple shapes carry "/*index=5*/" comments; drop them.
        line = scanning.without_line_comment(_COMMENT.sub("", raw)).strip()
        if not line:
            continue
        if current is not None and not pending and line.startswith("}"):
            current = None  # "}" or "}, execution_thread=..."
        elif current is not None:
            pending, first = f"{pending} {line}".strip(), first or number
            if scanning.open_brackets(pending) > 0 or pending.endswith(","):
                continue
            _add(current, _instruction(pending, first))
            pending, first = "", 0
        elif line.startswith("HloModule") and not module.header:
            module.header = line
            module.name = (line.split()[1].rstrip(",:") if " " in line
                           else "")
        elif line.endswith("{") and not _ASSIGN.match(line):
            current = module.setdefault(_header(line, number), [])
            if line.startswith("ENTRY"):
                module.entry_name = _header(line, number)
        # Anything else outside a computation (the stack-frame tables XLA
        # writes before the first one) is not part of the program.
    if pending:
        _instruction(pending, first)  # raises: its brackets never close
    if not module.entry_name:
        raise ValueError("no ENTRY computation found: is this HLO module "
                         "text (compiled.as_text())?")
    return module


def _header(line: str, number: int) -> str:
    """The name a computation's header line gives it."""
    header = _HEADER.match(line)
    if not header:
        raise ValueError(f"line {number}: cannot read this computation "
                         f"header: {line[:200]}")
    return header["name"]


def _add(computation: list[Instruction],
         instructions: list[Instruction]) -> None:
    """Append an instruction and those nested in its operands (first),
    naming each nested one ``<opcode>.anon`` once, then with ``.1``,
    ``.2``... as XLA keeps names unique."""
    taken = {i.name for i in computation}
    renamed: dict[str, str] = {}
    for inst in instructions:
        operands = tuple(renamed.get(o, o) for o in inst.operands)
        name = inst.name
        if name.endswith(_ANON):
            count = 0
            while name in taken:
                count += 1
                name = f"{inst.name}.{count}"
            renamed[inst.name] = name
        taken.add(name)
        computation.append(dataclasses.replace(inst, name=name,
                                               operands=operands))


_ANON = ".anon"  # XLA's name for an instruction nested as an operand


def _instruction(line: str, number: int) -> list[Instruction]:
    """One instruction, parsed, after those nested in its operands; a
    ValueError names the line."""
    try:
        assign = _ASSIGN.match(line)
        if not assign:
            raise ValueError("no 'name = ...'")
        nested: list[Instruction] = []
        found = _right_hand_side(assign["name"], line[assign.end():],
                                 number, nested)
        return [*nested, dataclasses.replace(found,
                                             is_root=bool(assign["root"]))]
    except ValueError as err:
        raise ValueError(f"line {number}: cannot read this instruction "
                         f"({err}): {line[:200]}") from None


def _right_hand_side(name: str, text: str, number: int,
                     nested: list[Instruction]) -> Instruction:
    """``shape? opcode(operands), attributes``: the shape may be left out
    (XLA infers it; `Instruction.result` is then None)."""
    shape_end = _shape_end(text)
    shape = text[:shape_end].strip()
    opcode = _OPCODE.match(text, shape_end)
    if not opcode:
        raise ValueError("no opcode(...) after the shape")
    open_at = opcode.end() - 1
    close_at = scanning.matching(text, open_at)
    operand_text = text[open_at + 1:close_at]
    attributes = text[close_at + 1:]
    operands = (() if opcode["op"] in LITERAL_OPS else tuple(
        _operand(p, number, nested)
        for p in scanning.split_top(operand_text)))
    return Instruction(
        name=name, op=opcode["op"], shape=shape,
        operands=tuple(name for name, _ in operands),
        attributes=attributes, is_root=False, operand_text=operand_text,
        result=Shape.parse(shape) if shape else None,
        operand_shapes=tuple(shape for _, shape in operands),
        attrs=dict(_attribute_items(attributes)), line=number)


def _shape_end(text: str) -> int:
    """Where the shape before the opcode ends: 0 when there is none (the
    text starts ``opcode(``; ``b(`` is a buffer shape, not an opcode)."""
    written = _OPCODE.match(text)
    if written and written["op"] != "b":
        return 0
    return scanning.token_end(text, 0)


def _operand(text: str, number: int, nested: list[Instruction]
             ) -> tuple[str, Shape | None]:
    """``'f32[8]{0} %x'``, ``'%x'`` or ``'x'``: the name, and the shape
    when one is written before it. An instruction written in place of a
    name (``negate(x)``, with or without its shape) is read into
    ``nested`` and named as XLA names it."""
    text = text.strip()
    if text.endswith(")"):
        op = _OPCODE.search(text[_shape_end(text):])
        inner = _right_hand_side(f"{op['op'] if op else '?'}{_ANON}", text,
                                 number, nested)
        nested.append(inner)
        return inner.name, inner.result
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


