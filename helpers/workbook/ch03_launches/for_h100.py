"""Chapter 3's variants as XLA:GPU compiles them for an H100, on any
machine: the kernels each step launches, which loop bodies become CUDA
graphs, and the fused kernels' Pallas backends.

Each ``*_for_gpu`` function is a child function for
`helpers.xla.crosscompile.run`: it runs in a fresh process whose JAX has
the CUDA plugin, compiles without running, and returns what it read. The
variants themselves live in `helpers.workbook.ch03_launches.variants`;
what a GPU visit measures, in `helpers.workbook.ch03_launches.on_gpu`.
"""

from __future__ import annotations

import functools
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp

from helpers.pallas.backends import Backend
from helpers.pallas.scan import fused_scan
from helpers.workbook.ch03_launches.variants import (
    STEPS,
    VARIANTS,
    Weights,
    fused_side_by_side,
    fused_triton,
    hoisted_step,
    init_weights,
    initial_state,
    launches_in_text,
    noise_for,
    positive,
    while_traced,
)
from helpers.xla import hlo


def launches_for_gpu(steps: int = STEPS) -> list[dict[str, Any]]:
    """Kernels per step of every variant as XLA:GPU compiles it for an
    H100 (run through `helpers.xla.crosscompile.run`), float32."""
    from helpers.xla import crosscompile
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
                     "launches per step": launches_in_text(text, steps),
                     "custom calls": sorted({c.target for c in
                                             hlo.custom_calls(text)})})
    return rows


def graphs_for_gpu(steps: int = STEPS, min_graph_size: int | None = None
                  ) -> list[dict[str, Any]]:
    """Whether each variant's loop body runs as one CUDA graph on an
    H100: XLA:GPU's thunk sequence, compiled here (run through
    `helpers.xla.crosscompile.run`), float32. ``min_graph_size`` sets
    ``--xla_gpu_graph_min_graph_size`` for the compilation (None: the
    default), the fewest steps XLA:GPU puts into a graph.

    Returns:
        One row per variant: its loop body's top-level steps (a body that
        is one CUDA graph has one, the graph), and whether it is a graph;
        None for both where the variant has no loop.
    """
    from helpers.xla import crosscompile, xla_dump
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


def fused_cases_for_gpu() -> dict[str, Any]:
    """A child function (`helpers.xla.crosscompile.run`): the steps the GPU
    tests run through `fused_scan` (a 16x16 tanh layer, its gradient, the
    source's 1 -> 12 -> 1 softplus MLP in float32 and float64), each
    compiled for an H100: the backend chosen and the custom calls, or the
    compiler's error. The dry run of `tests/gpu/test_fused_on_gpu.py`:
    ``mosaic_gpu_v2`` is Mosaic GPU's custom call, ``__gpu$xla.gpu.triton``
    Triton's."""
    from helpers.xla import crosscompile
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


def side_by_side_for_gpu(chains: int = 10_000, steps: int = STEPS,
                        backend: Backend = "triton") -> dict[str, Any]:
    """A child function (`helpers.xla.crosscompile.run`): `fused_side_by_side`
    compiled for an H100 with ``backend``, with its custom calls, and (for
    Triton) the grid and warps read from the call's configuration."""
    from helpers.xla import crosscompile
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


def chain_loops_for_gpu(steps: int = STEPS) -> dict[str, Any]:
    """A child function (`helpers.xla.crosscompile.run`): the loop of each
    one-chain kernel in the PTX XLA:GPU writes for an H100, float32: the
    instructions of one iteration and those on its critical path, by kind
    (`helpers.xla.ptx`). ``padded kernel`` is `fused_scan`'s Triton
    kernel, which the chapter measures; ``latency kernel`` is
    `chain_kernel.one_chain`."""
    from helpers.workbook.ch03_launches import chain_kernel
    from helpers.xla import crosscompile, ptx, xla_dump
    weights, key = init_weights(jax.random.key(0)), jax.random.key(1)

    kernels = {"padded kernel": lambda w, k: fused_triton(w, k, steps),
               "latency kernel": lambda w, k: chain_kernel.latency_kernel(
                   w, k, steps)}
    found = {}
    for name, fn in kernels.items():
        folder = tempfile.mkdtemp(prefix="xla_dump_")
        crosscompile.compile_for_gpu(fn, weights, key, compiler_options={
            "xla_dump_to": folder, **xla_dump.PTX_OPTIONS})
        loop = ptx.hottest_loop(xla_dump.Dump(Path(folder), None).ptx())
        path = ptx.critical_path(loop)
        found[name] = {"loop": ptx.by_kind(loop), "path": ptx.by_kind(path),
                       "path length": len(path),
                       "path opcodes": [i.opcode for i in path]}
    return found


def fused_backends_for_gpu(steps: int = STEPS) -> dict[str, Any]:
    """A child function (`helpers.xla.crosscompile.run`): `fused` compiled for
    an H100 with each Pallas backend, its custom calls and kernels, and
    which backend `fused_scan` picks for the H100 by itself."""
    from helpers.pallas import backends
    from helpers.xla import crosscompile
    weights, key = init_weights(jax.random.key(0)), jax.random.key(1)
    pos = positive(weights)
    found: dict[str, Any] = {"chosen": backends.choose(None, None).backend}
    for backend in backends.BACKENDS:
        def run(w: Weights, k: jax.Array,
                b: backends.Backend = backend) -> jax.Array:
            noise = noise_for(k, steps, w["w_in"].dtype)
            return fused_scan(hoisted_step(pos), initial_state(w), noise,
                              backend=b)[0]
        text = crosscompile.compile_for_gpu(run, weights, key).as_text()
        found[backend] = {
            "custom calls": [c.target for c in hlo.custom_calls(text)],
            "kernels": hlo.kernel_count(text)}
    return found
