"""The field guide's cases: for each slow pattern, a minimal reproduction
of what JAX users reported, its fix, and example arguments.

Each `Case` pairs a ``slow`` function with a ``fixed`` one that computes
the same thing. `helpers.examine.examine` must find the case's pattern in
``slow`` and nothing slow in ``fixed`` (the unit tests check both), and
the chapter measures both here.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np

from helpers.pallas.scan import fused_scan

STEPS = 8000
Measure = Literal["time", "memory", "compiles"]


@dataclasses.dataclass(frozen=True)
class Case:
    """One pattern: where users met it, the code, and how to measure it.

    Attributes:
        pattern: the `helpers.examine.PATTERNS` key ``slow`` shows.
        issues: the jax-ml/jax issue numbers that report it.
        slow, fixed: the reproduction and its fix, same results.
        arguments: makes the example arguments (fresh arrays each call).
        measure: what the before/after compares here: run time, the
            compiled program's memory, or compilations over a sequence of
            calls.
        calls: for ``'compiles'``, makes the argument tuples of the slow
            and of the fixed sequence of calls.
        x64: the case needs 64-bit types (run it inside
            ``jax.enable_x64(True)``).
        still_found: patterns the fixed version still shows (the next
            thing to fix), which its section says.
        pallas_fix: the fix is a Pallas kernel, which runs in Pallas's
            interpreter off a GPU: its time there says nothing of speed.
    """

    pattern: str
    issues: tuple[int, ...]
    slow: Callable[..., Any]
    fixed: Callable[..., Any]
    arguments: Callable[[], tuple[Any, ...]]
    measure: Measure = "time"
    calls: tuple[Callable[[], list[tuple[Any, ...]]],
                 Callable[[], list[tuple[Any, ...]]]] | None = None
    x64: bool = False
    still_found: tuple[str, ...] = ()
    pallas_fix: bool = False

    @property
    def cite_keys(self) -> list[str]:
        """The issues' keys in the book's bibliography (references.bib),
        which the case's section cites."""
        return [f"jax_issue_{n}" for n in self.issues]


# --- loops ---------------------------------------------------------------

def step(x: jax.Array) -> jax.Array:
    """One step of a small recurrence: a few elementwise operations."""
    return jnp.tanh(1.5 * x) + 0.01


def loop_traced_length(x: jax.Array, steps: jax.Array) -> jax.Array:
    """A fori_loop whose bound is a traced value: a while loop whose trip
    count XLA cannot prove."""
    return jax.lax.fori_loop(0, steps, lambda i, c: step(c), x)


@functools.partial(jax.jit, static_argnames="steps")
def loop_static_length(x: jax.Array, steps: int) -> jax.Array:
    """The same loop with its bound a Python int, fixed when tracing: a
    loop of known length, which XLA runs without asking the host."""
    return jax.lax.fori_loop(0, steps, lambda i, c: step(c), x)


@jax.jit
def loop_in_one_kernel(x: jax.Array) -> jax.Array:
    """The same 8000 steps as one Pallas kernel (`fused_scan`, chapter 3),
    its length known when tracing: no loop for the host to drive."""
    return fused_scan(lambda c, _: (step(c), None), x, jnp.zeros(STEPS),
                      backend="triton")[0]


def loop_step_by_step(x: jax.Array) -> jax.Array:
    """8000 steps of a scan whose body is a few small kernels."""
    return jax.lax.scan(lambda c, _: (step(c), None), x, None,
                        length=STEPS)[0]


def noise_split_per_step(key: jax.Array, x: jax.Array) -> jax.Array:
    """Each of 50 steps splits the key and draws its noise in the loop."""
    def body(carry, _):
        key, x = carry
        key, sub = jax.random.split(key)
        return (key, step(x) + 0.1 * jax.random.normal(sub, x.shape)), None
    return jax.lax.scan(body, (key, x), None, length=50)[0][1]


def noise_drawn_first(key: jax.Array, x: jax.Array) -> jax.Array:
    """The same steps with every step's noise drawn at once before the
    loop (the same distribution, other numbers)."""
    noise = jax.random.normal(key, (50, *x.shape))
    return jax.lax.scan(lambda c, n: (step(c) + 0.1 * n, None), x,
                        noise)[0]


# --- compiling again -----------------------------------------------------

def normalise(x: jax.Array) -> jax.Array:
    """Scale a vector to unit length."""
    return x / jnp.linalg.norm(x)


def lengths_as_they_come() -> list[tuple[Any, ...]]:
    """Vectors of every length from 100 to 107: one compilation each."""
    return [(jnp.ones(n),) for n in range(100, 108)]


def lengths_padded() -> list[tuple[Any, ...]]:
    """The same vectors padded to one bucket of 128 (zeros leave the norm
    unchanged): one compilation."""
    return [(jnp.pad(jnp.ones(n), (0, 128 - n)),) for n in range(100, 108)]


# --- data types and precision --------------------------------------------

def mean_square(x: jax.Array) -> jax.Array:
    """A reduction of elementwise work, in the input's dtype."""
    return jnp.mean(jnp.sin(x) ** 2)


def in_float64(x: jax.Array) -> jax.Array:
    """The same computed in float64, as code does after x64 is turned on
    for all of it."""
    return mean_square(x.astype(jnp.float64))


def argsort_int64(x: jax.Array) -> jax.Array:
    """The order of 64-bit keys."""
    return jnp.argsort(x.astype(jnp.int64))


def argsort_int32(x: jax.Array) -> jax.Array:
    """The same order from 32-bit keys (the values fit)."""
    return jnp.argsort(x.astype(jnp.int32))


# --- scatter, callbacks, memory ------------------------------------------

SEGMENTS = 64


def sums_unsorted(values: jax.Array, ids: jax.Array) -> jax.Array:
    """Per-segment sums, the compiler not told that the ids are sorted."""
    return jax.ops.segment_sum(values, ids, SEGMENTS)


@jax.jit
def sums_sorted(values: jax.Array, ids: jax.Array) -> jax.Array:
    """The same sums, the scatter told that the ids arrive sorted."""
    return jax.ops.segment_sum(values, ids, SEGMENTS,
                               indices_are_sorted=True)


def with_host_callback(x: jax.Array) -> jax.Array:
    """Half of the work done by NumPy on the host."""
    y = jax.pure_callback(np.tanh, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return jnp.sin(y) + 1


def on_device(x: jax.Array) -> jax.Array:
    """All of it in JAX."""
    return jnp.sin(jnp.tanh(x)) + 1


def pairwise_sorted(x: jax.Array) -> jax.Array:
    """Column sums of the column-sorted outer product: the whole n x n
    matrix lives at once."""
    return jnp.sort(jnp.outer(x, x), axis=0).sum(0)


@jax.jit
def pairwise_in_chunks(x: jax.Array) -> jax.Array:
    """The same, 512 columns at a time (lax.map over column blocks)."""
    blocks = x.reshape(-1, 512)
    sums = jax.lax.map(lambda b: jnp.sort(jnp.outer(x, b), axis=0).sum(0),
                       blocks)
    return sums.reshape(-1)


def update(params: dict[str, jax.Array], grads: dict[str, jax.Array]
           ) -> dict[str, jax.Array]:
    """A gradient step on a parameter pytree."""
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


@functools.partial(jax.jit, donate_argnums=0)
def update_donated(params: dict[str, jax.Array],
                   grads: dict[str, jax.Array]) -> dict[str, jax.Array]:
    """The same step with the parameters donated: XLA may write the new
    parameters into the old ones' buffers (the caller must not use the
    old ones again)."""
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


def _params() -> tuple[Any, ...]:
    params = {"w": jnp.ones((1024, 1024)), "b": jnp.ones(1024)}
    return params, jax.tree.map(jnp.ones_like, params)


def _training_steps() -> list[tuple[Any, ...]]:
    """Two steps of a training loop: the second takes the parameters the
    first returned, the evidence that the output replaces its input."""
    params, grads = _params()
    first = (params, grads)
    after = jax.jit(update)(params, grads)  # the state the loop carries
    return [first, (after, grads)]


CASES: dict[str, Case] = {
    "host-round-trip": Case("host-round-trip", (7024, 30245),
                            loop_traced_length, loop_static_length,
                            lambda: (jnp.ones(64), STEPS),
                            still_found=("launches-per-step",)),
    "launches-per-step": Case("launches-per-step", (7024, 30245),
                              loop_step_by_step, loop_in_one_kernel,
                              lambda: (jnp.ones(64),), pallas_fix=True),
    "random-in-loop": Case("random-in-loop", (7024,), noise_split_per_step,
                           noise_drawn_first,
                           lambda: (jax.random.key(0), jnp.ones(64))),
    "retracing": Case("retracing", (15412,), normalise, normalise,
                      lambda: (jnp.ones(128),), "compiles",
                      (lengths_as_they_come, lengths_padded)),
    "float64": Case("float64", (2980,), in_float64, mean_square,
                    lambda: (jnp.linspace(0, 1, 2**20, dtype=jnp.float32),),
                    x64=True),
    "sort-64-bit": Case("sort-64-bit", (34912,), argsort_int64,
                        argsort_int32,
                        lambda: (jnp.arange(2**20, dtype=jnp.int32)[::-1],),
                        x64=True),
    "scatter-contention": Case(
        "scatter-contention", (38806,), sums_unsorted, sums_sorted,
        lambda: (jnp.ones(2**20), jnp.arange(2**20) // 2**14)),
    "host-callback": Case("host-callback", (), with_host_callback,
                          on_device, lambda: (jnp.ones(2**16),)),
    "large-temporaries": Case("large-temporaries", (), pairwise_sorted,
                              pairwise_in_chunks,
                              lambda: (jnp.linspace(0, 1, 8192),),
                              "memory"),
    "no-donation": Case("no-donation", (), update, update_donated, _params,
                        "memory", calls=(_training_steps, _training_steps)),
}
