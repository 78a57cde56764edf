"""Reading what XLA dumps: the thunk sequence (chapter 4 reads it for an
H100 in tests/unit/workbook/ch04_profiling/test_profiling.py)."""

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

from helpers.xla import xla_dump

from book_paths import ROOT


def test_a_thunk_line_reads_as_its_kind_and_kernel_with_its_indent():
    assert xla_dump.thunk_step("000: kCommandBuffer [source | sink] ") == \
        "kCommandBuffer"
    assert xla_dump.thunk_step(
        "    002: kCustomKernel [prev=001 (1) | next=003 (1)] "
        "loop_transpose_fusion_1 grid: [128, 1, 1] threads: [128, 1, 1]"
    ) == "    kCustomKernel loop_transpose_fusion_1"


def test_a_line_that_is_not_a_thunk_gets_a_clear_error():
    with pytest.raises(ValueError, match="not a thunk line"):
        xla_dump.thunk_step("ENTRY %main")


def test_a_cpu_dump_has_no_thunk_sequence_and_says_so(tmp_path):
    dump = xla_dump.compile_with_dump(jax.jit(jnp.sin).lower(jnp.ones(3)),
                                      tmp_path)
    with pytest.raises(FileNotFoundError, match="XLA:CPU does not"):
        dump.thunk_sequence()


# A reader's process with JAX's persistent compilation cache on, every
# program cached: the second compilation of the same program is loaded.
_CACHED_TWICE = """
import jax, jax.numpy as jnp
from helpers.xla import xla_dump
lowered = jax.jit(jnp.sin).lower(jnp.ones(3))
first = xla_dump.compile_with_dump(lowered)
print("first dumped", len(first.files("*.before_optimizations.txt")) > 0)
try:
    xla_dump.compile_with_dump(lowered)
except RuntimeError as err:
    print("second:", err)
"""


def test_a_program_served_by_the_persistent_cache_says_why_nothing_was_dumped(
        tmp_path):
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(tmp_path),
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
           "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    done = subprocess.run([sys.executable, "-c", _CACHED_TWICE], env=env,
                          capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "first dumped True" in done.stdout
    assert f"persistent compilation cache ({tmp_path}) already held this " \
        "program" in done.stdout
    assert "JAX_COMPILATION_CACHE_DIR unset" in done.stdout
    assert "dumped no compilation" in done.stdout


# A thunk sequence as XLA:GPU dumps it for an H100 (jaxlib 0.10.2): the
# first loop's body is one command buffer; the second's three kernels are
# too few for one and launch on their own.
WHILE_LOOPS = """\
001: kCopy  [source       | next=004 (3)] kCopy
004: kWhile [prev=003 (1) | sink        ]
condition:
    005: kCustomKernel [source | sink] loop_compare_fusion
  body:
    000: kCommandBuffer [source | sink]
        006: kCustomKernel [source       | sink        ] loop_add_fusion_1
        007: kCopy         [source       | next=009 (2)] kCopy
006: kWhile         [prev=000 (1) | sink        ]
condition:
    007: kCustomKernel [source | sink] loop_compare_fusion
  body:
    008: kCustomKernel [source       | next=009 (1)] loop_add_fusion
    009: kCustomKernel [prev=008 (1) | sink        ] loop_add_fusion_1
    010: kCopy         [prev=008 (2) | sink        ] kCopy
"""


def test_loop_headings_are_kept_and_bodies_read():
    sequence = [xla_dump.thunk_step(line)
                for line in WHILE_LOOPS.splitlines()]
    assert "condition:" in sequence and "  body:" in sequence
    graph, loose = xla_dump.loop_bodies(sequence)
    assert graph.steps == ("kCommandBuffer",) and graph.in_graph
    assert loose.steps == ("kCustomKernel loop_add_fusion",
                           "kCustomKernel loop_add_fusion_1", "kCopy kCopy")
    assert not loose.in_graph
    assert xla_dump.loop_bodies(["kCopy"]) == []
