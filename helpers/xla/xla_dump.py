"""What XLA wrote while compiling: the options it used, each pass's HLO and
the steps its GPU runtime executes (the thunk sequence).

``xla_dump_to`` makes XLA write, for every module it compiles, the HLO
before and after optimisation and (with ``xla_dump_hlo_pass_re``) after
each pass that changed it, plus the compile options it actually used:
the ``debug_options`` block of ``*.config.pbtxt``. Those are the
*effective* values of every flag for this jaxlib and this backend, which
no documentation page can be trusted to state.

`compile_with_dump` compiles a lowered function into a fresh dump folder;
a `Dump` reads it back:

>>> dump = compile_with_dump(jax.jit(jnp.sin).lower(jnp.ones(3)),
...                          passes=True)
>>> int(dump.pass_counts("sine").iloc[-1]["count"])  # after the last pass
1
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tempfile
from pathlib import Path
from typing import Any

import jax
import pandas as pd

from helpers.xla import hlo

# module_0018.jit_f.0026.simplification.after_dce.before_cse.txt
_PASS_FILE = re.compile(r"\.(\d{4})\.([^.]+)\.after_(.+?)"
                        r"(?:\.before_(.+))?\.txt$")
_INPUT_FILES = "*.before_optimizations.txt"  # one per compiled module
_OPTION = re.compile(r"^\s*(\w+):\s*(.*?)\s*$")
# Beside ``xla_dump_to``: the options that make XLA:GPU write its LLVM IR
# and PTX too. From jaxlib 0.12 it writes them only for the emitters this
# regular expression matches ("dumps debug logs (e.g. IR like LLVM or
# MLIR) before and after emitters which match", XLA's flag help); jaxlib
# 0.10 writes them either way.
PTX_OPTIONS = {"xla_dump_emitter_re": ".*"}


@dataclasses.dataclass(frozen=True)
class Dump:
    """The files XLA wrote for one compilation, in ``folder``.

    Attributes:
        folder: the dump folder.
        compiled: the compiled executable (``jax.stages.Compiled``).
    """

    folder: Path
    compiled: Any

    def files(self, pattern: str) -> list[Path]:
        """The dump's files matching a glob ``pattern``, sorted."""
        return sorted(self.folder.glob(pattern))

    def debug_options(self) -> dict[str, str | list[str]]:
        """The DebugOptions XLA compiled with, ``{field: value}``; a
        repeated field (``xla_gpu_enable_command_buffer``) is a list.

        Raises:
            FileNotFoundError: XLA wrote no ``*.config.pbtxt`` (XLA:CPU
                writes none; compile for a GPU to read its options).
        """
        configs = self.files("*.config.pbtxt")
        if not configs:
            raise FileNotFoundError(
                f"no *.config.pbtxt in {self.folder}: this backend does not "
                "write its compile options (XLA:GPU does; XLA:CPU does "
                "not).")
        return parse_debug_options(configs[-1].read_text())

    def pass_counts(self, opcode: str) -> pd.DataFrame:
        """How many ``opcode`` instructions (fused ones included) the
        module held before optimisation and after each pass that changed
        it, one row where the count changes.

        Needs ``passes=True`` in `compile_with_dump`.
        """
        before = self._main_module()
        steps = [(m, path) for path in self.files(f"{before.prefix}*.txt")
                 if (m := _PASS_FILE.search(path.name))]
        if not steps:
            raise FileNotFoundError(
                f"no per-pass files in {self.folder}: compile with "
                "compile_with_dump(..., passes=True).")
        rows = [{"step": -1, "pipeline": "(input)",
                 "after pass": "(before optimisations)",
                 "count": _count(before.path.read_text(), opcode)}]
        for match, path in steps:
            rows.append({"step": int(match[1]), "pipeline": match[2],
                         "after pass": match[3],
                         "count": _count(path.read_text(), opcode)})
        table = pd.DataFrame(rows).sort_values("step", kind="stable")
        changed = table["count"].ne(table["count"].shift())
        return table[changed].set_index("step")

    def ptx(self) -> str:
        """The PTX XLA:GPU wrote for the dump's modules, Triton's and
        Pallas's kernels included, as one text (`helpers.xla.ptx` reads
        it).

        Raises:
            FileNotFoundError: no PTX in the dump (XLA:CPU writes none;
                compile for a GPU, with `PTX_OPTIONS`).
        """
        found = self.files("*.ptx")
        if not found:
            raise FileNotFoundError(f"no PTX in {self.folder}: XLA:GPU "
                                    "writes it, XLA:CPU does not.")
        return "\n".join(path.read_text() for path in found)

    def thunk_sequence(self) -> list[str]:
        """The steps XLA:GPU's runtime executes for the module, one line
        each: the thunk's kind and kernel, indented as XLA nests them (a
        command buffer's kernels under it). It is the sequence after the
        thunk passes, which write their own file only when they change it
        (forming command buffers, for example).

        Raises:
            FileNotFoundError: no thunk sequence in the dump (XLA:CPU
                writes none; compile for a GPU).
        """
        prefix = self._main_module().prefix
        final = (self.files(f"{prefix}thunk_sequence_after_thunk_passes.txt")
                 or self.files(f"{prefix}thunk_sequence.txt"))
        if not final:
            raise FileNotFoundError(f"no thunk sequence in {self.folder}: "
                                    "XLA:GPU writes one, XLA:CPU does not.")
        return [thunk_step(line) for line in final[0].read_text()
                .splitlines() if line.strip()]

    def _main_module(self) -> _Module:
        """The module that was asked for. XLA:GPU compiles small helper
        modules of its own (autotuning candidates) into the same folder;
        they have no ``before_optimizations`` file."""
        inputs = self.files(_INPUT_FILES)
        if not inputs:
            raise FileNotFoundError(f"no *.before_optimizations.txt in "
                                    f"{self.folder}: is it an XLA dump?")
        path = inputs[0]
        return _Module(path.name.removesuffix("before_optimizations.txt"),
                       path)


@dataclasses.dataclass(frozen=True)
class _Module:
    prefix: str  # "module_0001.jit_f."
    path: Path   # its before_optimizations.txt


def compile_with_dump(lowered: Any, folder: str | Path | None = None, *,
                      passes: bool = False,
                      compiler_options: dict[str, Any] | None = None
                      ) -> Dump:
    """Compile ``lowered`` (``jax.jit(f).lower(...)``) with XLA's dump on.

    Args:
        lowered: a ``jax.stages.Lowered``.
        folder: where to dump (default: a new temporary folder).
        passes: also dump the module after every pass that changes it
            (``xla_dump_hlo_pass_re=.*``; slower, many files).
        compiler_options: further options for this compilation.

    Raises:
        RuntimeError: XLA compiled nothing, so dumped no passes: JAX's
            persistent compilation cache served the program.
    """
    folder = Path(folder or tempfile.mkdtemp(prefix="xla_dump_"))
    options = {**(compiler_options or {}), "xla_dump_to": str(folder)}
    if passes:
        options["xla_dump_hlo_pass_re"] = ".*"
    inputs = set(folder.glob(_INPUT_FILES))
    compiled = lowered.compile(compiler_options=options)
    cache_dir = _persistent_cache_dir()
    if cache_dir and set(folder.glob(_INPUT_FILES)) == inputs:
        raise RuntimeError(_served_from_cache(cache_dir))
    return Dump(folder, compiled)


def _persistent_cache_dir() -> str | None:
    """JAX's persistent compilation cache folder, if the cache is on."""
    options = jax.config.values
    if not options["jax_enable_compilation_cache"]:
        return None
    return options["jax_compilation_cache_dir"]


def _served_from_cache(cache_dir: str) -> str:
    # JAX's cache key leaves the dump options out (jax/_src/cache_key.py
    # clears xla_dump_to and the like), so a program compiled before, in
    # any process using the cache, is loaded rather than compiled: XLA then
    # writes the loaded module, but no input module and no passes.
    return (f"XLA dumped no compilation: JAX's persistent compilation cache "
            f"({cache_dir}) already held this program, and a program "
            "loaded from the cache is not compiled, so its passes are not "
            "dumped. Dump it from a Python process started without the cache "
            "(JAX_COMPILATION_CACHE_DIR unset, or "
            "jax.config.update('jax_enable_compilation_cache', False) "
            "before its first compilation).")


# "    001: kCustomKernel [prev=000 (1) | next=002 (1)] gemm_fusion_dot_4 ..."
_THUNK_LINE = re.compile(r"^(\s*)\d+:\s*(\w+)\s*\[[^\]]*\]\s*(\S*)")
# A nested sequence's heading: a while loop's ``condition:`` and ``body:``,
# a conditional's branches.
_SECTION_LINE = re.compile(r"^(\s*)([a-z][\w ]*):\s*$")


def thunk_step(line: str) -> str:
    """One line of a dumped thunk sequence as its kind and kernel, with
    XLA's indentation.

    A nested sequence's heading (a while loop's ``body:``) is kept as it
    is.

    Example:
        >>> thunk_step("  002: kCustomKernel [prev=001 (1) | next=003 (1)] "
        ...            "loop_add_fusion grid: [128, 1, 1]")
        '  kCustomKernel loop_add_fusion'
        >>> thunk_step("  body:")
        '  body:'
    """
    section = _SECTION_LINE.match(line)
    if section:
        return line.rstrip()
    found = _THUNK_LINE.match(line)
    if not found:
        raise ValueError(f"not a thunk line of XLA's dump: {line!r}")
    indent, kind, name = found.groups()
    return f"{indent}{kind} {name}".rstrip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@dataclasses.dataclass(frozen=True)
class LoopBody:
    """A while loop's body in a thunk sequence (`Dump.thunk_sequence`).

    Attributes:
        steps: its top-level steps, kind and kernel (`thunk_step`).
    """

    steps: tuple[str, ...]

    @property
    def in_graph(self) -> bool:
        """True when each iteration is one CUDA graph launch: every
        top-level step of the body is an XLA command buffer. A body
        whose steps are too few to be worth a graph
        (``--xla_gpu_graph_min_graph_size``) launches each on its own."""
        return bool(self.steps) and all(
            step.split()[0] == "kCommandBuffer" for step in self.steps)


def loop_bodies(sequence: list[str]) -> list[LoopBody]:
    """The body of every while loop in a thunk sequence, in order.

    Example:
        >>> seq = ["kWhile", "condition:", "    kCustomKernel compare",
        ...        "  body:", "    kCommandBuffer", "        kCopy",
        ...        "        kCustomKernel add", "kCopy"]
        >>> [body.steps for body in loop_bodies(seq)]
        [('kCommandBuffer',)]
    """
    bodies = []
    for at, line in enumerate(sequence):
        if line.strip() != "body:":
            continue
        inside = []
        for later in sequence[at + 1:]:
            if _indent(later) <= _indent(line):
                break
            inside.append(later)
        top = min((_indent(step) for step in inside), default=0)
        bodies.append(LoopBody(tuple(step.strip() for step in inside
                                     if _indent(step) == top)))
    return bodies


def parse_debug_options(config_text: str) -> dict[str, str | list[str]]:
    r"""The ``debug_options { ... }`` block of a ``*.config.pbtxt``.

    Example:
        >>> parse_debug_options('debug_options {\n  xla_a: 1\n'
        ...                     '  xla_b: X\n  xla_b: Y\n}\n')
        {'xla_a': '1', 'xla_b': ['X', 'Y']}
    """
    lines, inside = [], False
    for line in config_text.splitlines():
        if line.startswith("debug_options {"):
            inside = True
        elif inside and line.startswith("}"):
            break
        elif inside:
            lines.append(line)
    if not inside:
        raise ValueError("no 'debug_options {' block in this config text; "
                         "pass the contents of a *.config.pbtxt file.")
    return parse_option_lines("\n".join(lines))


def parse_option_lines(text: str) -> dict[str, str | list[str]]:
    """``name: value`` lines of a DebugOptions in protobuf text format (a
    ``*.debug_options`` file, or the inside of a config's block); a field
    given more than once becomes a list."""
    options: dict[str, str | list[str]] = {}
    for line in text.splitlines():
        match = _OPTION.match(line)
        if not match:
            continue
        name, value = match[1], match[2].strip('"')
        if name in options:
            previous = options[name]
            options[name] = [*(previous if isinstance(previous, list)
                               else [previous]), value]
        else:
            options[name] = value
    return options


def overrides(dump: Dump) -> dict[str, str | list[str]]:
    """The options this compilation set differently from XLA's built-in
    defaults: the ``*.debug_options`` file XLA writes beside the module
    (JAX's own settings for the backend, and any given here)."""
    found = dump.files("*.debug_options")
    if not found:
        raise FileNotFoundError(f"no *.debug_options in {dump.folder}: is "
                                "it an XLA dump?")
    return parse_option_lines(found[-1].read_text())


def options_used(dump: Dump) -> dict[str, dict[str, str | list[str]]]:
    """``{"effective": ..., "overrides": ...}``: every option the
    compilation used (`Dump.debug_options`) and those set differently from
    XLA's built-in defaults (`overrides`), without the dump folder itself,
    which was our setting, not a default."""
    effective, changed = dump.debug_options(), overrides(dump)
    for options in (effective, changed):
        options.pop("xla_dump_to", None)
    return {"effective": effective, "overrides": changed}


def _count(text: str, opcode: str) -> int:
    return _op_counts(text).get(opcode, 0)


@functools.lru_cache(maxsize=512)
def _op_counts(text: str) -> dict[str, int]:
    """Every opcode's count in one module's text, parsed once: a dump's
    per-pass files are read for one opcode after another."""
    return dict(hlo.op_counts(text, entry_only=False))
