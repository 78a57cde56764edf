"""Chapter 3 (launches) on the reference GPU: what a GPU visit records, and
what XLA:GPU compiles the variants to for an H100 without one.

The variants themselves, and how launches are counted, live in
`helpers.workbook.launches`. Every function here that measures runs on a
GPU; on a CPU it runs only as a dry run (`helpers.recorded`), at the small
sizes `dry_or` picks, to prove that it runs. The ``*_on_gpu`` functions
are child functions for `helpers.crosscompile.run`.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from helpers import (bench, child, device_time, env, hlo, recorded,
                     xprof_tables)
from helpers.fused import fused_scan
from helpers.workbook import launches
from helpers.workbook.launches import (DTYPES, STEPS, VARIANTS, Weights,
                                       _per_step, _start, fused,
                                       fused_side_by_side,
                                       hoisted_step, init_weights, measure,
                                       many_chains, noise_for, positive,
                                       scan_hoisted, steps_argument,
                                       while_traced)


# --- compiled for an H100 here ---------------------------------------------

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


def graphs_on_gpu(steps: int = STEPS, min_graph_size: int | None = None
                  ) -> list[dict[str, Any]]:
    """Whether each variant's loop body runs as one CUDA graph on an
    H100: XLA:GPU's thunk sequence, compiled here (run through
    `helpers.crosscompile.run`), float32. ``min_graph_size`` sets
    ``--xla_gpu_graph_min_graph_size`` for the compilation (None: the
    default), the fewest steps XLA:GPU puts into a graph.

    Returns:
        One row per variant: its loop body's top-level steps (a body that
        is one CUDA graph has one, the graph), and whether it is a graph;
        None for both where the variant has no loop.
    """
    from helpers import crosscompile, xla_dump
    weights, key = init_weights(jax.random.key(0)), jax.random.key(1)
    options = ({} if min_graph_size is None else
               {"xla_gpu_graph_min_graph_size": min_graph_size})
    rows = []
    for name, variant in VARIANTS.items():
        if variant is while_traced:  # the bound is an argument
            args: tuple[Any, ...] = (weights, key, jnp.int32(steps))
            fn: Callable[..., Any] = variant
        else:
            args = (weights, key)
            fn = functools.partial(_with_steps, variant, steps=steps)
        with tempfile.TemporaryDirectory() as folder:
            compiled = crosscompile.compile_for_gpu(
                fn, *args, compiler_options={**options,
                                             "xla_dump_to": folder})
            bodies = xla_dump.loop_bodies(
                xla_dump.Dump(Path(folder), compiled).thunk_sequence())
        rows.append({
            "variant": name,
            "body steps": max((len(b.steps) for b in bodies), default=None),
            "body is a CUDA graph": all(b.in_graph for b in bodies)
            if bodies else None})
    return rows


def _with_steps(variant: Callable[..., Any], weights: Weights,
                key: jax.Array, *, steps: int) -> Any:
    """A variant with its (static) step count bound."""
    return variant(weights, key, steps)


def fused_cases_on_gpu() -> dict[str, Any]:
    """A child function (`helpers.crosscompile.run`): the steps the GPU
    tests run through `fused_scan` (a 16x16 tanh layer, its gradient, the
    source's 1 -> 12 -> 1 softplus MLP in float32 and float64), each
    compiled for an H100: the backend chosen and the custom calls, or the
    compiler's error. The dry run of `tests/gpu/test_fused_on_gpu.py`:
    ``mosaic_gpu_v2`` is Mosaic GPU's custom call, ``__gpu$xla.gpu.triton``
    Triton's."""
    from helpers import crosscompile
    w = jnp.linspace(-1.0, 1.0, 256).reshape(16, 16) / 4
    xs = jnp.zeros((8, 16, 16))
    w_in = jnp.linspace(-1.0, 1.0, 12).reshape(1, 12)
    w_out = jnp.linspace(0.5, -0.5, 12).reshape(12, 1)

    def tanh_layer(c: Any, x: Any, w: Any = w) -> Any:
        h = jnp.tanh(c @ w + x)
        return h, h.sum()

    def mlp(m: Any, noise: Any) -> Any:
        hidden = jax.nn.sigmoid(m @ jax.nn.softplus(w_in))
        return jax.nn.sigmoid(hidden @ jax.nn.softplus(w_out)) + noise, None

    def gradient(w: Any) -> Any:
        return jax.grad(lambda w: fused_scan(
            lambda c, x: tanh_layer(c, x, w), jnp.zeros((16, 16)), xs
        )[1].sum())(w)

    def chains(dtype: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        noise = jnp.zeros((4, 500, 1), dtype)
        return (jax.vmap(lambda i, n: fused_scan(mlp, i, n)[0]),
                (jnp.zeros((4, 1), dtype), noise))

    cases: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
        "tanh layer": (lambda c, x: fused_scan(tanh_layer, c, x),
                       (jnp.zeros((16, 16)), xs)),
        "gradient": (gradient, (w,)),
        "mlp float32": chains(jnp.float32)}
    found: dict[str, Any] = {}
    for name in [*cases, "mlp float64"]:
        with jax.enable_x64(name == "mlp float64"):
            fn, args = cases.get(name) or chains(jnp.float64)
            try:
                text = crosscompile.compile_for_gpu(fn, *args).as_text()
            except Exception as err:  # the compiler's refusal is the result
                found[name] = {"error": f"{type(err).__name__}: {err}"[:300]}
                continue
        found[name] = {"custom calls": sorted(
            c.target for c in hlo.custom_calls(text)),
            "while loops": len(hlo.while_loops(text))}
    return found


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



# --- measured on the GPU (a dry run elsewhere) -------------------------------

def profile_one_call(variant: jax.stages.Wrapped, *args: Any,
                     folder: str) -> None:
    """Profile one call of ``variant`` (compiled and run once before) into
    ``folder``, for XProf to count its kernels. Under JAX's CUDA plugin
    XLA:GPU keeps its CUDA graphs while jax.profiler traces (the
    plugin's copy of the profiler lock never sees jax's session, so
    ``--xla_enable_command_buffers_during_profiling`` has no effect), so
    the trace shows the program as it runs unprofiled."""
    bench.block(variant(*args))
    with jax.profiler.trace(folder):
        bench.block(variant(*args))


def xprof_launches(folder: str | Path, steps: int) -> float | str:
    """Kernels per step as XProf counts them in the same profile (its
    ``kernel_stats``: each kernel's occurrences, summed), to set beside
    the count from the trace events; where XProf has no kernel table (a
    CPU, no xprof), the reason instead."""
    try:
        return xprof_tables.kernel_totals(folder)["kernels"] / steps
    except (ValueError, ModuleNotFoundError, FileNotFoundError) as err:
        return str(err)


# Steps of the profiled calls: enough for the per-step count to hide the
# few kernels outside the loop, few enough that every profile can be kept
# with the recording (about 200 bytes per kernel before gzip).
PROFILED_STEPS = 1000


def kept_profile(variant: str) -> str:
    """The recording name under which a GPU visit keeps the profile of
    ``variant``, e.g. ``'03_launches/profile-while-traced-bound'``."""
    slug = re.sub(r"[^a-z0-9]+", "-", variant.lower()).strip("-")
    return f"03_launches/profile-{slug}"


def xprof_launches_of_recording(result: Any) -> dict[str, Any]:
    """XProf's kernels per step of every profile a recording of
    `measure_variants_on_gpu` kept, counted here (no GPU needed); where a
    profile was not kept, what the GPU run counted, or None."""
    steps = result.data.get("profiled_steps")
    counted = result.data.get("xprof_launches_per_step", {})
    counts: dict[str, Any] = {}
    for name in VARIANTS:
        folder = recorded.profile_folder(kept_profile(name),
                                         env.device_slug(result.provenance))
        count = (xprof_launches(folder, steps) if steps and folder.exists()
                 else counted.get(name))
        counts[name] = count if isinstance(count, float) else None
    return counts


def dry_or(gpu: Any, dry: Any) -> Any:
    """``gpu`` on a GPU; ``dry`` elsewhere, where a GPU measurement runs
    only as a dry run (`helpers.recorded`) and needs only to run."""
    return env.sizes(gpu=gpu, cpu=dry)


def measure_variants_on_gpu(folder: str, *, steps: int | None = None
                            ) -> dict[str, Any]:
    """What the chapter records from a GPU machine: every variant on the
    GPU (wall clock per step, and, from two profiled calls, the device's
    kernel time, kernels and share of them in CUDA graphs per step), the
    loop variants on the same machine's CPU, and one profiled call of each
    GPU variant of `PROFILED_STEPS`, kept with the recording and counted
    by XProf (`xprof_launches`)."""
    steps = steps or dry_or(STEPS, 200)
    profiled_steps = min(steps, PROFILED_STEPS)
    weights, key = init_weights(jax.random.key(0)), jax.random.key(1)
    by_xprof: dict[str, float | str] = {}
    for name, variant in VARIANTS.items():
        where = os.path.join(folder, f"variant-{len(by_xprof)}")
        profile_one_call(variant, weights, key,
                         steps_argument(variant, profiled_steps),
                         folder=where)
        by_xprof[name] = xprof_launches(where, profiled_steps)
        recorded.keep_profile(kept_profile(name), where)
    loops = [n for n in VARIANTS if VARIANTS[n] is not fused]
    # Both devices named: where the default device is the CPU (a dry run),
    # the second measurement then reuses the first one's compilations.
    return {"gpu": measure(steps=steps, device=jax.devices()[0],
                           profiled=2),
            "cpu": measure(loops, steps=steps, device=jax.devices("cpu")[0]),
            "profiled_steps": profiled_steps,
            "xprof_launches_per_step": by_xprof}


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

    device_s: dict[str, float] = {}

    def time_it(fn: Callable[..., Any], *args: Any, on: Any = None,
                times: int = repeat, device_as: str = "") -> float | str:
        """The median wall-clock seconds, or the error that stopped this
        one measurement (the others go on: a visit is too short to lose).
        With ``device_as``, a one-kernel call is also timed by the
        device's clock, kept under that name."""
        args = jax.tree.map(lambda a: jax.device_put(a, on)
                            if isinstance(a, jax.Array) else a, args)
        try:
            with jax.default_device(on):
                if not device_as:
                    return bench.benchmark(fn, *args, repeat=times).median
                timing = device_time.measure(fn, *args, repeat=times)
                device_s[device_as] = timing.median
                return timing.wall.median
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
    result = {
        "steps": steps, "chains": chains,
        "one_chain_s": {
            "gpu fused_scan": time_it(fused, weights, key, steps,
                                      device_as="gpu fused_scan"),
            "gpu fused_scan, triton": time_it(
                fused_with("triton"), weights, key,
                device_as="gpu fused_scan, triton"),
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
        "trivial_fused_s": time_it(trivial, jnp.ones(steps),
                                   device_as="trivial fused"),
    }
    # The fused kernels by the device's clock: one kernel a call, so the
    # profiler slows nothing, and the host's part of the call is left out.
    return {**result, "device_s": device_s}


def measure_rows(names: list[str], steps: int, repeat: int,
                 dtypes: Sequence[str] = DTYPES) -> list[dict[str, Any]]:
    """`launches.measure`, with plain arguments for a child process."""
    return launches.measure(names or None, steps=steps, repeat=repeat,
                            dtypes=tuple(dtypes))


def measure_with_flags(xla_flags: str, names: list[str], *,
                       steps: int = launches.STEPS, repeat: int = 20,
                       dtypes: tuple[str, ...] = DTYPES,
                       timeout: float = 600) -> list[dict[str, Any]]:
    """`launches.measure` in a fresh Python process run with
    ``XLA_FLAGS``. XLA reads its flags once, when a process first uses a
    device, so comparing flags takes one process per setting.

    Raises:
        helpers.child.ChildFailed: the child failed (an unknown flag
            aborts it); the message carries its output.
    """
    return child.call(measure_rows, names, steps, repeat, list(dtypes),
                      timeout=timeout, env={"XLA_FLAGS": xla_flags})


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
    graphs off, the default, the default with WHILE added, and the
    default kinds in graphs of any size (``xla_gpu_graph_min_graph_size``
    1, where the default forms a graph only from 5 steps)."""
    return {"graphs off": "--xla_gpu_enable_command_buffer=",
            "default": "",
            "default + WHILE": with_while_graphs(default_kinds),
            "smallest graphs": "--xla_gpu_graph_min_graph_size=1"}


def measure_command_buffers(default_kinds: str, names: list[str], *,
                            steps: int | None = None,
                            repeat: int | None = None
                            ) -> dict[str, list[dict[str, Any]]]:
    """`measure` of the variants ``names`` under each of `graph_settings`,
    each setting in a fresh process (a GPU machine's recording). A dry
    run measures float32 only: float64 takes the same path."""
    steps, repeat = steps or dry_or(STEPS, 200), repeat or dry_or(20, 3)
    dtypes = dry_or(DTYPES, DTYPES[:1])
    settings = graph_settings(default_kinds)
    if None in settings.values():
        raise ValueError(f"the default command-buffer kinds are not known "
                         f"({default_kinds}); read them with "
                         "helpers.flag_registry.effective on this machine.")
    return {label: measure_with_flags(flags or "", names, steps=steps,
                                      repeat=repeat, dtypes=dtypes)
            for label, flags in settings.items()}
