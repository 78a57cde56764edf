"""Are two functions the same program once XLA has optimised them?

Two spellings of one computation, ``jnp.einsum('bhts,bhqs->bhtq', q, k)``
and ``q @ k.swapaxes(-2, -1)`` say, may compile to identical HLO: XLA
folds the transpose into the dot's dimension numbers. Then no benchmark
can find a real difference between them, and any it reports is noise or
drift. `program_diff` checks this before anything is timed.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from helpers.xla.hlo.compiling import Program, module
from helpers.xla.hlo.parsing import LITERAL_OPS

_NAME = re.compile(r"%?([A-Za-z_][\w.\-]*)")


def canonical_lines(fn_or_text: Program, *args: Any
                    ) -> list[str]:
    """The compiled module with every name and all metadata taken out.

    Computations are numbered ``c0, c1, ...`` and the instructions of each
    ``v0, v1, ...`` in the order they are printed; source locations and
    JAX paths (``metadata={...}``) are dropped. What is left is what runs.
    """
    mod = module(fn_or_text, args)
    called = {name: f"c{i}" for i, name in enumerate(mod)}
    lines = []
    for name, instructions in mod.items():
        local = {inst.name: f"v{i}" for i, inst in enumerate(instructions)}

        def rename(match: re.Match, local: dict = local) -> str:
            return called.get(match[1]) or local.get(match[1]) or match[0]

        for inst in instructions:
            operands = (inst.operand_text if inst.op in LITERAL_OPS else
                        ", ".join(local.get(o, "?") for o in inst.operands))
            attributes = "".join(
                f", {key}={_NAME.sub(rename, value)}"
                for key, value in inst.attrs.items() if key != "metadata")
            lines.append(f"{called[name]} {local[inst.name]} = {inst.shape} "
                         f"{inst.op}({operands}){attributes}")
    return lines


def program_diff(a: Program, b: Program,
                 *args: Any) -> list[str]:
    """How the optimised programs of ``a`` and ``b`` differ.

    Args:
        a, b: two functions (compiled here for ``args``) or two compiled
            HLO texts.
        *args: example arguments, when ``a`` and ``b`` are functions.

    Returns:
        The lines of a unified diff of their `canonical_lines`; empty when
        XLA compiled both to the same program.

    Example:
        >>> x = jnp.ones((4, 4))
        >>> program_diff(lambda x: x @ x.T,
        ...              lambda x: jnp.einsum('ij,kj->ik', x, x), x)
        []
    """
    texts = [f if isinstance(f, str) else None for f in (a, b)]
    left = canonical_lines(a, *([] if texts[0] else args))
    right = canonical_lines(b, *([] if texts[1] else args))
    return list(difflib.unified_diff(left, right, "a", "b", lineterm="", n=1))


_DIFF_OP = re.compile(r"^([+-])c\d+ v\d+ = .*? ([a-z][\w\-]*)\(")


def changed_ops(diff: list[str]) -> dict[str, tuple[int, int]]:
    """What a `program_diff` changes, counted by operation: ``{op: (in a
    only, in b only)}`` for the operations whose lines differ, so a diff
    of a hundred lines reads as "b adds 4 transposes".

    Example:
        >>> changed_ops(["--- a", "+++ b", "@@ -1 +1,2 @@",
        ...              "-c0 v1 = f32[2] negate(v0)",
        ...              "+c0 v1 = f32[2] transpose(v0), dimensions={0}",
        ...              "+c0 v2 = f32[2] negate(v1)"])
        {'transpose': (0, 1)}
    """
    counts: dict[str, list[int]] = {}
    for line in diff:
        found = _DIFF_OP.match(line)
        if found:
            side = 0 if found[1] == "-" else 1
            counts.setdefault(found[2], [0, 0])[side] += 1
    return {op: (a, b) for op, (a, b) in sorted(counts.items()) if a != b}
