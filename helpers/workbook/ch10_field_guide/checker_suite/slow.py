"""The suite's slow programs: each shows one slow pattern, in a form the
field guide does not show (state in NamedTuples and dataclasses, loops
under vmap, callbacks under vmap, a shard_map, float64 from a NumPy
constant, the shapes of public JAX issues)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from helpers.workbook.ch10_field_guide.checker_suite.program import (
    BF16, F32, Program, Spec, key)

# --- slow: loops ---------------------------------------------------------

def newton_sqrt(x: jax.Array) -> jax.Array:
    """Newton's iteration for square roots until every entry settles: a
    while loop whose count depends on the data."""
    def unsettled(state: tuple[jax.Array, jax.Array]) -> jax.Array:
        guess, step = state
        return jnp.max(jnp.abs(step)) > 1e-6

    def improve(state: tuple[jax.Array, jax.Array]
                ) -> tuple[jax.Array, jax.Array]:
        guess, _ = state
        better = 0.5 * (guess + x / guess)
        return better, better - guess
    return jax.lax.while_loop(unsettled, improve, (x, jnp.ones_like(x)))[0]


def bisect_roots(lo: jax.Array, hi: jax.Array) -> jax.Array:
    """Bisection for the root of x**3 - 2x - 5 in each interval, vmapped:
    a batched while loop runs until its slowest member is done."""
    def one(a: jax.Array, b: jax.Array) -> jax.Array:
        def wide(ab: tuple[jax.Array, jax.Array]) -> jax.Array:
            return ab[1] - ab[0] > 1e-5

        def halve(ab: tuple[jax.Array, jax.Array]
                  ) -> tuple[jax.Array, jax.Array]:
            a, b = ab
            mid = 0.5 * (a + b)
            left = (a**3 - 2 * a - 5) * (mid**3 - 2 * mid - 5) <= 0
            return jnp.where(left, a, mid), jnp.where(left, mid, b)
        return jax.lax.while_loop(wide, halve, (a, b))[0]
    return jax.vmap(one)(lo, hi)


class Particles(NamedTuple):
    position: jax.Array
    velocity: jax.Array


def leapfrog(state: Particles, dt: float) -> Particles:
    """10,000 leapfrog steps of a harmonic oscillator, the state a
    NamedTuple: a few elementwise operations a step."""
    def step(s: Particles, _: None) -> tuple[Particles, None]:
        v = s.velocity - 0.5 * dt * s.position
        x = s.position + dt * v
        return Particles(x, v - 0.5 * dt * x), None
    return jax.lax.scan(step, state, None, length=10_000)[0]


@functools.partial(jax.tree_util.register_dataclass,
                   data_fields=["level", "trend"], meta_fields=[])
@dataclasses.dataclass
class Smoother:
    level: jax.Array
    trend: jax.Array


def holt_smoothing(state: Smoother, series: jax.Array) -> Smoother:
    """Holt's linear smoothing over a long series, the state a dataclass:
    a handful of multiply-adds per step."""
    def step(s: Smoother, y: jax.Array) -> tuple[Smoother, None]:
        level = 0.3 * y + 0.7 * (s.level + s.trend)
        return Smoother(level, 0.1 * (level - s.level) + 0.9 * s.trend), None
    return jax.lax.scan(step, state, series)[0]


def tiny_rnn_batch(h0: jax.Array, xs: jax.Array, w: jax.Array) -> jax.Array:
    """An RNN of 8 units over 4096 steps, vmapped over 16 sequences: the
    batch is too small to fill a step."""
    def run(h: jax.Array, seq: jax.Array) -> jax.Array:
        def step(h: jax.Array, x: jax.Array) -> tuple[jax.Array, None]:
            return jnp.tanh(w @ h + x), None
        return jax.lax.scan(step, h, seq)[0]
    return jax.vmap(run)(h0, xs)


def small_lstm(params: dict[str, jax.Array], xs: jax.Array) -> jax.Array:
    """An LSTM of 32 units over 8192 steps, batch 4: enough kernels a step
    to run as a CUDA graph, each doing a few thousand operations."""
    def step(carry: tuple[jax.Array, jax.Array], x: jax.Array
             ) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
        h, c = carry
        gates = x @ params["wx"] + h @ params["wh"] + params["b"]
        i, f, g, o = jnp.split(gates, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    zeros = jnp.zeros((xs.shape[1], 32), xs.dtype)
    return jax.lax.scan(step, (zeros, zeros), xs)[1]


def langevin(key: jax.Array, x: jax.Array) -> jax.Array:
    """Langevin dynamics, the key split at every step of the scan."""
    def step(carry: tuple[jax.Array, jax.Array], _: None
             ) -> tuple[tuple[jax.Array, jax.Array], None]:
        key, x = carry
        key, sub = jax.random.split(key)
        noise = jax.random.normal(sub, x.shape)
        return (key, x - 0.01 * x + 0.1 * noise), None
    return jax.lax.scan(step, (key, x), None, length=2000)[0][1]


def dropout_iterations(key: jax.Array, h: jax.Array) -> jax.Array:
    """A fixed-point iteration with dropout, folding the step into the key
    at every step."""
    def step(i: jax.Array, h: jax.Array) -> jax.Array:
        keep = jax.random.bernoulli(jax.random.fold_in(key, i), 0.9,
                                    h.shape)
        return jnp.where(keep, jnp.tanh(h), 0.0)
    return jax.lax.fori_loop(0, 500, step, h)


def sharded_inner_loop(x: jax.Array) -> jax.Array:
    """A data-parallel inner loop that averages across devices at every
    iteration."""
    mesh = jax.make_mesh((1,), ("data",),
                         axis_types=(jax.sharding.AxisType.Auto,))
    spec = jax.sharding.PartitionSpec("data")

    def local(x: jax.Array) -> jax.Array:
        def step(i: jax.Array, w: jax.Array) -> jax.Array:
            return w - 0.1 * jax.lax.pmean(w * x, "data")
        return jax.lax.fori_loop(0, 100, step, jnp.ones_like(x))
    return jax.shard_map(local, mesh=mesh, in_specs=spec, out_specs=spec)(x)


# --- slow: host, layout, contention, precision, memory -----------------

def printing_step(params: dict[str, jax.Array], x: jax.Array
                  ) -> dict[str, jax.Array]:
    """A training step that prints its loss."""
    def loss(p: dict[str, jax.Array]) -> jax.Array:
        return jnp.mean((x @ p["w"]) ** 2)
    value, grads = jax.value_and_grad(loss)(params)
    jax.debug.print("loss {}", value)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


def scipy_in_vmap(x: jax.Array) -> jax.Array:
    """A special function from the host, called per example under vmap."""
    def host_erfcx(v: np.ndarray) -> np.ndarray:
        return np.exp(np.square(v)) * np.asarray(1.0 - np.tanh(v),
                                                   np.float32)
    one = lambda v: jax.pure_callback(  # noqa: E731
        host_erfcx, jax.ShapeDtypeStruct(v.shape, v.dtype), v,
        vmap_method="sequential")
    return jax.vmap(one)(x)


def patch_means(patches: jax.Array) -> jax.Array:
    """The mean of each 5 x 5 image patch, two million flattened to
    rows of 25: chapter 2 measured the kLoop reduction XLA:GPU gives rows
    of 25 at under three quarters of the H100's copy bandwidth."""
    return patches.mean(axis=-1)


def histogram_counts(samples: jax.Array) -> jax.Array:
    """A 16-bin histogram of a million samples by scatter-add."""
    bins = jnp.clip((samples * 16).astype(jnp.int32), 0, 15)
    return jnp.zeros(16, jnp.int32).at[bins].add(1)


def peak_per_class(values: jax.Array, classes: jax.Array) -> jax.Array:
    """The largest value in each of 8 classes, a million values."""
    return jax.ops.segment_max(values, classes, num_segments=8)


def sort_timestamps(stamps: jax.Array) -> jax.Array:
    """Events ordered by 64-bit timestamps."""
    return jnp.argsort(stamps)


def scaled_by_numpy_constant(x: jax.Array) -> jax.Array:
    """A model whose scale is a NumPy float64 constant: with x64 on, the
    whole computation is promoted to float64."""
    return jnp.tanh(x * np.float64(0.5)) @ x.T


def batched_solves_f64(a: jax.Array, b: jax.Array) -> jax.Array:
    """Small linear systems solved in float64."""
    return jax.vmap(jnp.linalg.solve)(a, b)


def attention_bf16(q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
    """Multi-head attention in bfloat16, 1024 tokens, 8 heads, by JAX's
    default implementation (XLA's, not cuDNN's): 128 MiB of float32 scores
    written and read back for 9 GFLOP of products, memory-bound where a
    fused (flash) kernel is not."""
    return jax.nn.dot_product_attention(q, k, v)


def long_context_attention(q: jax.Array, k: jax.Array, v: jax.Array
                           ) -> jax.Array:
    """Single-head attention over 8192 tokens, the whole score matrix
    materialised."""
    scores = q @ k.T / np.sqrt(q.shape[-1])
    return jax.nn.softmax(scores, axis=-1) @ v


def embed_tokens(table: jax.Array, tokens: jax.Array) -> jax.Array:
    """Mean token embedding of a batch of sentences."""
    return table[tokens].mean(axis=1)


def scheduled_step(w: jax.Array, x: jax.Array, lr: float) -> jax.Array:
    """A gradient step whose learning rate is a static argument that
    changes every call."""
    return w - lr * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)


def adam_update(state: dict[str, jax.Array], grads: jax.Array
                ) -> dict[str, jax.Array]:
    """An Adam step on 16M parameters, the state replaced every call."""
    m = 0.9 * state["m"] + 0.1 * grads
    v = 0.999 * state["v"] + 0.001 * grads**2
    return {"w": state["w"] - 1e-3 * m / (jnp.sqrt(v) + 1e-8), "m": m,
            "v": v}


def adam_state() -> dict[str, jax.Array]:
    """Adam's parameters and moments, 64 MiB each."""
    return {name: jnp.ones(2**24) for name in ("w", "m", "v")}


def adam_calls() -> list[tuple[Any, ...]]:
    """Two steps' arguments, the second taking the first's output."""
    state, grads = adam_state(), jnp.full(2**24, 0.01)
    return [(state, grads), (jax.jit(adam_update)(state, grads), grads)]


SLOW = [
    Program("Newton's square roots to a tolerance", newton_sqrt,
            lambda: (Spec((64,), F32),), "host-round-trip"),
    Program("bisection, vmapped", bisect_roots,
            lambda: (Spec((256,), F32), Spec((256,), F32)),
            "host-round-trip"),
    Program("leapfrog, NamedTuple state", jax.jit(
        leapfrog, static_argnums=1),
        # Shapes stand in for the arrays: examine needs no values here.
        lambda: (Particles(Spec((3,), F32), Spec((3,), F32)),  # type: ignore[arg-type]
                 0.01),
        "launches-per-step"),
    Program("Holt smoothing, dataclass state", holt_smoothing,
            lambda: (Smoother(Spec((), F32), Spec((), F32)),  # type: ignore[arg-type]
                     Spec((20_000,), F32)), "launches-per-step"),
    Program("tiny RNN over 4096 steps, vmapped", tiny_rnn_batch,
            lambda: (Spec((16, 8), F32), Spec((16, 4096, 8), F32),
                     Spec((8, 8), F32)), "launches-per-step"),
    Program("a small LSTM over 8192 steps", small_lstm,
            lambda: ({"wx": Spec((16, 128), F32), "wh": Spec((32, 128), F32),
                      "b": Spec((128,), F32)}, Spec((8192, 4, 16), F32)),
            "launches-per-step"),
    Program("Langevin dynamics, key split per step", langevin,
            lambda: (key(), Spec((32,), F32)), "random-in-loop"),
    Program("dropout iterations, fold_in per step", dropout_iterations,
            lambda: (key(), Spec((128,), F32)), "random-in-loop"),
    Program("pmean in a shard_map's inner loop", sharded_inner_loop,
            lambda: (jnp.ones(8),), "collective-in-loop"),
    Program("a training step that prints its loss", printing_step,
            lambda: ({"w": Spec((64, 64), F32)}, Spec((32, 64), F32)),
            "host-callback"),
    Program("a host function under vmap", scipy_in_vmap,
            lambda: (jnp.ones((8, 4)),), "host-callback"),
    Program("means of 5 x 5 patches", patch_means,
            lambda: (Spec((2**21, 25), F32),), "kloop-reduction"),
    Program("histogram by scatter-add", histogram_counts,
            lambda: (Spec((2**20,), F32),), "scatter-contention"),
    Program("segment_max into 8 classes", peak_per_class,
            lambda: (Spec((2**20,), F32), Spec((2**20,), jnp.int32)),
            "scatter-contention"),
    Program("argsort of 64-bit timestamps", sort_timestamps,
            lambda: (Spec((2**20,), jnp.int64),), "sort-64-bit", x64=True),
    Program("a NumPy float64 constant promotes the model",
            scaled_by_numpy_constant,
            lambda: (Spec((512, 512), F32),), "float64", x64=True),
    Program("batched solves in float64", batched_solves_f64,
            lambda: (Spec((4096, 8, 8), jnp.float64),
                     Spec((4096, 8), jnp.float64)), "float64", x64=True),
    Program("attention over 8192 tokens, unfused", long_context_attention,
            lambda: tuple(Spec((8192, 64), F32) for _ in range(3)),
            "large-temporaries"),
    Program("attention in bfloat16, XLA's implementation", attention_bf16,
            lambda: tuple(Spec((4, 1024, 8, 64), BF16) for _ in range(3)),
            "large-temporaries"),
    Program("sentences of every length", embed_tokens,
            lambda: (Spec((30_000, 256), F32), Spec((32, 17), jnp.int32)),
            "retracing",
            calls=lambda: [(jnp.ones((30_000, 256)),
                            jnp.zeros((32, n), jnp.int32))
                           for n in (17, 23, 31)]),
    Program("a static learning rate that changes",
            jax.jit(scheduled_step, static_argnums=2),
            lambda: (Spec((256, 16), F32), Spec((64, 256), F32), 0.1),
            "retracing",
            calls=lambda: [(jnp.ones((256, 16)), jnp.ones((64, 256)), lr)
                           for lr in (0.1, 0.05, 0.025)]),
    Program("an Adam state replaced every call, not donated", adam_update,
            lambda: (adam_state(), jnp.zeros(2**24)), "no-donation",
            calls=adam_calls),
]
