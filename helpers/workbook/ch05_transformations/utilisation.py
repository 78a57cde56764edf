"""Chapter 5 (Transformations): the training step's model-FLOPs
utilisation (MFU), and a mixed-precision step that brings it near the
tensor cores' peak.

MFU is the floating-point work the model needs a step, divided by the
step's time and the GPU's peak rate. For the chapter's MLP of ``depth``
square layers of ``width``, a step on ``batch`` rows does, per layer, one
product of ``2 batch width^2`` FLOPs forward and two backward (the
weight's gradient and the input's): ``6 batch width^2 depth`` in all.
The elementwise work (tanh, the loss, the update) is not counted, as is
the custom for MFU.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pandas as pd

from helpers.measuring import capability, datasheet, device_time, machine
from helpers.workbook.ch05_transformations.transforms import (
    MLP_DEPTH, Params, init, sgd_step)

# The H100 SXM5's dense bf16 tensor-core peak, FLOP/s (NVIDIA's H100
# datasheet): the denominator of MFU whatever precision a step runs at.
BF16_PEAK_FLOPS = datasheet.PEAKS["nvidia-h100-80gb-hbm3"].bf16_flops_per_s
FLOAT32 = "float32 step (TF32 products on a GPU)"


MIXED = "bf16 products, float32 weights"


def peak_flops(device: str | None = None) -> float:
    """MFU's denominator on ``device`` (by default this machine's, as
    JAX names it): its dense bf16 peak by its datasheet, or its float16
    peak where its tensor cores take no bf16 (a T4, where the mixed step
    multiplies in float16: `product_dtype`); the H100's,
    `BF16_PEAK_FLOPS`, where the book has no datasheet for it (a CPU's dry
    run).

    Example:
        >>> peak_flops("Tesla T4") / 1e12
        65.0
        >>> peak_flops("cpu") == BF16_PEAK_FLOPS
        True
    """
    sheet = datasheet.peaks(device or machine.describe()["device"])
    if sheet is None:
        return float(BF16_PEAK_FLOPS or 0)
    if sheet.bf16_flops_per_s is None:
        return datasheet.fastest_rate(sheet, "float16")
    return sheet.bf16_flops_per_s


def product_dtype() -> Any:
    """The 16-bit type the mixed step multiplies in: bf16, or float16 on a
    GPU whose tensor cores take no bf16 (a T4: compute capability 7.5),
    where bf16 products would run on the CUDA cores at float32's rate
    (in a `crosscompile` child, the GPU it compiles for)."""
    from helpers.xla import crosscompile
    arch: tuple[int, int] | None
    if crosscompile.compiling_for_gpu():
        major, minor = crosscompile.target_spec()["cuda_compute_capability"]
        arch = (major, minor)
    elif machine.on_gpu():
        arch = machine.gpu_arch()
    else:
        return jnp.bfloat16
    if capability.capabilities(arch)["bf16 tensor cores"]:
        return jnp.bfloat16
    return jnp.float16


def model_flops(width: int, batch: int, depth: int = MLP_DEPTH) -> int:
    """The products' FLOPs in one training step of the chapter's MLP.

    Example:
        >>> model_flops(512, 128)
        402653184
    """
    return 6 * batch * width ** 2 * depth


def mixed_predict(params: Params, x: jax.Array) -> jax.Array:
    """The chapter's MLP with its products in bf16: weights and
    activations rounded to bf16 as they enter a product, and the product
    (summed in float32 by the tensor cores) rounded to bf16 as it leaves,
    so that the backward pass's products get bf16 operands too; tanh runs
    in float32. Float16 instead on a GPU without bf16 tensor cores
    (`product_dtype`)."""
    low = product_dtype()
    h = x
    for name in sorted(params):
        product = h.astype(low) @ params[name].astype(low)
        h = jnp.tanh(product.astype(jnp.float32))
    return h


def mixed_loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean squared error of `mixed_predict`."""
    return jnp.mean((mixed_predict(params, x) - y) ** 2)


def mixed_sgd_step(params: Params, x: jax.Array, y: jax.Array,
                   lr: float = 0.1) -> Params:
    """`transforms.sgd_step` with bf16 products: the weights stay float32
    (the update is too small for bf16 to keep), only the products drop."""
    grads = jax.grad(mixed_loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


STEPS = {FLOAT32: sgd_step, MIXED: mixed_sgd_step}


def step_inputs(width: int, batch: int) -> tuple[Params, jax.Array,
                                                  jax.Array]:
    """Parameters, inputs and targets for one step at these sizes."""
    params = init(jax.random.key(0), width)
    x = jax.random.normal(jax.random.key(1), (batch, width))
    y = jax.random.normal(jax.random.key(2), (batch, width))
    return params, x, y


def mfu_table(sizes: tuple[tuple[int, int], ...]) -> pd.DataFrame:
    """Each step of `STEPS` at each ``(width, batch)``, timed in one
    profile: its FLOPs, times, rate, and MFU against this GPU's peak
    (`peak_flops`)."""
    if product_dtype() != jnp.bfloat16:
        print("The mixed step multiplies in float16 here: this GPU's "
              "tensor cores take no bf16.")
    cases: dict[str, tuple[Any, list[tuple[Any, ...]]]] = {}
    rows = []
    for width, batch in sizes:
        args = step_inputs(width, batch)
        for name, step in STEPS.items():
            compiled = jax.jit(step).lower(*args).compile()
            cases[f"{name}, width {width}, batch {batch}"] = (
                compiled, [args])
            rows.append({"width": width, "batch": batch, "step": name,
                         "GFLOP": model_flops(width, batch) / 1e9})
    timed = device_time.measure_all(cases, repeat=10, profiled=3,
                                    max_seconds=2.0)
    table = pd.DataFrame([{**row, **device_time.columns(timing)}
                          for row, timing in zip(rows, timed.values())])
    table["TFLOP/s"] = table["GFLOP"] / table["device ms"]
    table["MFU"] = table["TFLOP/s"] * 1e12 / peak_flops()
    return table


def product_types_for_gpu(width: int = 8192, batch: int = 8192
                         ) -> dict[str, list[str]]:
    """For each step, the operand types of every matrix product XLA:GPU
    compiles for an H100 (through `helpers.xla.crosscompile.run`): the
    tensor cores run bf16 only where both operands are bf16."""
    from helpers.xla import crosscompile, hlo

    params, x, y = jax.eval_shape(lambda: step_inputs(width, batch))
    found = {}
    for name, step in STEPS.items():
        module = hlo.parse(
            crosscompile.compile_for_gpu(step, params, x, y).as_text())
        types = set()
        for body in module.values():
            dtypes = {inst.name: inst.result.dtype for inst in body
                      if inst.result is not None}
            for inst in body:
                if inst.op == "dot":
                    types.add(" x ".join(str(dtypes.get(o))
                                         for o in inst.operands))
        found[name] = sorted(types)
    return found
