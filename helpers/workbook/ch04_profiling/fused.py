"""Chapter 4 (profiling): the attention block with its scores fused away.

The block of `attention.attention` writes the B H T T scores to memory and
reads them back, twice over (the scores product, then the softmax and the
weighted values). A fused ("flash") attention keeps each tile of scores
on the chip: one kernel reads ``q``, ``k`` and ``v`` and writes only the
output, so the block's floor is its products' arithmetic. Three ways to
run the same block, each compared with the chapter's einsum version:

- ``'xla'``: `jax.nn.dot_product_attention` as XLA compiles it (no fused
  kernel: the reference the other two must match);
- ``'pallas'``: Pallas's flash attention for GPUs
  (``jax.experimental.pallas.ops.gpu.attention.mha``, the Triton backend)
  in float32;
- ``'cudnn'``: `jax.nn.dot_product_attention` with cuDNN's fused kernel,
  which takes only 16-bit inputs: the whole block runs in bf16.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import jax
import jax.numpy as jnp

from helpers.measuring import capability, device_time, machine, stats

Implementation = Literal["xla", "pallas", "cudnn"]
IMPLEMENTATIONS: tuple[Implementation, ...] = ("xla", "pallas", "cudnn")
# The precision each runs its products at on an H100: its floor's rate.
PRECISION = {"xla": "tf32", "pallas": "tf32", "cudnn": "bfloat16"}


def fused_block(params: dict[str, jax.Array], x: jax.Array, *, n_head: int,
                implementation: Implementation) -> jax.Array:
    """`attention.attention`'s causal self-attention block, its attention
    computed by ``implementation`` (see the module's docstring)."""
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"implementation must be one of {IMPLEMENTATIONS}; "
                         f"got {implementation!r}.")
    dtype = jnp.bfloat16 if implementation == "cudnn" else x.dtype
    params = jax.tree.map(lambda p: p.astype(dtype), params)
    x = x.astype(dtype)
    batch, seq, width = x.shape
    qkv = x @ params["c_attn_w"] + params["c_attn_b"]
    q, k, v = (t.reshape(batch, seq, n_head, width // n_head)
               for t in jnp.split(qkv, 3, axis=-1))
    if implementation == "pallas":
        y = _pallas_attention(q, k, v)
    else:
        y = jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                         implementation=implementation)
    out = y.reshape(batch, seq, width) @ params["c_proj_w"] \
        + params["c_proj_b"]
    return out.astype(jnp.float32)


def _pallas_attention(q: jax.Array, k: jax.Array, v: jax.Array
                      ) -> jax.Array:
    """Pallas's flash attention, (batch, seq, heads, head width) in and
    out, tiles of at most 128 positions; Pallas's interpreter where no GPU
    compiles it."""
    from jax.experimental.pallas.ops.gpu import attention as flash

    seq = q.shape[1]
    tile = min(128, seq)
    sizes = flash.BlockSizes(block_q=tile, block_k=tile)
    from helpers.xla import crosscompile
    interpret = not (machine.on_gpu() or crosscompile.compiling_for_gpu())
    return flash.mha(q, k, v, segment_ids=None,
                     sm_scale=q.shape[-1] ** -0.5, causal=True,
                     block_sizes=sizes, interpret=interpret)


def versions(n_head: int, implementations: tuple[Implementation, ...]
             = IMPLEMENTATIONS) -> dict[str, jax.stages.Wrapped]:
    """Each implementation's block, jitted, by name."""
    return {name: jax.jit(functools.partial(fused_block, n_head=n_head,
                                            implementation=name))
            for name in implementations}


# What each fused kernel needs of a GPU (`capability.capabilities`'s
# features): Pallas's flash attention is a Triton kernel, and cuDNN's
# fused attention runs on Ampere's tensor cores and later ones.
NEEDS = {"pallas": ("Pallas (Triton backend)", "Pallas's flash attention"),
         "cudnn": ("bf16 tensor cores", "cuDNN's fused attention")}


def left_out(arch: tuple[int, int] | None = None) -> dict[str, str]:
    """The implementations this GPU (compute capability ``arch``, by
    default this machine's) cannot run, each with one sentence on why; on
    a CPU only cuDNN's, which needs a GPU (Pallas's kernel runs in its
    interpreter there).

    Example:
        >>> left_out((7, 5))["cudnn"]
        "cuDNN's fused attention needs compute capability 8.0 (Ampere) \
or newer; this is 7.5."
    """
    if arch is None and not machine.on_gpu():
        return {"cudnn": "cuDNN's fused attention needs a GPU."}
    return {name: f"{words} {why}."
            for name, (feature, words) in NEEDS.items()
            if (why := capability.lacking(feature, arch))}


def here(arch: tuple[int, int] | None = None
         ) -> tuple[Implementation, ...]:
    """The implementations this machine runs (or a GPU of compute
    capability ``arch``): all three on an Ampere GPU or newer."""
    missing = left_out(arch)
    return tuple(name for name in IMPLEMENTATIONS if name not in missing)


def measure(params: dict[str, jax.Array], x: jax.Array, n_head: int,
            baseline: jax.stages.Wrapped, calls: int = 200
            ) -> dict[str, Any]:
    """Each implementation `here` and ``baseline`` (the chapter's einsum
    block) timed by device time in one profile, ``calls`` calls each, and
    each compared with the baseline by the chapter's test
    (`stats.compare` on the calls' device times).

    Returns:
        ``{"device_us": {name: [a time per call]}, "median_us": {name:
        median}, "against_einsum": {name: (verdict in words, median
        ratio name / einsum)}}``.
    """
    calls = max(calls, 5)  # the rank test needs five calls a side
    if machine.on_gpu():
        for why in left_out().values():
            print(f"Left out here: {why}")
    cases = {"einsum": (baseline, [(params, x)])}
    cases.update({name: (fn, [(params, x)])
                  for name, fn in versions(n_head, here()).items()})
    timed = device_time.measure_all(cases, repeat=calls, profiled=calls,
                                    max_seconds=10.0)
    device_us = {name: [s * 1e6 for s in t.span.times]
                 for name, t in timed.items()}
    against = {}
    for name in here():
        comparison = stats.compare(device_us[name], device_us["einsum"])
        verdict = {"a faster": f"{name} faster",
                   "b faster": "einsum faster"}.get(
                       str(comparison.verdict), str(comparison.verdict))
        against[name] = (verdict, comparison.ratio)
    return {"device_us": device_us,
            "median_us": {name: t.median * 1e6 for name, t in timed.items()},
            "against_einsum": against}

