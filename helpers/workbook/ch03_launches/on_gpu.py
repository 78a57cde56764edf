"""Chapter 3 (launches) on the reference GPU: what a GPU visit records.

The variants themselves, and how launches are counted, live in
`helpers.workbook.ch03_launches.variants`. Every function here that measures
runs on a GPU; on a CPU it runs only as a dry run
(`helpers.measuring.recorded`), at the small sizes `dry_or` picks, to prove
that it runs. What XLA:GPU compiles the variants to for an H100, without
one, is in `helpers.workbook.ch03_launches.for_h100`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp

from helpers.measuring import (bench, capability, device_time, machine,
                               recorded)
from helpers.pallas.backends import Backend
from helpers.pallas.scan import fused_scan
from helpers.profiler import xprof_tables
from helpers.workbook.ch03_launches import chain_kernel
from helpers.workbook.ch03_launches.predictions import (
    LATENCY_KERNEL,
    PADDED_KERNEL,
)
from helpers.workbook.ch03_launches.variants import (
    DTYPES,
    STEPS,
    VARIANTS,
    Weights,
    fused,
    fused_side_by_side,
    fused_triton,
    init_weights,
    many_chains,
    measure,
    scan_hoisted,
    steps_argument,
    while_traced,
)


# --- measured on the GPU (a dry run elsewhere) -------------------------------

def profile_one_call(variant: jax.stages.Wrapped, *args: Any,
                     folder: str) -> None:
    """Profile one call of ``variant`` (compiled and run once before) into
    ``folder``, for XProf to count its kernels. Under JAX's CUDA plugin
    XLA:GPU kept its CUDA graphs while jax.profiler traced (every kernel
    event of chapter 4's H100 profile names its graph), although at
    ``--xla_enable_command_buffers_during_profiling=false`` the
    command-buffer thunk falls back to one operation at a time during a
    profiler session: the trace shows the program as it runs
    unprofiled."""
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
                                         machine.device_slug(result.provenance))
        count = (xprof_launches(folder, steps) if steps and folder.exists()
                 else counted.get(name))
        counts[name] = count if isinstance(count, float) else None
    return counts


def dry_or(gpu: Any, dry: Any) -> Any:
    """``gpu`` on a GPU; ``dry`` elsewhere, where a GPU measurement runs
    only as a dry run (`helpers.measuring.recorded`) and needs only to run."""
    return machine.sizes(gpu=gpu, cpu=dry)


def measure_variants_on_gpu(folder: str, *, steps: int | None = None,
                            gpu_rows: list[dict[str, Any]] | None = None,
                            max_seconds: float | None = None
                            ) -> dict[str, Any]:
    """What the chapter records from a GPU machine: every variant on the
    GPU (wall clock per step, and, from two profiled calls, the device's
    kernel time, kernels and share of them in CUDA graphs per step), the
    loop variants on the same machine's CPU, and one profiled call of each
    GPU variant of `PROFILED_STEPS`, kept with the recording and counted
    by XProf (`xprof_launches`). ``gpu_rows``: the GPU's rows the chapter
    measured already, with the same settings (not measured again)."""
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
    if gpu_rows is None:
        gpu_rows = measure(steps=steps, device=jax.devices()[0], profiled=2,
                           max_seconds=max_seconds)
    return {"gpu": gpu_rows,
            "cpu": measure(loops, steps=steps, device=jax.devices("cpu")[0],
                           max_seconds=max_seconds),
            "profiled_steps": profiled_steps,
            "xprof_launches_per_step": by_xprof}


def measure_goals(*, steps: int | None = None, chains: int | None = None,
                  repeat: int | None = None,
                  max_seconds: float | None = None) -> dict[str, Any]:
    """The chapter's two goals, measured on a GPU machine in one run.

    One chain: the fused kernels on the GPU (the latency kernel among
    them, with its largest difference from the jitted scan on the same
    GPU, ``latency_kernel_error``) against the best jitted loop on the
    same machine's CPU, with the thread's while loop beside both.
    Many chains: ``chains`` independent chains (vmap) on the GPU and on
    the CPU. Also a do-almost-nothing fused loop, whose time per step is
    the floor a chain of dependent steps cannot beat.
    """
    steps = steps or dry_or(STEPS, 200)
    chains = chains or dry_or(10_000, 256)
    watch = _Stopwatch(repeat or dry_or(10, 3), max_seconds)
    weights = init_weights(jax.random.key(0))
    trivial = jax.jit(lambda xs: fused_scan(
        lambda c, x: (c * 0.5 + x, None), jnp.zeros(()), xs)[0])
    return {
        "steps": steps, "chains": chains,
        "one_chain_s": _one_chain(watch, weights, jax.random.key(1), steps),
        "many_chains_s": _many_chains(
            watch, weights, jax.random.split(jax.random.key(2), chains),
            steps),
        "latency_kernel_error": _latency_kernel_error(
            weights, jax.random.key(1), steps),
        "trivial_fused_s": watch.time(trivial, jnp.ones(steps),
                                      device_as="trivial fused",
                                      needs=TRITON),
        # The fused kernels by the device's clock: one kernel a call, so
        # the profiler slows nothing, and the host's part is left out.
        "device_s": watch.device_s}


@dataclasses.dataclass
class _Stopwatch:
    """Times the goals' calls, ``repeat`` each. A call that fails gives its
    error instead of a time (the others go on: a visit is too short to
    lose); a one-kernel call named ``device_as`` is also timed by the
    device's clock, kept in ``device_s`` under that name."""

    repeat: int
    max_seconds: float | None = None  # each call's time budget
    device_s: dict[str, float] = dataclasses.field(default_factory=dict)

    def time(self, fn: Callable[..., Any], *args: Any, on: Any = None,
             times: int | None = None, device_as: str = "",
             needs: str = "") -> float | str:
        """The median wall-clock seconds of ``fn(*args)`` on device
        ``on``, or the error that stopped this one measurement. A kernel
        that ``needs`` a feature this GPU lacks (`capability.lacking`)
        is not timed: Pallas would run it in its interpreter, one chain's
        steps after another's, for hours."""
        lacking = capability.lacking(needs) if needs else ""
        if lacking:
            return f"skipped: {needs} {lacking}"
        args = jax.tree.map(lambda a: jax.device_put(a, on)
                            if isinstance(a, jax.Array) else a, args)
        times = times or self.repeat
        try:
            with jax.default_device(on):
                if not device_as:
                    return bench.benchmark(
                        fn, *args, repeat=times,
                        max_seconds=self.max_seconds).median
                timing = device_time.measure(fn, *args, repeat=times,
                                             max_seconds=self.max_seconds)
                self.device_s[device_as] = timing.median
                return timing.wall.median
        except Exception as err:  # recorded, never hidden
            return f"failed: {type(err).__name__}: {err}"[:500]


TRITON = "Pallas (Triton backend)"
MOSAIC = "Pallas (Mosaic GPU backend)"


def _one_chain(watch: _Stopwatch, weights: Weights, key: jax.Array,
               steps: int) -> dict[str, float | str]:
    """One chain: the fused kernels (Mosaic GPU, Triton) and the thread's
    while loop on the GPU; the best jitted loop and the while loop on the
    CPU."""
    cpu = jax.devices("cpu")[0]
    return {
        "gpu fused_scan": watch.time(fused, weights, key, steps,
                                     device_as="gpu fused_scan",
                                     needs=TRITON),
        PADDED_KERNEL: watch.time(fused_triton, weights, key, steps,
                                  device_as=PADDED_KERNEL, needs=TRITON),
        LATENCY_KERNEL: watch.time(chain_kernel.latency_kernel, weights,
                                   key, steps, device_as=LATENCY_KERNEL,
                                   needs=TRITON),
        "gpu while, traced bound": watch.time(
            while_traced, weights, key, jnp.int32(steps)),
        "cpu scan, softplus hoisted": watch.time(
            scan_hoisted, weights, key, steps, on=cpu),
        "cpu while, traced bound": watch.time(
            while_traced, weights, key, jnp.int32(steps), on=cpu),
    }


def _latency_kernel_error(weights: Weights, key: jax.Array,
                          steps: int) -> float | str:
    """The largest difference between the latency kernel's chain and the
    jitted scan's, both on this GPU (its tanh is approximate), or why
    there is none."""
    lacking = capability.lacking(TRITON)
    if lacking:
        return f"skipped: {TRITON} {lacking}"
    try:
        exact = scan_hoisted(weights, key, steps)
        fast = chain_kernel.latency_kernel(weights, key, steps)
        return float(jnp.max(jnp.abs(fast - exact)))
    except Exception as err:  # recorded, never hidden
        return f"failed: {type(err).__name__}: {err}"[:500]


def _many_chains(watch: _Stopwatch, weights: Weights, keys: jax.Array,
                 steps: int) -> dict[str, float | str]:
    """Many independent chains: vmap of the fused kernel, the fused
    kernels with chains side by side (Triton: 64 per program; Mosaic GPU:
    one per thread), and vmap of the best jitted loop on GPU and CPU."""
    cpu = jax.devices("cpu")[0]

    def chains_of(variant: Callable[..., jax.Array]) -> Callable[..., Any]:
        return jax.jit(lambda w, k: many_chains(variant, w, k, steps))

    def side_by_side(backend: Backend) -> Callable[..., Any]:
        return jax.jit(lambda w, k: fused_side_by_side(
            w, k, steps, backend=backend))

    return {
        "gpu fused_scan": watch.time(chains_of(fused), weights, keys,
                                     needs=TRITON),
        "gpu fused, 64 chains per program": watch.time(
            side_by_side("triton"), weights, keys, needs=TRITON),
        "gpu fused, one chain per thread": watch.time(
            side_by_side("mosaic"), weights, keys, needs=MOSAIC),
        "gpu scan, softplus hoisted": watch.time(
            chains_of(scan_hoisted), weights, keys),
        "cpu scan, softplus hoisted": watch.time(
            chains_of(scan_hoisted), weights, keys, on=cpu, times=3),
    }


def with_while_graphs(default_kinds: str) -> str | None:
    """The kinds of operations in command buffers with WHILE added to the
    default (``default_kinds`` as `helpers.xla.flag_registry.effective`
    gives them), so a whole while loop becomes one CUDA graph; None when
    the default is not known here."""
    if default_kinds.startswith("("):  # "(no CUDA plugin here)"
        return None
    kinds = [k for k in default_kinds.split(",") if k]
    return ",".join(kinds + [k for k in ("WHILE",) if k not in kinds])


def graph_settings(default_kinds: str) -> dict[str, dict[str, Any] | None]:
    """The command-buffer settings the chapter compares, as XLA compiler
    options of one compilation (``compile(compiler_options=...)``): graphs
    off, the default, the default with WHILE added, and the default kinds
    in graphs of any size (``xla_gpu_graph_min_graph_size`` 1, where the
    default forms a graph only from 5 operations). None for a setting that
    cannot be written here (the default kinds unknown)."""
    kinds = with_while_graphs(default_kinds)
    return {"graphs off": {"xla_gpu_enable_command_buffer": ""},
            "default": {},
            "default + WHILE": None if kinds is None else {
                "xla_gpu_enable_command_buffer": kinds},
            "smallest graphs": {"xla_gpu_graph_min_graph_size": 1}}


def measure_command_buffers(default_kinds: str, names: list[str], *,
                            steps: int | None = None,
                            repeat: int | None = None,
                            max_seconds: float | None = None
                            ) -> dict[str, list[dict[str, Any]]]:
    """`measure` of the variants ``names`` under each of `graph_settings`,
    each compiled with the setting's options, all in this process (a GPU
    machine's recording), in float32 (float64 takes the same path)."""
    steps, repeat = steps or dry_or(STEPS, 200), repeat or dry_or(20, 3)
    settings = graph_settings(default_kinds)
    if None in settings.values():
        raise ValueError(f"the default command-buffer kinds are not known "
                         f"({default_kinds}); read them with "
                         "helpers.xla.flag_registry.effective on this "
                         "machine.")
    return {label: measure(names, steps=steps, repeat=repeat,
                           dtypes=DTYPES[:1], compiler_options=options,
                           max_seconds=max_seconds)
            for label, options in settings.items()}
