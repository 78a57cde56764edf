"""Chapter 6 (XLA flags and PGLE): programs compiled and timed in fresh
processes under different ``XLA_FLAGS``, and the chapter's exercise.

XLA reads ``XLA_FLAGS`` once, when a process starts its backend, so each
setting runs in its own child (`helpers.xla.fresh_process`), where `measure`
compiles and times a program and returns what it found. Per compilation,
`jax.jit(...).lower(...).compile(compiler_options=...)` sets the same options
without a new process.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from typing import Any

import jax
import jax.numpy as jnp

from helpers.measuring import device_time
from helpers.xla import fresh_process, hlo

SIZES = {"cpu": 256, "gpu": 4096}
# The small-kernel loop's trip count.
LOOP_STEPS = 100


def _matmul_epilogue(n: int) -> tuple[jax.stages.Wrapped, tuple[Any, ...]]:
    """A bf16 matmul followed by bias and gelu: the case where a Triton
    GEMM can fuse the epilogue that a cuBLAS call cannot."""
    k1, k2 = jax.random.split(jax.random.key(0))
    x = jax.random.normal(k1, (n, n), jnp.bfloat16)
    w = jax.random.normal(k2, (n, n), jnp.bfloat16)
    return jax.jit(lambda x, w: jax.nn.gelu(x @ w + 1.0)), (x, w)


def _small_kernels(n: int) -> tuple[jax.stages.Wrapped, tuple[Any, ...]]:
    """A loop of `LOOP_STEPS` steps of several tiny kernels each, enough
    for XLA:GPU to run each step as one CUDA graph: launch-bound, the case
    command buffers (CUDA graphs) are for."""
    w = 0.5 * jnp.eye(8)

    def body(i: Any, x: jax.Array) -> jax.Array:
        h = jnp.tanh(x @ w)
        h = h @ w.T + 0.1 * jnp.sin(x)
        h = h - h.max(axis=0)
        return jnp.cumsum(h, axis=0) * 0.01 + h.mean(axis=1, keepdims=True)
    x = jnp.ones((n // 32, 8))
    return jax.jit(lambda x: jax.lax.fori_loop(0, LOOP_STEPS, body, x)), (x,)


def reduction_program(n: int
                      ) -> tuple[jax.stages.Wrapped, tuple[Any, ...]]:
    """Elementwise work then a column sum: one fusion or several."""
    return (jax.jit(lambda x: jnp.sum(jnp.tanh(x) * 2 + 1, axis=0)),
            (jnp.ones((n, n)),))


PROGRAMS = {"matmul_epilogue": _matmul_epilogue,
            "small_kernels": _small_kernels, "reduction": reduction_program}


def measure(name: str, repeat: int = 20) -> dict[str, Any]:
    """Compile program ``name`` here, time it by the device's clock (the
    wall clock and the spread beside it), and read its module: what it
    launches, and a digest of its optimised HLO, so two settings that
    compile the same program can be told apart from two that do not."""
    platform = "gpu" if jax.default_backend() == "gpu" else "cpu"
    fn, args = PROGRAMS[name](SIZES[platform])
    start = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_s = time.perf_counter() - start
    text = compiled.as_text() or ""
    return {"program": name, "compile s": compile_s,
            **_timed(compiled, args, repeat), "module": module_digest(text),
            **hlo.launch_summary(text)}


def _timed(fn: Any, args: tuple[Any, ...], repeat: int,
           warmup: int = 3) -> dict[str, float]:
    """``median s`` by the device's clock, with ``wall s``, the spread
    (IQR over median) of the device times, and the ``wall spread`` of the
    wall times, which judges a difference read by the wall clock."""
    timing = device_time.measure(fn, *args, repeat=repeat, warmup=warmup)
    return {"median s": timing.median, "wall s": timing.wall.median,
            "spread": timing.span.rel_spread,
            "wall spread": timing.wall.rel_spread}


def module_digest(text: str) -> str:
    """A short digest of optimised HLO text, without its metadata (source
    lines and op names), which differ between two spellings of the same
    program: equal digests, the same compiled program."""
    bare = re.sub(r",? metadata=\{[^}]*\}", "", text)
    return hashlib.sha256(bare.encode()).hexdigest()[:12]


def modules_for_gpu(name: str, settings: dict[str, dict[str, Any]]
                   ) -> dict[str, str]:
    """The digest of program ``name``'s optimised module compiled for an
    H100 at the GPU's size under each setting's compiler options (run
    through `helpers.xla.crosscompile.run`): equal digests, the same program.
    Settings whose effect needs the device (autotuning) compile alike
    here by construction."""
    from helpers.xla import crosscompile
    fn, args = PROGRAMS[name](SIZES["gpu"])
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    return {label: module_digest(crosscompile.compile_for_gpu(
        fn, *shapes, compiler_options=options).as_text() or "")
        for label, options in settings.items()}


def library_calls_for_gpu(name: str, options: dict[str, Any]
                          ) -> dict[str, Any]:
    """Program ``name`` compiled for an H100 at the GPU's size under the
    compiler ``options`` (run through `helpers.xla.crosscompile.run`): its
    fusion kinds and the library calls (custom calls: cuBLAS, cuDNN) its
    module makes, as `helpers.xla.hlo.launch_summary` counts them."""
    from helpers.xla import crosscompile
    fn, args = PROGRAMS[name](SIZES["gpu"])
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    text = crosscompile.compile_for_gpu(fn, *shapes,
                                        compiler_options=options).as_text()
    summary = hlo.launch_summary(text or "")
    return {"fusion kinds": summary["fusion kinds"],
            "custom calls": summary["custom calls"]}


def loop_body_for_gpu(name: str) -> dict[str, Any]:
    """How XLA:GPU launches program ``name``'s loop body on an H100, read
    from its thunk sequence (run through `helpers.xla.crosscompile.run`):
    the body's operations (kernels and copies, inside a graph or not),
    whether it runs as one CUDA graph, and the fewest operations XLA:GPU
    puts into a graph (``--xla_gpu_graph_min_graph_size``, as compiled).
    """
    import tempfile
    from pathlib import Path

    from helpers.xla import crosscompile, xla_dump
    fn, args = PROGRAMS[name](SIZES["gpu"])
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    with tempfile.TemporaryDirectory() as folder:
        compiled = crosscompile.compile_for_gpu(
            fn, *shapes, compiler_options={"xla_dump_to": folder})
        dump = xla_dump.Dump(Path(folder), compiled)
        sequence = dump.thunk_sequence()
        fewest = dump.debug_options().get("xla_gpu_graph_min_graph_size")
    bodies = xla_dump.loop_bodies(sequence)
    if len(bodies) != 1:
        raise ValueError(f"{name} has {len(bodies)} loops; one expected.")
    return {"body operations": body_operations(sequence),
            "body is a CUDA graph": bodies[0].in_graph,
            "fewest in a graph": int(str(fewest))}


def body_operations(sequence: list[str]) -> int:
    """The operations of a thunk sequence's one loop body, at any depth:
    a graph (``kCommandBuffer``) counts by what it holds.

    Example:
        >>> body_operations(["kWhile", "condition:", "    kCustomKernel c",
        ...                  "  body:", "    kCommandBuffer",
        ...                  "        kCustomKernel a", "        kCopy",
        ...                  "kCopy"])
        2
    """
    at = next(i for i, line in enumerate(sequence) if line.strip() == "body:")
    depth = len(sequence[at]) - len(sequence[at].lstrip())
    count = 0
    for line in sequence[at + 1:]:
        if len(line) - len(line.lstrip()) <= depth:
            break
        count += not line.strip().startswith("kCommandBuffer") \
            and not line.rstrip().endswith(":")
    return count


def in_child(name: str, xla_flags: str = "",
             environ: dict[str, str] | None = None, timeout: float = 600
             ) -> dict[str, Any]:
    """`measure` in a fresh process with ``XLA_FLAGS=xla_flags``.

    Raises:
        helpers.xla.fresh_process.ChildFailed: the child failed (an
            unknown flag aborts it); the exception carries its output.
    """
    if name not in PROGRAMS:
        raise ValueError(f"unknown program {name!r}; choose one of "
                         f"{sorted(PROGRAMS)}.")
    return fresh_process.call(measure, name, timeout=timeout,
                      env={**(environ or {}), "XLA_FLAGS": xla_flags})


COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def _config(name: str) -> Any:
    """A JAX option's value (these are missing from jax's type stubs)."""
    return getattr(jax.config, name)


def measure_jit(name: str, calls: int = 5, repeat: int = 20
                ) -> dict[str, Any]:
    """Program ``name`` called through its plain ``jax.jit`` function, the
    only way JAX's automatic PGLE works (it ignores ``lower().compile()``):
    ``calls`` untimed calls, then ``repeat`` timed ones.

    With ``JAX_ENABLE_PGLE`` set, JAX profiles the first
    ``JAX_PGLE_PROFILING_RUNS`` calls of a program compiled with command
    buffers off, then compiles it again with the measured latencies; the
    ``compilations`` count (from `jax.monitoring`) shows whether that
    second compilation happened.
    """
    runs = _config("jax_pgle_profiling_runs")
    if calls <= runs:
        raise ValueError(f"calls={calls} must exceed JAX_PGLE_PROFILING_RUNS"
                         f" ({runs}), or "
                         "automatic PGLE never recompiles before timing.")
    events: list[str] = []

    def count(event: str, duration_secs: float, **kwargs: str | int) -> None:
        if event == COMPILE_EVENT:
            events.append(event)

    platform = "gpu" if jax.default_backend() == "gpu" else "cpu"
    fn, args = PROGRAMS[name](SIZES[platform])
    jax.block_until_ready(args)  # their own compilations are not counted
    jax.monitoring.register_event_duration_secs_listener(count)
    for _ in range(calls):
        jax.block_until_ready(fn(*args))
    return {"program": name, "pgle": _config("jax_enable_pgle"),
            "profiling runs": runs,
            "compilations": len(events),
            **_timed(fn, args, repeat, warmup=0)}


GPU_SETTINGS = {
    # Triton for every GEMM is the default (`helpers.xla.flag_registry`), so
    # the setting to compare is turning it off.
    "matmul_epilogue": ["", "--xla_gpu_triton_gemm_any=false",
                        "--xla_gpu_autotune_level=0"],
    "small_kernels": ["", "--xla_gpu_enable_command_buffer=",
                      "--xla_gpu_enable_latency_hiding_scheduler=true"],
}
PGLE = {"JAX_ENABLE_PGLE": "true", "JAX_PGLE_PROFILING_RUNS": "3"}


# The same program in a second process, with nothing changed: the run to
# run noise a setting's difference must exceed to count.
AGAIN = "(none), again"
# XLA:GPU's autotuner times candidate kernels per fusion and keeps the
# fastest: a close race can end differently in another process, and the
# module's digest with it. One cache folder per program pins the choices
# (XLA writes each fusion's result there and later processes load it).
PIN = "--xla_gpu_per_fusion_autotune_cache_dir="


def measure_on_gpu(settings: dict[str, list[str]] | None = None, *,
                   repeat: int = 20) -> dict[str, Any]:
    """Every GPU setting of the chapter, each in its own process, with
    the default run twice (`AGAIN`: the noise floor between processes);
    and automatic PGLE on the small-kernel loop, without it (twice) and
    with it, all through plain ``jax.jit`` calls. A setting whose child
    fails gets a row with the error instead of stopping the others.

    The processes of one program share one autotune cache (`PIN`): the
    first autotunes each fusion and every later one loads its choices, so
    the default compiles the same module twice and a setting's digest
    differs only where the setting changed the program."""
    rows = []
    for name, flag_list in (settings or GPU_SETTINGS).items():
        with tempfile.TemporaryDirectory() as cache:
            for label, flags in [("", ""), (AGAIN, "")] + [
                    (flags, flags) for flags in flag_list if flags]:
                try:
                    row = in_child(name, f"{flags} {PIN}{cache}".strip())
                except fresh_process.ChildFailed as err:
                    row = {"program": name, "error": err.reason}
                rows.append({"flags": label or "(none)", **row})
    auto_pgle = {label: fresh_process.call(measure_jit, "small_kernels", 5,
                                           repeat, env=environ)
                 for label, environ in (("without", {}),
                                        ("without, again", {}),
                                        ("with", PGLE))}
    return {"rows": rows, "auto_pgle": auto_pgle}
