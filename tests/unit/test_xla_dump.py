"""Reading what XLA dumps: the thunk sequence (chapter 4 reads it for an
H100 in tests/unit/test_profiling.py)."""

import jax
import jax.numpy as jnp
import pytest

from helpers import xla_dump


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
