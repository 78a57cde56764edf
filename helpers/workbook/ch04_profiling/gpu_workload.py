"""The programs chapter 4 runs on a GPU, and how often
(`helpers.xla.gpu_floors`), for the how-to page's table of Colab's GPUs:
the attention block at the chapter's GPU size, tens of thousands of
times (most of them in the A/A trials), and the fused attentions.
"""

from __future__ import annotations

import functools

import jax

from helpers.workbook.ch04_profiling import attention, fused
from helpers.xla.gpu_floors import Program

# The einsum block's calls: profiled alternation 201, interleaved 204,
# two A/A runs of 200 trials x 2 orders x 21 calls (16,800 each), the
# autocorrelation's 2004, a cold start 201, the narrated measurement's
# blocked, alternating and graphs-off runs (201 each) and interleaving
# (204), the fused comparison's baseline (404), and a first call.
EINSUM_CALLS = 1 + 201 + 204 + 2 * 16_800 + 2004 + 201 + 3 * 201 + 204 \
    + 404
MATMUL_CALLS = 1 + 201 + 204 + 3 * 201 + 204  # no A/A, no fused baseline
FUSED_CALLS = 404  # measure_all(repeat=200, profiled=200), a 10 s budget
FUSED_BUDGET_S = 10.0


def programs() -> list[Program]:
    """Every program chapter 4 runs on a GPU."""
    shape = attention.GPU_SHAPE
    params, x = jax.eval_shape(functools.partial(
        attention.init, jax.random.key(0), **shape))
    blocks = attention.versions(shape["n_head"])
    fused_blocks = fused.versions(shape["n_head"])
    return [
        Program("einsum block", blocks["einsum"], (params, x),
                EINSUM_CALLS),
        Program("matmul block", blocks["matmul"], (params, x),
                MATMUL_CALLS),
        *(Program(f"fused attention, {name}", block, (params, x),
                  FUSED_CALLS, budget_s=FUSED_BUDGET_S,
                  dtype="bfloat16" if name == "cudnn" else "float32")
          for name, block in fused_blocks.items())]
