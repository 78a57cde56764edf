"""One chain of chapter 3's loop as a kernel built for latency.

`helpers.pallas.scan.fused_scan` runs the thread's step as written: the 12
hidden units are one padded vector of 16 lanes spread over a warp, so the
output's sum over them is a tree of warp shuffles, and each sigmoid is an
exponential and a division. A single chain waits for every one of those
in turn. `one_chain` writes the same step for one chain's latency:

- every hidden unit is a scalar of its own, held by every thread, so the
  sums are adds inside a thread (a tree,
  `helpers.pallas.mosaic.scalarise.tree_sum`) and no value crosses lanes;
- each sigmoid is one hardware instruction: sigmoid(x) = 1/2 + tanh(x/2)/2,
  with PTX's ``tanh.approx.f32`` (`jax.experimental.pallas.triton.
  approx_tanh`), and the halves folded into the weights once, before the
  loop;
- the next step's noise is loaded while this step computes.

``tanh.approx`` trades accuracy for speed (the PTX ISA states its error
bound), so on a GPU the chain follows `jax.lax.scan`'s closely but not to
float32's last bits: a GPU run records the largest difference
(`on_gpu.measure_goals`). Without a GPU (and in Pallas's interpreter) the
exact ``jnp.tanh`` stands in, so a CPU checks the rest of the kernel.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from helpers.measuring import machine
from helpers.pallas.mosaic.scalarise import tree_sum
from helpers.workbook.ch03_launches.variants import (
    Weights,
    initial_state,
    noise_for,
    positive,
)
from helpers.xla import crosscompile

# One warp: each thread computes the whole (tiny) step, so more threads
# would only repeat it.
NUM_WARPS = 1


def folded(pos: Weights) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The step's constants with sigmoid's halves folded in: ``a`` (the
    hidden units' scales), ``c`` (their weights in the output's tanh)
    and ``d`` (its offset), so that a step is
    ``1/2 + tanh(d + sum_j c_j tanh(a_j m))/2 + noise``."""
    w_in, w_out = pos["w_in"].reshape(-1), pos["w_out"].reshape(-1)
    return 0.5 * w_in, 0.25 * w_out, 0.25 * jnp.sum(w_out)


def step(m: Any, noise: Any, a: Sequence[Any], c: Sequence[Any], d: Any,
         tanh: Callable[[Any], Any]) -> Any:
    """One step of the chain on scalars, with the folded constants."""
    z = d + tree_sum([cj * tanh(aj * m) for aj, cj in zip(a, c)],
                     operator.add)
    return 0.5 * tanh(z) + (0.5 + noise)


def kernel(a_ref: Any, c_ref: Any, d_ref: Any, m_ref: Any,
           noise_ref: Any, out_ref: Any, *, steps: int,
           tanh: Callable[[Any], Any]) -> None:
    """The Pallas kernel: read the folded constants and the first
    momentum, run ``steps`` steps with the next noise loaded while each
    computes, and write the last momentum."""
    # Every number is a one-element array: Triton gives it to every
    # thread of the warp, so no operation moves a value between lanes.
    hidden = a_ref.shape[0]
    a = [a_ref[pl.ds(j, 1)] for j in range(hidden)]  # in registers
    c = [c_ref[pl.ds(j, 1)] for j in range(hidden)]
    d = d_ref[...]

    def body(t: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        m, noise = state
        upcoming = noise_ref[pl.ds(jnp.minimum(t + 1, steps - 1), 1)]
        return step(m, noise, a, c, d, tanh), upcoming

    m, _ = jax.lax.fori_loop(0, steps, body,
                             (m_ref[...], noise_ref[pl.ds(0, 1)]))
    out_ref[...] = m


def one_chain(pos: Weights, m0: jax.Array, noise: jax.Array, *,
              interpret: bool | None = None) -> jax.Array:
    """The chain's final momentum after ``len(noise)`` steps, as one
    kernel: ``jax.lax.scan(variants.hoisted_step(pos), m0, noise)[0]``,
    float32 only (``tanh.approx`` is a float32 instruction).

    Args:
        pos: the softplus-ed weights (`variants.positive`).
        m0: the initial momentum, shape (1,).
        noise: the noise of every step, shape (steps, 1).
        interpret: run Pallas's interpreter with the exact tanh (default:
            unless compiling for a GPU).

    Raises:
        ValueError: an input is not float32, a shape is not the chain's,
            or there are no steps.
    """
    arrays = {"m0": m0, "noise": noise, **pos}
    wrong = {name: str(jnp.result_type(x)) for name, x in arrays.items()
             if jnp.result_type(x) != jnp.float32}
    if wrong:
        raise ValueError(f"one_chain runs float32 only (tanh.approx.f32); "
                         f"got {wrong}. Use fused_scan for float64.")
    if m0.shape != (1,) or noise.ndim != 2 or noise.shape[1:] != (1,):
        raise ValueError(f"m0 must be (1,) and noise (steps, 1); got "
                         f"{m0.shape} and {noise.shape}.")
    if noise.shape[0] < 1:
        raise ValueError("one_chain needs at least one step of noise; "
                         "with none, the answer is m0 itself.")
    if interpret is None:
        interpret = not (machine.on_gpu() or crosscompile.compiling_for_gpu())
    a, c, d = folded(pos)
    steps = noise.shape[0]
    params = None
    tanh: Callable[[Any], Any] = jnp.tanh
    if not interpret:
        from jax.experimental.pallas import triton as pltriton
        params = pltriton.CompilerParams(num_warps=NUM_WARPS, num_stages=1)
        tanh = pltriton.approx_tanh

    def body(*refs: Any) -> None:
        kernel(*refs, steps=steps, tanh=tanh)

    return pl.pallas_call(
        body, out_shape=jax.ShapeDtypeStruct((1,), jnp.float32),
        interpret=interpret, compiler_params=params)(
            a, c, d.reshape(1), m0, noise.reshape(-1))


@functools.partial(jax.jit, static_argnums=2)
def latency_kernel(weights: Weights, key: jax.Array, steps: int
                   ) -> jax.Array:
    """`variants.fused` with `one_chain` as its kernel: the same noise,
    the same softplus-ed weights, the loop built for latency."""
    noise = noise_for(key, steps, jnp.float32)
    return one_chain(positive(weights), initial_state(weights), noise)

