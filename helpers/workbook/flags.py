"""Chapter 6 (XLA flags and PGLE): programs compiled and timed in fresh
processes under different ``XLA_FLAGS``, and the chapter's exercise.

XLA reads ``XLA_FLAGS`` once, when a process starts its backend, so each
setting runs in its own child: ``python -m helpers.workbook.flags NAME``
compiles and times program ``NAME`` and prints one line of JSON. Per
compilation, `jax.jit(...).lower(...).compile(compiler_options=...)` sets
the same options without a new process.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp

from helpers import bench, env, hlo
from helpers.exercises import Exercise, Outcome, learner_error

SIZES = {"cpu": 256, "gpu": 4096}


def _matmul_epilogue(n: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A bf16 matmul followed by bias and gelu: the case where a Triton
    GEMM can fuse the epilogue that a cuBLAS call cannot."""
    k1, k2 = jax.random.split(jax.random.key(0))
    x = jax.random.normal(k1, (n, n), jnp.bfloat16)
    w = jax.random.normal(k2, (n, n), jnp.bfloat16)
    return jax.jit(lambda x, w: jax.nn.gelu(x @ w + 1.0)), (x, w)


def _small_kernels(n: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A loop of 100 steps of a few tiny kernels each: launch-bound, the
    case command buffers (CUDA graphs) are for."""
    w = 0.5 * jnp.eye(8)

    def body(i: Any, x: jax.Array) -> jax.Array:
        return jnp.tanh(x @ w) + 0.1 * jnp.sin(x)
    x = jnp.ones((n // 32, 8))
    return jax.jit(lambda x: jax.lax.fori_loop(0, 100, body, x)), (x,)


def _reduction(n: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """Elementwise work then a column sum: one fusion or several."""
    return (jax.jit(lambda x: jnp.sum(jnp.tanh(x) * 2 + 1, axis=0)),
            (jnp.ones((n, n)),))


PROGRAMS = {"matmul_epilogue": _matmul_epilogue,
            "small_kernels": _small_kernels, "reduction": _reduction}


def facts(text: str) -> dict[str, Any]:
    """What a compiled module launches: fusion kinds, library calls."""
    kinds = collections.Counter(f.kind for f in hlo.fusions(text))
    calls = collections.Counter(c.target for c in hlo.custom_calls(text))
    return {"fusion kinds": dict(kinds), "custom calls": dict(calls),
            "kernels": hlo.kernel_count(text)}


def measure(name: str, repeat: int = 20) -> dict[str, Any]:
    """Compile program ``name`` here, time it, and read its module."""
    platform = "gpu" if jax.default_backend() == "gpu" else "cpu"
    fn, args = PROGRAMS[name](SIZES[platform])
    start = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_s = time.perf_counter() - start
    timing = bench.benchmark(compiled, *args, repeat=repeat)
    return {"program": name, "compile s": compile_s,
            "median s": timing.median, **facts(compiled.as_text())}


def in_child(name: str, xla_flags: str = "",
             environ: dict[str, str] | None = None, timeout: float = 600
             ) -> dict[str, Any]:
    """`measure` in a fresh process with ``XLA_FLAGS=xla_flags``.

    Returns the measurement, or ``{"error": ...}`` with the end of the
    child's output when it failed (an unknown flag aborts the child).
    """
    if name not in PROGRAMS:
        raise ValueError(f"unknown program {name!r}; choose one of "
                         f"{sorted(PROGRAMS)}.")
    child_env = {**os.environ, **(environ or {}), "XLA_FLAGS": xla_flags}
    done = subprocess.run(
        [sys.executable, "-m", "helpers.workbook.flags", name],
        env=child_env, capture_output=True, text=True, timeout=timeout,
        cwd=env.repo_root())
    if done.returncode != 0:
        return {"error": (done.stdout + done.stderr)[-1500:],
                "returncode": done.returncode}
    return json.loads(done.stdout.splitlines()[-1])


GPU_SETTINGS = {
    "matmul_epilogue": ["", "--xla_gpu_triton_gemm_any=true",
                        "--xla_gpu_autotune_level=0"],
    "small_kernels": ["", "--xla_gpu_enable_command_buffer=",
                      "--xla_gpu_enable_latency_hiding_scheduler=true"],
}


def measure_on_gpu() -> dict[str, Any]:
    """Every GPU setting of the chapter, each in its own process, and
    automatic PGLE on the small-kernel loop."""
    rows = [{"flags": flags or "(none)", **in_child(name, flags)}
            for name, settings in GPU_SETTINGS.items()
            for flags in settings]
    pgle = in_child("small_kernels", "", environ={
        "JAX_ENABLE_PGLE": "true", "JAX_PGLE_PROFILING_RUNS": "3"})
    return {"rows": rows, "auto_pgle": pgle}


# --- Exercise 6.1: find the option ------------------------------------------

def options_starter() -> dict[str, Any]:
    """Return compiler options under which XLA:CPU compiles the reduction
    program to its own loop fusions, with no library (kCustom) fusion."""
    return {}


def options_solution() -> dict[str, Any]:
    """An empty list of YNNPACK fusion types leaves every fusion to XLA."""
    return {"xla_cpu_experimental_ynn_fusion_type": ""}


def _own_fusions(make_options: Callable[[], dict[str, Any]]) -> Outcome:
    name = "the CPU module has kLoop fusions and no kCustom fusion"
    hint = ("Look through helpers.flag_registry.table(): one CPU flag "
            "decides which operations go to a library as one kCustom "
            "fusion. Pass it without the leading '--'.")
    fn, args = _reduction(64)
    cpu = jax.devices("cpu")[0]
    args = jax.device_put(args, cpu)
    try:
        text = fn.lower(*args).compile(
            compiler_options=make_options()).as_text()
    except Exception as err:  # an unknown option is the learner's mistake
        return learner_error(name, err, hint)
    kinds = facts(text)["fusion kinds"]
    if kinds.get("kCustom") or not kinds.get("kLoop"):
        return Outcome(name, "fail", f"fusion kinds: {kinds}", hint)
    return Outcome(name, "pass", f"fusion kinds: {kinds}")


FIND_THE_OPTION = Exercise(
    "Exercise 6.1: find the option that changes the module",
    [_own_fusions],
    hints=["compile(compiler_options={...}) takes XLA flag names without "
           "the leading '--'.",
           "Its name mentions ynn, the library XLA:CPU hands fusions to."])


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
