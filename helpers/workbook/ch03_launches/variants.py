"""Chapter 3 (Kernel launches): the noisy-MLP loop of JAX issue #7024, its
variants and their measurements (the exercises are in `exercises`).

The program: a state of one number (the "momentum") is pushed through a 1 -> 12
-> 1 MLP whose weights pass through softplus, with a sigmoid after each layer;
fresh Gaussian noise is added; 8000 steps. Every variant below computes that,
differing only in how the loop, the random numbers and the softplus are
written. Each measurement compiles a variant once (`compiled`), with XLA
compiler options where the chapter compares settings, and reads its
launches from the same executable it times.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp

from helpers.measuring import bench, device_time
from helpers.pallas.backends import Backend
from helpers.pallas.scan import fused_scan
from helpers.xla import hlo

STATE = (1,)    # the thread's `shape = (1,)`: one number of state
HIDDEN = 12     # the thread's hidden layer
STEPS = 8000    # the thread's maximum_iterations
DTYPES = ("float32", "float64")  # each variant is measured in both
Weights = dict[str, jax.Array]


def init_weights(key: jax.Array, hidden: int = HIDDEN,
                 dtype: Any = jnp.float32) -> Weights:
    """Random weights of the 1 -> hidden -> 1 MLP (the thread started from
    zeros, which makes every hidden unit the same)."""
    key_in, key_out = jax.random.split(key)
    return {"w_in": 0.5 * jax.random.normal(key_in, (1, hidden), dtype),
            "w_out": 0.5 * jax.random.normal(key_out, (hidden, 1), dtype)}


def positive(weights: Weights) -> Weights:
    """softplus of every weight: the thread's way to keep them positive."""
    return jax.tree.map(jax.nn.softplus, weights)


def force(pos: Weights, momentum: jax.Array) -> jax.Array:
    """The MLP on softplus-ed weights: sigmoid after each of two layers."""
    hidden = jax.nn.sigmoid(momentum @ pos["w_in"])
    return jax.nn.sigmoid(hidden @ pos["w_out"])


def split_step(weights: Weights, carry: tuple[jax.Array, jax.Array]
               ) -> tuple[jax.Array, jax.Array]:
    """The thread's step: split the key, softplus, MLP, add noise."""
    momentum, key = carry
    key, noise_key = jax.random.split(key)
    noise = jax.random.normal(noise_key, STATE, momentum.dtype)
    return force(positive(weights), momentum) + noise, key


def initial_state(weights: Weights) -> jax.Array:
    """The momentum every chain starts from: zero, in the weights'
    dtype."""
    return jnp.zeros(STATE, weights["w_in"].dtype)


# --- the variants: (weights, key, steps) -> final momentum -----------------

def run_steps(weights: Weights, key: jax.Array, steps: Any) -> jax.Array:
    """The thread's loop: `lax.while_loop` counting up to ``steps``."""
    def body(state):
        i, momentum, key = state
        return (i + 1, *split_step(weights, (momentum, key)))

    _, momentum, _ = jax.lax.while_loop(lambda s: s[0] < steps, body,
                                        (0, initial_state(weights), key))
    return momentum


# The thread's program: the bound is a traced value, known only at run time.
while_traced = jax.jit(run_steps)
# The same loop with ``steps`` static: XLA can prove the trip count.
while_static = jax.jit(run_steps, static_argnums=2)


@functools.partial(jax.jit, static_argnums=2)
def scan_split(weights: Weights, key: jax.Array, steps: int) -> jax.Array:
    """`lax.scan` with a static length; still a key split every step."""
    (momentum, _), _ = jax.lax.scan(
        lambda c, _: (split_step(weights, c), None),
        (initial_state(weights), key), length=steps)
    return momentum


def noise_for(key: jax.Array, steps: int, dtype: Any) -> jax.Array:
    """All the loop's noise drawn at once, outside the loop: (steps, 1)."""
    return jax.random.normal(key, (steps, *STATE), dtype)


@functools.partial(jax.jit, static_argnums=2)
def scan_noise(weights: Weights, key: jax.Array, steps: int) -> jax.Array:
    """Noise drawn once before the loop; softplus still inside it."""
    def step(momentum, noise):
        return force(positive(weights), momentum) + noise, None

    dtype = weights["w_in"].dtype
    momentum, _ = jax.lax.scan(step, initial_state(weights),
                               noise_for(key, steps, dtype))
    return momentum


def hoisted_step(pos: Weights) -> Callable[[jax.Array, jax.Array], Any]:
    """The loop body with softplus computed once, outside the loop."""
    def step(momentum: jax.Array, noise: jax.Array) -> Any:
        return force(pos, momentum) + noise, None

    return step


@functools.partial(jax.jit, static_argnums=(2, 3))
def scan_hoisted(weights: Weights, key: jax.Array, steps: int,
                 unroll: int = 1) -> jax.Array:
    """Noise outside, softplus outside; ``unroll`` steps per iteration."""
    noise = noise_for(key, steps, weights["w_in"].dtype)
    momentum, _ = jax.lax.scan(hoisted_step(positive(weights)),
                               initial_state(weights), noise, unroll=unroll)
    return momentum


@functools.partial(jax.jit, static_argnums=2)
def fused(weights: Weights, key: jax.Array, steps: int) -> jax.Array:
    """`scan_hoisted` with the whole loop in one Pallas kernel."""
    noise = noise_for(key, steps, weights["w_in"].dtype)
    momentum, _ = fused_scan(hoisted_step(positive(weights)),
                             initial_state(weights), noise)
    return momentum


@functools.partial(jax.jit, static_argnums=2)
def fused_triton(weights: Weights, key: jax.Array, steps: int
                 ) -> jax.Array:
    """`fused` compiled by Pallas's Triton backend, whatever the GPU: the
    padded kernel chapter 3's latency kernel is set against."""
    noise = noise_for(key, steps, weights["w_in"].dtype)
    momentum, _ = fused_scan(hoisted_step(positive(weights)),
                             initial_state(weights), noise, backend="triton")
    return momentum


def fused_side_by_side(weights: Weights, keys: jax.Array, steps: int, *,
                       chains_per_program: int = 64,
                       backend: Backend | None = None) -> jax.Array:
    """Many chains of `fused`, ``chains_per_program`` of them side by side
    in each program of one warp
    (`helpers.pallas.triton.chains.fused_chains`), instead of ``jax.vmap``
    giving every chain a program of its own."""
    from helpers.pallas.triton.chains import fused_chains
    dtype = weights["w_in"].dtype
    noise = jax.vmap(lambda key: noise_for(key, steps, dtype))(keys)
    init = jnp.broadcast_to(initial_state(weights), (keys.shape[0],
                                              *initial_state(weights).shape))
    momentum, _ = fused_chains(hoisted_step(positive(weights)), init,
                               noise, chains_per_program=chains_per_program,
                               backend=backend)
    return momentum


VARIANTS: dict[str, jax.stages.Wrapped] = {
    "while, traced bound": while_traced,
    "while, static bound": while_static,
    "scan, split per step": scan_split,
    "scan, noise outside": scan_noise,
    "scan, softplus hoisted": scan_hoisted,
    "fused_scan (one kernel)": fused,
}
# Variants that draw the same random numbers compute the same result.
SAME_NOISE = [list(VARIANTS)[:3], list(VARIANTS)[3:]]


def steps_argument(variant: Callable[..., jax.Array], steps: int) -> Any:
    """How ``variant`` takes its step count: a traced int32 array for the
    thread's while loop, a static Python int for every other variant."""
    return jnp.int32(steps) if variant is while_traced else steps


def many_chains(variant: Callable[..., jax.Array], weights: Weights,
                keys: jax.Array, steps: int) -> jax.Array:
    """``variant`` on independent chains, one per key: (chains, 1)."""
    return jax.vmap(lambda key: variant(weights, key, steps))(keys)


# --- counting and timing -----------------------------------------------------

def compiled(variant: Callable[..., jax.Array], weights: Weights,
             key: jax.Array, steps: Any, unroll: int = 1,
             compiler_options: dict[str, Any] | None = None
             ) -> tuple[Any, tuple[Any, ...]]:
    """``variant`` compiled once for these arguments (with XLA
    ``compiler_options``, e.g. ``{"xla_gpu_graph_min_graph_size": 1}``),
    and the arguments its executable takes: the static ones (a Python
    int: the step count, the unroll factor) are compiled in.

    Example:
        >>> w, k = init_weights(jax.random.key(0)), jax.random.key(1)
        >>> program, args = compiled(scan_hoisted, w, k, 10)
        >>> program(*args).shape
        (1,)
    """
    args = (weights, key, steps) + ((unroll,) if unroll != 1 else ())
    program = variant.lower(*args).compile(  # type: ignore[attr-defined]
        compiler_options=compiler_options)
    return program, tuple(a for a in args if not isinstance(a, int))


def launches_per_step(variant: Callable[..., jax.Array], weights: Weights,
                      key: jax.Array, steps: int, unroll: int = 1
                      ) -> float:
    """Kernels launched per loop step, read from the compiled HLO.

    A loop body that runs ``unroll`` steps counts once per ``unroll``
    steps; a loop of unknown trip count adds its condition (evaluated
    every iteration); a program with no loop is ``kernels / steps``.
    """
    args = (weights, key, steps) + ((unroll,) if unroll != 1 else ())
    text = hlo.compiled_text(variant, *args)
    return launches_in_text(text, int(steps), unroll)


def launches_in_text(text: str, steps: int, unroll: int = 1) -> float:
    """`launches_per_step` from compiled HLO text: the launches of one pass
    of the step loop over the steps it runs (``unroll`` a pass), or every
    kernel of the program over ``steps`` when no step loop is found."""
    per_pass = step_loop_launches(text, steps // unroll)
    if per_pass is None:
        return hlo.kernel_count(text) / steps
    return per_pass / unroll


def step_loop_launches(text: str, iterations: int) -> int | None:
    """Kernels one pass of the step loop launches, from compiled HLO text
    (None: no loop of ``iterations`` or unknown trips, e.g. one kernel)."""
    main = _main_loop(text, iterations)
    return None if main is None else _kernels_per_iteration(main)


def _main_loop(text: str, iterations: int) -> hlo.WhileLoop | None:
    """The loop over the steps: the one that runs ``iterations`` times or
    whose count is unknown (random-number loops of 5 trips are others)."""
    loops = [w for w in hlo.while_loops(text)
             if w.trip_count in (None, iterations)]
    return max(loops, key=lambda w: w.body_kernels or 0, default=None)


def _kernels_per_iteration(loop: hlo.WhileLoop) -> int:
    """The body's kernels, plus the condition's when XLA must evaluate it
    (a trip count unknown at compile time)."""
    return (loop.body_kernels or 0) + (
        loop.condition_kernels or 0 if loop.trip_count is None else 0)


def measure(names: list[str] | None = None, *, steps: int = STEPS,
            dtypes: tuple[str, ...] = DTYPES, repeat: int = 20,
            device: Any = None, profiled: int = 0,
            compiler_options: dict[str, Any] | None = None,
            max_seconds: float | None = None) -> list[dict[str, Any]]:
    """Time each variant on ``device`` (default: the default device; pass
    ``jax.devices("cpu")[0]`` for a GPU machine's host), each compiled
    once (`compiled`, with ``compiler_options``), its launches read from
    the executable timed. ``max_seconds`` is each variant's time budget
    (`helpers.measuring.bench.benchmark`): a loop of a fifth of a second a
    call needs fewer than ``repeat`` samples.

    A loop's time of record is the wall clock of a blocked call over its
    steps: the host's part of one call (a fraction of a millisecond) spread
    over thousands of steps is a few hundredths of a microsecond a step, while
    the profiler slows every launch of a launch-bound loop and would lengthen
    the gaps between kernels. With ``profiled`` calls under the profiler
    (`helpers.measuring.device_time`), a row also says how busy the device was:
    kernel µs, kernels and the share of them that ran in a CUDA graph, per
    step.

    Returns:
        Rows of launches per step (from the compiled HLO), µs per step
        (median of ``repeat`` calls) and ms per call, and with
        ``profiled`` the device's columns.
    """
    rows = []
    for dtype in dtypes:
        with jax.enable_x64(dtype == "float64"), \
                jax.default_device(device):
            weights = init_weights(jax.random.key(0), dtype=dtype)
            key = jax.random.key(1)
            for name in names or list(VARIANTS):
                variant = VARIANTS[name]
                program, args = compiled(
                    variant, weights, key, steps_argument(variant, steps),
                    compiler_options=compiler_options)
                rows.append({
                    "variant": name, "dtype": dtype, "steps": steps,
                    "launches_per_step": launches_in_text(
                        program.as_text(), steps),
                    **_timed(program, args, steps, repeat, profiled, name,
                             max_seconds)})
    return rows


def _timed(fn: Callable[..., Any], args: tuple[Any, ...], steps: int,
           repeat: int, profiled: int, name: str,
           max_seconds: float | None = None) -> dict[str, float]:
    """A loop's columns: wall µs per step and ms per call, and with
    ``profiled`` calls under the profiler, the device's per step."""
    if not profiled:
        timing = bench.benchmark(fn, *args, repeat=repeat, name=name,
                                 max_seconds=max_seconds)
        return {"us_per_step": timing.median / steps * 1e6,
                "ms": timing.median * 1e3}
    measured = device_time.measure(fn, *args, repeat=repeat, name=name,
                                   profiled=profiled,
                                   max_seconds=max_seconds)
    return {"us_per_step": measured.wall.median / steps * 1e6,
            "ms": measured.wall.median * 1e3,
            "kernel_us_per_step": measured.kernel.median / steps * 1e6,
            "kernels_per_step": measured.kernels_per_call / steps,
            "in_graph": measured.in_graph}


def measure_unroll(unrolls: list[int], *, steps: int = STEPS,
                   hidden: int = HIDDEN, dtype: str = "float32",
                   repeat: int = 20, profiled: int = 0,
                   max_seconds: float | None = None
                   ) -> list[dict[str, Any]]:
    """`scan_hoisted` for each unroll factor: launches and time per step
    (see `measure` for ``profiled`` and ``max_seconds``)."""
    rows = []
    with jax.enable_x64(dtype == "float64"):
        weights = init_weights(jax.random.key(0), hidden, dtype)
        key = jax.random.key(1)
        for unroll in unrolls:
            program, args = compiled(scan_hoisted, weights, key, steps,
                                     unroll)
            rows.append({
                "unroll": unroll, "steps": steps, "hidden": hidden,
                "dtype": dtype,
                "launches_per_step": launches_in_text(
                    program.as_text(), steps, unroll),
                **_timed(program, args, steps, repeat, profiled,
                         f"unroll {unroll}", max_seconds)})
    return rows


def measure_grid(steps_options: list[int], unrolls: list[int],
                 hiddens: list[int], *, repeat: int = 10,
                 max_seconds: float | None = None) -> list[dict[str, Any]]:
    """`measure_unroll` over every (steps, hidden) pair: the widget's
    table."""
    return [row for steps in steps_options for hidden in hiddens
            for row in measure_unroll(unrolls, steps=steps, hidden=hidden,
                                      repeat=repeat,
                                      max_seconds=max_seconds)]
