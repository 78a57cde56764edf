"""The suite's good programs: ordinary model code a GPU runs well
(training steps, a GRU, convolutions, attention for one decoding step,
FFTs, a while loop of heavy steps), on which the checker should raise no
slow finding."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from helpers.workbook.ch10_field_guide.checker_suite.program import (
    BF16, F32, Program, Spec, key)
from helpers.workbook.ch10_field_guide.checker_suite.slow import (
    adam_calls, adam_state, adam_update)

# --- good ----------------------------------------------------------------

def mlp_step(params: dict[str, jax.Array], x: jax.Array, y: jax.Array
             ) -> tuple[dict[str, jax.Array], jax.Array]:
    """A two-layer MLP's training step."""
    def loss(p: dict[str, jax.Array]) -> jax.Array:
        hidden = jax.nn.gelu(x @ p["w1"] + p["b1"])
        return jnp.mean((hidden @ p["w2"] - y) ** 2)
    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads), value


def gru(h0: jax.Array, xs: jax.Array, w: jax.Array, u: jax.Array
        ) -> jax.Array:
    """A GRU of 1024 units over 64 steps, batch 512: about 3 GFLOP a
    step."""
    def step(h: jax.Array, x: jax.Array) -> tuple[jax.Array, None]:
        zr = jax.nn.sigmoid(x @ w[:, :2048] + h @ u[:, :2048])
        z, r = zr[:, :1024], zr[:, 1024:]
        candidate = jnp.tanh(x @ w[:, 2048:] + (r * h) @ u[:, 2048:])
        return (1 - z) * h + z * candidate, None
    return jax.lax.scan(step, h0, xs)[0]


def decode_attention(q: jax.Array, k: jax.Array, v: jax.Array
                     ) -> jax.Array:
    """One decoding step's attention in bfloat16: a token of each of 64
    sequences against a 4096-token cache, 8 heads."""
    return jax.nn.dot_product_attention(q, k, v)


def conv_block(x: jax.Array, kernel: jax.Array) -> jax.Array:
    """A 3x3 convolution, a normalisation and a ReLU."""
    y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO",
                                                        "NHWC"))
    mean = y.mean(axis=(0, 1, 2))
    return jax.nn.relu((y - mean) / jnp.sqrt(y.var(axis=(0, 1, 2)) + 1e-5))


def fft_filter(images: jax.Array, response: jax.Array) -> jax.Array:
    """Images filtered in the frequency domain."""
    return jnp.fft.irfft2(jnp.fft.rfft2(images) * response,
                          s=images.shape[-2:])


def layer_norm(x: jax.Array, scale: jax.Array) -> jax.Array:
    """LayerNorm over 1024 features."""
    mean = x.mean(-1, keepdims=True)
    return scale * (x - mean) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-6)


def sorted_segment_sum(values: jax.Array, segments: jax.Array) -> jax.Array:
    """A million values summed into 1000 segments, sorted and said so."""
    return jax.ops.segment_sum(values, segments, num_segments=1000,
                               indices_are_sorted=True)


def subspace_iteration(a: jax.Array, q: jax.Array) -> jax.Array:
    """Orthogonal iteration to a tolerance: a while loop of unknown count,
    each step a 4096 x 4096 by 4096 x 1024 product, 34 GFLOP."""
    def moving(state: tuple[jax.Array, jax.Array]) -> jax.Array:
        return state[1] > 1e-4

    def step(state: tuple[jax.Array, jax.Array]
             ) -> tuple[jax.Array, jax.Array]:
        q, _ = state
        nq, _ = jnp.linalg.qr(a @ q)
        return nq, jnp.max(jnp.abs(nq - q))
    return jax.lax.while_loop(moving, step, (q, jnp.array(1.0)))[0]


def cosine_similarity(u: jax.Array, v: jax.Array) -> jax.Array:
    """Row-wise dot products over 768 features, normalised."""
    dots = jax.vmap(jnp.dot)(u, v)
    return dots / (jnp.linalg.norm(u, axis=-1) * jnp.linalg.norm(v, axis=-1))


def cross_entropy_grad(logits: jax.Array, labels: jax.Array) -> jax.Array:
    """The gradient of a cross-entropy over 10 classes."""
    def loss(z: jax.Array) -> jax.Array:
        picked = jnp.take_along_axis(z, labels[:, None], axis=-1)
        return jnp.mean(jax.nn.logsumexp(z, axis=-1) - picked[:, 0])
    return jax.grad(loss)(logits)


def adam_step(state: dict[str, jax.Array], grads: jax.Array
              ) -> dict[str, jax.Array]:
    """An Adam step with its state donated."""
    return adam_update(state, grads)


def batched_matmul(a: jax.Array, b: jax.Array) -> jax.Array:
    """64 products of 512 x 512 matrices."""
    return jnp.einsum("bij,bjk->bik", a, b)


def wide_softmax(x: jax.Array) -> jax.Array:
    """A softmax over rows of 4096."""
    return jax.nn.softmax(x, axis=-1)


def running_total(x: jax.Array) -> jax.Array:
    """A cumulative sum over a million values."""
    return jnp.cumsum(x)


def max_pool(x: jax.Array) -> jax.Array:
    """2x2 max pooling of a batch of feature maps."""
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                                 (1, 2, 2, 1), "VALID")


def layers_by_scan(x: jax.Array, weights: jax.Array) -> jax.Array:
    """Twelve wide layers applied by a scan over their weights."""
    def layer(h: jax.Array, w: jax.Array) -> tuple[jax.Array, None]:
        return jax.nn.relu(h @ w), None
    return jax.lax.scan(layer, x, weights)[0]


def monte_carlo_paths(key: jax.Array, s0: jax.Array) -> jax.Array:
    """Price paths with every random number drawn before the walk."""
    shocks = jax.random.normal(key, (252, s0.shape[0]))
    return s0 * jnp.exp(jnp.cumsum(0.01 * shocks, axis=0))[-1]


def per_example_grads(w: jax.Array, xs: jax.Array, ys: jax.Array
                      ) -> jax.Array:
    """Per-example gradients of a linear model by vmap."""
    def loss(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
        return (x @ w - y) ** 2
    return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)


def checkpointed_mlp(params: list[jax.Array], x: jax.Array) -> jax.Array:
    """A deep MLP's loss gradient with each block rematerialised."""
    block = jax.checkpoint(lambda h, w: jnp.tanh(h @ w))

    def loss(ws: list[jax.Array]) -> jax.Array:
        h = x
        for w in ws:
            h = block(h, w)
        return jnp.mean(h**2)
    return jax.grad(loss)(params)


def rotate_points(rotations: jax.Array, points: jax.Array) -> jax.Array:
    """Four million 2x2 rotations applied to 2-vectors as a batched matrix
    product: XLA:GPU makes it a multiply and a reduction over rows of 2,
    which a warp's reduction emitter takes (chapter 2 measured such rows
    at the H100's copy bandwidth)."""
    return rotations @ points


def row_norms(x: jax.Array) -> jax.Array:
    """The norm of each of two million 24-wide feature rows: a kLoop
    reduction, which chapter 2 measured at rows of 24 at nearly the H100's
    copy bandwidth."""
    return jnp.sqrt(jnp.sum(x * x, axis=-1))


def mixed_precision_linear(x: jax.Array, w: jax.Array) -> jax.Array:
    """A linear layer with bfloat16 inputs and float32 accumulation."""
    return jnp.dot(x, w, preferred_element_type=jnp.float32)


def sparse_updates(table: jax.Array, rows: jax.Array,
                   updates: jax.Array) -> jax.Array:
    """A thousand updates into a table of 100,000 rows: few collide."""
    return table.at[rows].add(updates)



def _mlp() -> tuple[Any, ...]:
    params = {"w1": Spec((784, 1024), F32), "b1": Spec((1024,), F32),
              "w2": Spec((1024, 10), F32)}
    return params, Spec((256, 784), F32), Spec((256, 10), F32)



GOOD = [
    Program("an MLP's training step", jax.jit(mlp_step, donate_argnums=0),
            _mlp),
    Program("a GRU, 3 GFLOP a step", gru,
            lambda: (Spec((512, 1024), F32), Spec((64, 512, 1024), F32),
                     Spec((1024, 3072), F32), Spec((1024, 3072), F32))),
    Program("a decoding step's attention", decode_attention,
            lambda: (Spec((64, 1, 8, 64), BF16),
                     Spec((64, 4096, 8, 64), BF16),
                     Spec((64, 4096, 8, 64), BF16))),
    Program("a convolution block", conv_block,
            lambda: (Spec((32, 56, 56, 64), F32),
                     Spec((3, 3, 64, 64), F32))),
    Program("an FFT filter", fft_filter,
            lambda: (Spec((64, 256, 256), F32),
                     Spec((256, 129), jnp.complex64))),
    Program("LayerNorm", layer_norm,
            lambda: (Spec((8192, 1024), F32), Spec((1024,), F32))),
    Program("a sorted segment sum", sorted_segment_sum,
            lambda: (Spec((2**20,), F32), Spec((2**20,), jnp.int32))),
    Program("subspace iteration, 34 GFLOP a step", subspace_iteration,
            lambda: (Spec((4096, 4096), F32), Spec((4096, 1024), F32))),
    Program("cosine similarity over 768 features", cosine_similarity,
            lambda: (Spec((8192, 768), F32), Spec((8192, 768), F32))),
    Program("a cross-entropy's gradient", cross_entropy_grad,
            lambda: (Spec((256, 10), F32), Spec((256,), jnp.int32))),
    Program("an Adam step, donated", jax.jit(adam_step, donate_argnums=0),
            lambda: (adam_state(), jnp.zeros(2**24)), calls=adam_calls),
    Program("a batched matmul", batched_matmul,
            lambda: (Spec((64, 512, 512), F32), Spec((64, 512, 512), F32))),
    Program("a softmax over wide rows", wide_softmax,
            lambda: (Spec((8192, 4096), F32),)),
    Program("a cumulative sum", running_total,
            lambda: (Spec((2**20,), F32),)),
    Program("max pooling", max_pool,
            lambda: (Spec((32, 112, 112, 64), F32),)),
    Program("twelve layers by scan", layers_by_scan,
            lambda: (Spec((1024, 2048), F32), Spec((12, 2048, 2048), F32))),
    Program("Monte Carlo with the draws up front", monte_carlo_paths,
            lambda: (key(), Spec((100_000,), F32))),
    Program("per-example gradients", per_example_grads,
            lambda: (Spec((512,), F32), Spec((1024, 512), F32),
                     Spec((1024,), F32))),
    Program("a checkpointed deep MLP", checkpointed_mlp,
            lambda: ([Spec((1024, 1024), F32)] * 8, Spec((256, 1024), F32))),
    Program("a mixed-precision linear layer", mixed_precision_linear,
            lambda: (Spec((4096, 4096), BF16), Spec((4096, 4096), BF16))),
    Program("2x2 rotations as a batched product", rotate_points,
            lambda: (Spec((2**22, 2, 2), F32), Spec((2**22, 2, 1), F32))),
    Program("norms of 24-wide rows", row_norms,
            lambda: (Spec((2**21, 24), F32),)),
    Program("sparse updates of a large table", sparse_updates,
            lambda: (Spec((100_000, 64), F32), Spec((1000,), jnp.int32),
                     Spec((1000, 64), F32))),
]

