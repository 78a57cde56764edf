"""Read a kernel's loop in the PTX XLA:GPU wrote: what one iteration
executes, and the chain of dependent instructions a single thread waits
through.

A loop that carries a value from one iteration to the next (one chain of
a scan) cannot run faster than its *critical path*: the longest sequence
of instructions, each needing the one before, from a carried value at
the top of the body to its own new value at the bottom. (A chain that
ends in another carried value, such as the next step's input loaded
ahead, overlaps with the next iteration and is not counted.) Throughput does
not help it; latency does. `critical_path` finds that sequence in the
PTX, and `by_kind` counts it by the kinds of instruction whose latencies
differ most: special functions (the SFU's exponentials, reciprocals,
tanh), warp shuffles, memory loads and ordinary arithmetic.

PTX is a virtual instruction set that ``ptxas`` still schedules and
rewrites (it may fuse a multiply and an add), so the counts describe
the program XLA handed on, not the machine code; the dependencies do
not change.

``xla_dump_to`` with `helpers.xla.xla_dump.PTX_OPTIONS` makes XLA write
the PTX of each module (``*.ptx``; `helpers.xla.xla_dump.Dump.ptx`),
Triton's kernels included.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

# An instruction: an optional predicate guard, the opcode with its
# modifiers, and its operands up to the semicolon.
_INSTRUCTION = re.compile(r"^(?:@!?(%\w+)\s+)?([a-z][\w.]*)\s*(.*?);")
_REGISTER = re.compile(r"%[a-z]+\d+")
_LABEL = re.compile(r"^(\$?\w+):")
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?\w+)\s*;")
_FUNCTION = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b"
                       r"|^\.version\b")

# The instruction kinds `by_kind` counts, by opcode prefix, the first
# match winning: the special functions come before the divisions, since
# ``div.full`` and ``div.approx`` (a reciprocal and a multiply) share the
# prefix ``div.`` with the exact division.
KINDS = (
    ("special function", ("tanh.", "ex2.", "lg2.", "rcp.", "rsqrt.",
                          "sin.", "cos.", "sqrt.approx", "div.full",
                          "div.approx")),
    ("division", ("div.",)),
    ("shuffle", ("shfl.",)),
    ("load", ("ld.",)),
    ("arithmetic", ("add.", "sub.", "mul.", "fma.", "mad.", "neg.",
                    "abs.", "min.", "max.", "cvt.", "selp.", "mov.",
                    "and.", "or.", "xor.", "shl.", "shr.", "setp.",
                    "copysign.", "testp.")),
)


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One PTX instruction: its opcode (with modifiers), the registers it
    writes and those it reads."""

    opcode: str
    writes: tuple[str, ...]
    reads: tuple[str, ...]

    @property
    def kind(self) -> str:
        """One of `KINDS`' names, or ``'other'``."""
        for name, prefixes in KINDS:
            if self.opcode.startswith(prefixes):
                return name
        return "other"


def parse(statement: str) -> Instruction | None:
    """The instruction in ``statement`` (PTX up to its semicolon), or None
    for a label, a directive, a comment or a blank. The first operand is
    what an instruction writes (a register or a braced list of them),
    except for stores, branches and barriers, which write none.

    Example:
        >>> parse("  fma.rn.f32  %r3, %r1, %r2, %r3;")
        Instruction(opcode='fma.rn.f32', writes=('%r3',), reads=('%r1', \
'%r2', '%r3'))
    """
    text = statement.split("//")[0].strip()
    found = _INSTRUCTION.match(text if text.endswith(";") else text + ";")
    if not found or text.startswith("."):
        return None
    guard, opcode, operands = found.groups()
    guards = (guard,) if guard else ()
    # stores, branches and the like write memory or nothing; so does an
    # instruction whose first operand is an address ([...])
    writes_none = opcode.startswith(("st.", "bra", "bar.", "ret", "red.",
                                     "prefetch", "griddep")) or \
        operands.lstrip().startswith("[")
    if writes_none:
        return Instruction(opcode, (),
                           guards + tuple(_REGISTER.findall(operands)))
    end = (operands.find("}") + 1 if operands.lstrip().startswith("{")
           else operands.find(","))
    first, rest = ((operands, "") if end <= 0
                   else (operands[:end], operands[end:]))
    return Instruction(opcode, tuple(_REGISTER.findall(first)),
                       guards + tuple(_REGISTER.findall(rest)))


def _statements(ptx: str) -> list[str]:
    """Each line's statements (inline assembly puts several on a line),
    comments dropped."""
    return [part for line in ptx.splitlines()
            for part in line.split("//")[0].split(";") if part.strip()]


def loops(ptx: str) -> list[list[Instruction]]:
    """The body of every loop in ``ptx``: the instructions from a label to
    a branch back to it, innermost loops as written (a loop containing
    another is returned whole too). Labels are local to a function, so
    several modules' PTX joined together read apart."""
    statements = _statements(ptx)
    labels: dict[str, int] = {}
    bodies = []
    for number, statement in enumerate(statements):
        if _FUNCTION.match(statement.strip()):
            labels = {}  # a new kernel or module: its own labels
        label = _LABEL.match(statement.strip())
        if label:
            labels[label.group(1)] = number
            statement = statement.strip()[label.end():]
        branch = _BRANCH.search(statement + ";")
        if branch and branch.group(1) in labels:
            start = labels[branch.group(1)]
            body = [parse(s) for s in statements[start:number + 1]]
            bodies.append([i for i in body if i is not None])
    return bodies


def critical_path(body: list[Instruction]) -> list[Instruction]:
    """The longest recurrence of ``body``: for a value the loop carries
    (a register read in the body before it is written there), the chain
    of dependent instructions from its read at the top to its own new
    value, the longest over all carried values. That is what a single
    thread must wait through, one instruction after another, every
    iteration. Each instruction counts once; `by_kind` says what they
    are."""
    best: list[Instruction] = []
    for carried in sorted(_carried(body)):
        path = _recurrence(body, carried)
        if len(path) > len(best):
            best = path
    return best


def _recurrence(body: list[Instruction], carried: str
                ) -> list[Instruction]:
    """The longest chain from ``carried``'s value entering the iteration
    to its value leaving it (values not derived from it are ready at the
    start)."""
    chains: dict[str, list[Instruction]] = {carried: []}
    found: list[Instruction] = []
    for instruction in body:
        before = [chains[r] for r in instruction.reads if r in chains]
        for register in instruction.writes:
            chains.pop(register, None)  # overwritten by a new value
        if not before:
            continue
        path = max(before, key=len) + [instruction]
        for register in instruction.writes:
            chains[register] = path
            if register == carried and len(path) > len(found):
                found = path
    return found


def _carried(body: list[Instruction]) -> set[str]:
    """Registers read before they are written in the body, and written
    later in it: the loop's carried values."""
    written: set[str] = set()
    read_first: set[str] = set()
    for instruction in body:
        read_first.update(r for r in instruction.reads if r not in written)
        written.update(instruction.writes)
    return read_first & written


def by_kind(instructions: list[Instruction]) -> dict[str, int]:
    """How many of ``instructions`` are of each kind (`KINDS`), largest
    first."""
    return dict(Counter(i.kind for i in instructions).most_common())


def hottest_loop(ptx: str) -> list[Instruction]:
    """The loop with the longest critical path: for a fused scan, the
    scan's loop (the setup's small loops carry nothing long).

    Raises:
        ValueError: ``ptx`` has no loop.
    """
    found = loops(ptx)
    if not found:
        raise ValueError("This PTX has no loop (no branch back to a "
                         "label): was the scan unrolled, or is this the "
                         "right kernel?")
    return max(found, key=lambda body: len(critical_path(body)))
