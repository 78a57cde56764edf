"""The programs chapter 5 runs on a GPU, at its GPU sizes
(`claims.GPU_SIZES`), and how often (`helpers.xla.gpu_floors`), for the
how-to page's table of Colab's GPUs: the heavy ones, which set its
device time (the matrix products at each precision, the training steps
whose utilisation it reads, the checkpointed gradient). Its small
programs (vmap, scan, retracing, its exercises) take microseconds a call.
"""

from __future__ import annotations

import functools
from typing import Any, cast

import jax
import jax.numpy as jnp

from helpers.workbook.ch05_transformations import (claims, steps,
                                                   transforms, utilisation)
from helpers.xla.gpu_floors import Program

BUDGET_S = 2.0  # measure_all's max_seconds for the products and steps
TIMED = 17  # measure_all(repeat=10, profiled=3): 1 + 3 + 10 + 3
PRODUCT_CALLS = 1 + 24  # checked once, then timed as above with warm-ups


def _square(n: int, dtype: Any = jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct((n, n), dtype)


def _products() -> list[Program]:
    """Every precision of the n x n product at every size."""
    programs = []
    for n in cast(tuple[int, ...], claims.GPU_SIZES["matmuls"]):
        for kind in steps.PRECISIONS:
            inputs = _square(n, jnp.bfloat16 if kind == steps.BF16_INPUTS
                             else jnp.float32)
            bf16 = "bf16" in kind.lower() or "bfloat16" in kind
            programs.append(Program(
                f"{kind}, n={n}", functools.partial(steps.matmul_at, kind),
                (inputs, inputs), PRODUCT_CALLS, budget_s=BUDGET_S,
                dtype="bfloat16" if bf16 else "float32",
                highest=kind in (steps.HIGHEST, "algorithm F32_F32_F32")))
    return programs


def _training_steps() -> list[Program]:
    """The float32 and the mixed step at each of the MFU sizes."""
    programs = []
    for width, batch in cast(tuple[tuple[int, int], ...],
                             claims.GPU_SIZES["mfu"]):
        args = jax.eval_shape(functools.partial(utilisation.step_inputs,
                                                width, batch))
        for name, step in utilisation.STEPS.items():
            programs.append(Program(
                f"{name}, width {width}, batch {batch}", step, args,
                TIMED, budget_s=BUDGET_S,
                dtype="float32" if step is transforms.sgd_step
                else jnp.dtype(utilisation.product_dtype()).name))
    return programs


def _remat() -> list[Program]:
    width, hidden, batch = cast(tuple[int, int, int],
                                claims.GPU_SIZES["remat"])
    params = {"w1": jax.ShapeDtypeStruct((width, hidden), jnp.float32),
              "w2": jax.ShapeDtypeStruct((hidden, width), jnp.float32)}
    x = jax.ShapeDtypeStruct((batch, width), jnp.float32)
    return [Program(f"gradient, remat={checkpoint}", jax.grad(
        functools.partial(_loss, checkpoint=checkpoint)), (params, x),
        TIMED) for checkpoint in (False, True)]


def _loss(params: Any, x: Any, checkpoint: bool) -> Any:
    return transforms.deep_loss(params, x, checkpoint)


def programs() -> list[Program]:
    """The programs that set chapter 5's device time on a GPU."""
    return [*_products(), *_training_steps(), *_remat()]
