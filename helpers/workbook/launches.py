"""Chapter 3 (Kernel launches): the noisy-MLP loop of JAX issue #7024, its
variants and their measurements (the exercises are in `rewrites`).

The program: a state of one number (the "momentum") is pushed through a
1 -> 12 -> 1 MLP whose weights pass through softplus, with a sigmoid after
each layer; fresh Gaussian noise is added; 8000 steps. Every variant below
computes that, differing only in how the loop, the random numbers and the
softplus are written. ``python -m helpers.workbook.launches`` measures them
in a fresh process and prints JSON, so the chapter can time them under
other ``XLA_FLAGS`` (flags are read once, when a process starts its GPU).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp

from helpers import bench, env, hlo, trace
from helpers.fused import fused_scan

STATE = (1,)    # the thread's `shape = (1,)`: one number of state
HIDDEN = 12     # the thread's hidden layer
STEPS = 8000    # the thread's maximum_iterations
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


def _split_step(weights: Weights, carry: tuple[jax.Array, jax.Array]
                ) -> tuple[jax.Array, jax.Array]:
    """The thread's step: split the key, softplus, MLP, add noise."""
    momentum, key = carry
    key, noise_key = jax.random.split(key)
    noise = jax.random.normal(noise_key, STATE, momentum.dtype)
    return force(positive(weights), momentum) + noise, key


def _start(weights: Weights) -> jax.Array:
    return jnp.zeros(STATE, weights["w_in"].dtype)


# --- the variants: (weights, key, steps) -> final momentum -----------------

def _while_loop(weights: Weights, key: jax.Array, steps: Any) -> jax.Array:
    """The thread's loop: `lax.while_loop` counting up to ``steps``."""
    def body(state):
        i, momentum, key = state
        return (i + 1, *_split_step(weights, (momentum, key)))

    _, momentum, _ = jax.lax.while_loop(lambda s: s[0] < steps, body,
                                        (0, _start(weights), key))
    return momentum


# The thread's program: the bound is a traced value, known only at run time.
while_traced = jax.jit(_while_loop)
# The same loop with ``steps`` static: XLA can prove the trip count.
while_static = jax.jit(_while_loop, static_argnums=2)


@functools.partial(jax.jit, static_argnums=2)
def scan_split(weights: Weights, key: jax.Array, steps: int) -> jax.Array:
    """`lax.scan` with a static length; still a key split every step."""
    (momentum, _), _ = jax.lax.scan(
        lambda c, _: (_split_step(weights, c), None),
        (_start(weights), key), length=steps)
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
    momentum, _ = jax.lax.scan(step, _start(weights),
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
                               _start(weights), noise, unroll=unroll)
    return momentum


@functools.partial(jax.jit, static_argnums=2)
def fused(weights: Weights, key: jax.Array, steps: int) -> jax.Array:
    """`scan_hoisted` with the whole loop in one Pallas kernel."""
    noise = noise_for(key, steps, weights["w_in"].dtype)
    momentum, _ = fused_scan(hoisted_step(positive(weights)),
                             _start(weights), noise)
    return momentum


def fused_side_by_side(weights: Weights, keys: jax.Array, steps: int, *,
                       chains_per_program: int = 64,
                       backend: str | None = None) -> jax.Array:
    """Many chains of `fused`, ``chains_per_program`` of them side by side
    in each program of one warp (`helpers.chains.fused_chains`), instead
    of ``jax.vmap`` giving every chain a program of its own."""
    from helpers.chains import fused_chains
    dtype = weights["w_in"].dtype
    noise = jax.vmap(lambda key: noise_for(key, steps, dtype))(keys)
    init = jnp.broadcast_to(_start(weights), (keys.shape[0],
                                              *_start(weights).shape))
    momentum, _ = fused_chains(hoisted_step(positive(weights)), init,
                               noise, chains_per_program=chains_per_program,
                               backend=backend)
    return momentum


def side_by_side_on_gpu(chains: int = 10_000, steps: int = STEPS,
                        backend: str = "triton") -> dict[str, Any]:
    """A child function (`helpers.crosscompile.run`): `fused_side_by_side`
    compiled for an H100 with ``backend``, with its custom calls, and (for
    Triton) the grid and warps read from the call's configuration."""
    from helpers import crosscompile
    weights = init_weights(jax.random.key(0))
    keys = jax.random.split(jax.random.key(2), chains)
    text = crosscompile.compile_for_gpu(
        lambda w, k: fused_side_by_side(w, k, steps, backend=backend),
        weights, keys).as_text()
    config = {name: int(value) for name, value in re.findall(
        r'"?(grid_x|num_warps)"?\s*[:=]\s*"?(\d+)', text)}
    return {"custom calls": [c.target for c in hlo.custom_calls(text)],
            "programs": config.get("grid_x"),
            "warps per program": config.get("num_warps")}


def fused_backends_on_gpu(steps: int = STEPS) -> dict[str, Any]:
    """A child function (`helpers.crosscompile.run`): `fused` compiled for
    an H100 with each Pallas backend, its custom calls and kernels, and
    which backend `fused_scan` picks for the H100 by itself."""
    from helpers import backends, crosscompile
    weights, key = init_weights(jax.random.key(0)), jax.random.key(1)
    pos = positive(weights)
    found: dict[str, Any] = {"chosen": backends.choose(None, None).backend}
    for backend in backends.BACKENDS:
        def run(w: Weights, k: jax.Array, b: str = backend) -> jax.Array:
            noise = noise_for(k, steps, w["w_in"].dtype)
            return fused_scan(hoisted_step(pos), _start(w), noise,
                              backend=b)[0]
        text = crosscompile.compile_for_gpu(run, weights, key).as_text()
        found[backend] = {
            "custom calls": [c.target for c in hlo.custom_calls(text)],
            "kernels": hlo.kernel_count(text)}
    return found


VARIANTS: dict[str, Callable[..., jax.Array]] = {
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

def launches_per_step(variant: Callable[..., jax.Array], weights: Weights,
                      key: jax.Array, steps: int, unroll: int = 1
                      ) -> float:
    """Kernels launched per loop step, read from the compiled HLO.

    A loop body that runs ``unroll`` steps counts once per ``unroll``
    steps; a loop of unknown trip count adds its condition (evaluated
    every iteration); a program with no loop is ``kernels / steps``.
    """
    args = (weights, key, steps) + ((unroll,) if unroll != 1 else ())
    return _per_step(hlo.compiled_text(variant, *args), int(steps), unroll)


def _per_step(text: str, steps: int, unroll: int = 1) -> float:
    """`launches_per_step` from compiled HLO text."""
    per_pass = step_loop_launches(text, steps // unroll)
    if per_pass is None:
        return hlo.kernel_count(text) / steps
    return per_pass / unroll


def step_loop_launches(text: str, iterations: int) -> int | None:
    """Kernels one pass of the step loop launches, from compiled HLO text
    (None: no loop of ``iterations`` or unknown trips, e.g. one kernel)."""
    main = _main_loop(text, iterations)
    return None if main is None else _kernels_per_iteration(main)


def launches_on_gpu(steps: int = STEPS) -> list[dict[str, Any]]:
    """Kernels per step of every variant as XLA:GPU compiles it for an
    H100 (run through `helpers.crosscompile.run`), float32."""
    from helpers import crosscompile
    weights, key = init_weights(jax.random.key(0)), jax.random.key(1)
    rows = []
    for name, variant in VARIANTS.items():
        if variant is while_traced:  # the bound is an argument
            compiled = crosscompile.compile_for_gpu(
                variant, weights, key, jnp.int32(steps))
        else:
            compiled = crosscompile.compile_for_gpu(
                lambda w, k, v=variant: v(w, k, steps), weights, key)
        text = compiled.as_text()
        rows.append({"variant": name,
                     "launches per step": _per_step(text, steps),
                     "custom calls": sorted({c.target for c in
                                             hlo.custom_calls(text)})})
    return rows


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
            dtypes: tuple[str, ...] = ("float32", "float64"),
            repeat: int = 20, device: Any = None) -> list[dict[str, Any]]:
    """Time each variant: rows of launches/step and microseconds/step
    (median of ``repeat`` calls), on ``device`` (default: the default
    device; pass ``jax.devices("cpu")[0]`` for a GPU machine's host)."""
    rows = []
    for dtype in dtypes:
        with jax.enable_x64(dtype == "float64"), \
                jax.default_device(device):
            weights = init_weights(jax.random.key(0), dtype=dtype)
            key = jax.random.key(1)
            for name in names or list(VARIANTS):
                variant = VARIANTS[name]
                bound = steps_argument(variant, steps)
                timing = bench.benchmark(variant, weights, key, bound,
                                         repeat=repeat, name=name)
                rows.append({
                    "variant": name, "dtype": dtype, "steps": steps,
                    "launches_per_step": launches_per_step(
                        variant, weights, key, bound),
                    "us_per_step": timing.median / steps * 1e6,
                    "ms": timing.median * 1e3})
    return rows


def measure_unroll(unrolls: list[int], *, steps: int = STEPS,
                   hidden: int = HIDDEN, dtype: str = "float32",
                   repeat: int = 20) -> list[dict[str, Any]]:
    """`scan_hoisted` for each unroll factor: launches and time per step."""
    rows = []
    with jax.enable_x64(dtype == "float64"):
        weights = init_weights(jax.random.key(0), hidden, dtype)
        key = jax.random.key(1)
        for unroll in unrolls:
            timing = bench.benchmark(scan_hoisted, weights, key, steps,
                                     unroll, repeat=repeat)
            rows.append({
                "unroll": unroll, "steps": steps, "hidden": hidden,
                "dtype": dtype,
                "launches_per_step": launches_per_step(
                    scan_hoisted, weights, key, steps, unroll),
                "us_per_step": timing.median / steps * 1e6})
    return rows


def measure_grid(steps_options: list[int], unrolls: list[int],
                 hiddens: list[int], *, repeat: int = 10
                 ) -> list[dict[str, Any]]:
    """`measure_unroll` over every (steps, hidden) pair: the widget's
    table."""
    return [row for steps in steps_options for hidden in hiddens
            for row in measure_unroll(unrolls, steps=steps, hidden=hidden,
                                      repeat=repeat)]


PROFILED_MODES = {
    # XLA:GPU's default: under a profiler, each CUDA graph runs its
    # operations one by one, so the trace shows every kernel.
    "graphs run op by op (default while profiling)": False,
    # The graphs as they run unprofiled: their kernels are replayed
    # inside the graph launches.
    "graphs kept": True,
}


def profiled_launches(variant: Callable[..., jax.Array], *args: Any,
                      steps: int, folder: str,
                      graphs_while_profiling: bool = False) -> float:
    """Kernels per step counted in a `jax.profiler` trace of one call:
    the device's events over the number of steps.

    Which execution a trace shows depends on
    ``xla_enable_command_buffers_during_profiling`` (default false): with
    it off, XLA:GPU runs each command buffer's operations one by one while
    a profiler is attached, so the count is of kernels, not of graph
    launches. ``graphs_while_profiling`` sets it for this compilation.
    """
    compiled = variant.lower(*args).compile(compiler_options={
        "xla_enable_command_buffers_during_profiling":
        graphs_while_profiling})
    # A compiled function takes only the traced arguments: the step count
    # of every variant but the thread's loop is static, baked in.
    dynamic = args if variant is while_traced else args[:2]
    bench.block(compiled(*dynamic))  # the first call outside the trace
    with jax.profiler.trace(folder):
        bench.block(compiled(*dynamic))
    return len(trace.device_events(trace.load(folder))) / steps


def dry_or(gpu: Any, dry: Any) -> Any:
    """``gpu`` on a GPU; ``dry`` elsewhere, where a GPU measurement runs
    only as a dry run (`helpers.recorded`) and needs only to run."""
    return env.sizes(gpu=gpu, cpu=dry)


def measure_variants_on_gpu(folder: str, *, steps: int | None = None
                            ) -> dict[str, Any]:
    """What the chapter records from a GPU machine: every variant on the
    GPU, the loop variants on the same machine's CPU, and the kernels per
    step counted in a profile of each GPU variant, in both execution modes
    of `PROFILED_MODES`."""
    steps = steps or dry_or(STEPS, 200)
    weights, key = init_weights(jax.random.key(0)), jax.random.key(1)
    profiled: dict[str, dict[str, float]] = {}
    for mode, graphs in PROFILED_MODES.items():
        profiled[mode] = {}
        for name, variant in VARIANTS.items():
            bound = steps_argument(variant, steps)
            profiled[mode][name] = profiled_launches(
                variant, weights, key, bound, steps=steps,
                graphs_while_profiling=graphs, folder=os.path.join(
                    folder, f"{len(profiled)}-{len(profiled[mode])}"))
    loops = [n for n in VARIANTS if VARIANTS[n] is not fused]
    return {"gpu": measure(steps=steps),
            "cpu": measure(loops, steps=steps, device=jax.devices("cpu")[0]),
            "profiled_launches_per_step": profiled}


def measure_goals(*, steps: int | None = None, chains: int | None = None,
                  repeat: int | None = None) -> dict[str, Any]:
    """The chapter's two goals, measured on a GPU machine in one run.

    One chain: the fused kernel on the GPU against the best jitted loop on
    the same machine's CPU, with the thread's while loop beside both.
    Many chains: ``chains`` independent chains (vmap) on the GPU and on
    the CPU. Also a do-almost-nothing fused loop, whose time per step is
    the floor a chain of dependent steps cannot beat.
    """
    steps = steps or dry_or(STEPS, 200)
    chains = chains or dry_or(10_000, 256)
    repeat = repeat or dry_or(10, 3)
    cpu = jax.devices("cpu")[0]
    weights = init_weights(jax.random.key(0))
    key = jax.random.key(1)
    keys = jax.random.split(jax.random.key(2), chains)

    def time_it(fn: Callable[..., Any], *args: Any, on: Any = None,
                times: int = repeat) -> float | str:
        """The median seconds, or the error that stopped this one
        measurement (the others go on: a visit is too short to lose)."""
        args = jax.tree.map(lambda a: jax.device_put(a, on)
                            if isinstance(a, jax.Array) else a, args)
        try:
            with jax.default_device(on):
                return bench.benchmark(fn, *args, repeat=times).median
        except Exception as err:  # recorded, never hidden
            return f"failed: {type(err).__name__}: {err}"[:500]

    def fused_with(backend: str) -> Callable[..., Any]:
        return jax.jit(lambda w, k: fused_scan(
            hoisted_step(positive(w)), _start(w),
            noise_for(k, steps, w["w_in"].dtype), backend=backend)[0])

    def chains_of(variant: Callable[..., jax.Array]) -> Callable[..., Any]:
        return jax.jit(lambda w, k: many_chains(variant, w, k, steps))

    trivial = jax.jit(lambda xs: fused_scan(
        lambda c, x: (c * 0.5 + x, None), jnp.zeros(()), xs)[0])
    return {
        "steps": steps, "chains": chains,
        "one_chain_s": {
            "gpu fused_scan": time_it(fused, weights, key, steps),
            "gpu fused_scan, triton": time_it(fused_with("triton"),
                                              weights, key),
            "gpu while, traced bound": time_it(
                while_traced, weights, key, jnp.int32(steps)),
            "cpu scan, softplus hoisted": time_it(
                scan_hoisted, weights, key, steps, on=cpu),
            "cpu while, traced bound": time_it(
                while_traced, weights, key, jnp.int32(steps), on=cpu),
        },
        "many_chains_s": {
            "gpu fused_scan": time_it(chains_of(fused), weights, keys),
            "gpu fused, 64 chains per program": time_it(
                jax.jit(lambda w, k: fused_side_by_side(
                    w, k, steps, backend="triton")), weights, keys),
            "gpu fused, one chain per thread": time_it(
                jax.jit(lambda w, k: fused_side_by_side(
                    w, k, steps, backend="mosaic")), weights, keys),
            "gpu scan, softplus hoisted": time_it(
                chains_of(scan_hoisted), weights, keys),
            "cpu scan, softplus hoisted": time_it(
                chains_of(scan_hoisted), weights, keys, on=cpu, times=3),
        },
        "trivial_fused_s": time_it(trivial, jnp.ones(steps)),
    }


def measure_with_flags(xla_flags: str, names: list[str], *,
                       steps: int = STEPS, repeat: int = 20,
                       timeout: float = 600) -> list[dict[str, Any]]:
    """`measure` in a fresh Python process run with ``XLA_FLAGS``.

    XLA reads its flags once, when a process first uses a device, so
    comparing flags takes one process per setting.
    """
    child_env = {**os.environ, "XLA_FLAGS": xla_flags}
    command = [sys.executable, "-m", "helpers.workbook.launches",
               "--steps", str(steps), "--repeat", str(repeat), *names]
    done = subprocess.run(command, env=child_env, capture_output=True,
                          text=True, timeout=timeout, cwd=env.repo_root())
    if done.returncode != 0:
        raise RuntimeError(f"measuring with XLA_FLAGS={xla_flags!r} "
                           f"failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def with_while_graphs(default_kinds: str) -> str | None:
    """The ``XLA_FLAGS`` setting that adds WHILE to the default kinds of
    command buffers (``default_kinds`` as `helpers.flag_registry.effective`
    gives them), so a whole while loop becomes one CUDA graph; None when
    the default is not known here."""
    if default_kinds.startswith("("):  # "(no CUDA plugin here)"
        return None
    kinds = [k for k in default_kinds.split(",") if k]
    return "--xla_gpu_enable_command_buffer=" + ",".join(
        kinds + [k for k in ("WHILE",) if k not in kinds])


def graph_settings(default_kinds: str) -> dict[str, str | None]:
    """The command-buffer settings the chapter compares, as ``XLA_FLAGS``:
    graphs off, the default, and the default with WHILE added."""
    return {"graphs off": "--xla_gpu_enable_command_buffer=",
            "default": "",
            "default + WHILE": with_while_graphs(default_kinds)}


def measure_command_buffers(default_kinds: str, names: list[str], *,
                            steps: int | None = None,
                            repeat: int | None = None
                            ) -> dict[str, list[dict[str, Any]]]:
    """`measure` of the variants ``names`` under each of `graph_settings`,
    each setting in a fresh process (a GPU machine's recording)."""
    steps, repeat = steps or dry_or(STEPS, 200), repeat or dry_or(20, 3)
    settings = graph_settings(default_kinds)
    if None in settings.values():
        raise ValueError(f"the default command-buffer kinds are not known "
                         f"({default_kinds}); read them with "
                         "helpers.flag_registry.effective on this machine.")
    return {label: measure_with_flags(flags or "", names, steps=steps,
                                      repeat=repeat)
            for label, flags in settings.items()}


def _main(argv: list[str]) -> None:
    """``python -m helpers.workbook.launches [--steps N] [--repeat R]
    NAME...``: print `measure`'s rows as one JSON line."""
    steps, repeat, names = STEPS, 20, []
    args = iter(argv)
    for arg in args:
        if arg == "--steps":
            steps = int(next(args))
        elif arg == "--repeat":
            repeat = int(next(args))
        else:
            names.append(arg)
    print(json.dumps(measure(names or None, steps=steps, repeat=repeat)))


if __name__ == "__main__":
    _main(sys.argv[1:])
