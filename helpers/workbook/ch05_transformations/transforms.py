"""Chapter 5 (Seven transformations): each claim of the source as an
experiment that returns numbers.

The model everywhere is a small MLP, `predict(params, x)`; the sizes come
from the chapter (small on a CPU, larger on a GPU).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from helpers.measuring import bench, device_time
from helpers.xla import hlo

Params = dict[str, jax.Array]
# Cases to time in one profile (`device_time.measure_all`): a name for
# each, and its function and argument tuples.
Cases = dict[str, tuple[Callable[..., Any], list[tuple[Any, ...]]]]


MLP_DEPTH = 2  # the chapter's MLP: two square tanh layers


def init(key: jax.Array, width: int, depth: int = MLP_DEPTH) -> Params:
    """An MLP of ``depth`` square layers, scaled to keep tanh in range."""
    keys = jax.random.split(key, depth)
    return {f"w{i}": jax.random.normal(k, (width, width)) / np.sqrt(width)
            for i, k in enumerate(keys)}


def predict(params: Params, x: jax.Array) -> jax.Array:
    """tanh layers, one per weight."""
    for name in sorted(params):
        x = jnp.tanh(x @ params[name])
    return x


def loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean squared error of `predict`."""
    return jnp.mean((predict(params, x) - y) ** 2)


def sgd_step(params: Params, x: jax.Array, y: jax.Array,
             lr: float = 0.1) -> Params:
    """One step of gradient descent (the source's `sgd_step`)."""
    grads = jax.grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


# --- 1. jit: what retraces ---------------------------------------------

def retrace_table() -> pd.DataFrame:
    """Call one jitted function with a sequence of changes and count, from
    a Python side effect, which calls traced it again."""
    traces = []

    def scaled(x: jax.Array, power: int) -> jax.Array:
        traces.append(1)  # Python runs this only while tracing
        return x ** power

    f = jax.jit(scaled, static_argnames="power")
    calls = [
        ("first call", jnp.ones(4), 2),
        ("same shape and dtype, new values", jnp.arange(4.0), 2),
        ("new shape", jnp.ones(5), 2),
        ("new dtype", jnp.ones(4, jnp.int32), 2),
        ("new static value", jnp.ones(4), 3),
        ("static value seen before", jnp.ones(4), 2),
        ("a NumPy array instead of a jax.Array", np.ones(4, np.float32), 2),
    ]
    rows = []
    for what, x, power in calls:
        before = len(traces)
        f(x, power=power).block_until_ready()
        rows.append({"call": what, "traced again": len(traces) > before})
    return pd.DataFrame(rows)


def compile_vs_run(width: int, batch: int) -> dict[str, float | None]:
    """Seconds of the first call of a jitted `sgd_step` (trace, compile
    and run) and the median of later calls."""
    params = init(jax.random.key(0), width)
    x = jnp.ones((batch, width))
    timing = bench.benchmark(jax.jit(sgd_step), params, x, x, repeat=20)
    return {"first call s": timing.compile_s, "later calls s": timing.median}


def donation(width: int) -> dict[str, Any]:
    """The same step with and without ``donate_argnums=0``: the compiled
    module's input/output aliasing, whether the old parameters are gone,
    and how many bytes of arrays are alive after the step."""
    out = {}
    for donate in (False, True):
        params = init(jax.random.key(0), width)
        x = jnp.ones((8, width))
        # compiled once: the executable whose aliases are read is the one
        # that runs the step
        step = jax.jit(sgd_step, donate_argnums=0 if donate else ()).lower(
            params, x, x).compile()
        aliases = hlo.aliases(step.as_text())
        new = step(params, x, x)
        jax.block_until_ready(new)
        live = sum(a.nbytes for a in jax.live_arrays())
        out["donated" if donate else "kept"] = {
            "aliased outputs": len(aliases),
            "old params deleted": all(p.is_deleted()
                                      for p in params.values()),
            "live MB": live / 1e6}
        del params, new
    return out


# --- 2. vmap vs a Python loop ------------------------------------------

def example_loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """The loss of one example (the source's per-example loss)."""
    return jnp.mean((predict(params, x) - y) ** 2)


def vmap_vs_loop(width: int, batches: tuple[int, ...]) -> pd.DataFrame:
    """Per-example losses three ways: a Python loop calling a jitted
    per-example function, the same loop inside one jit, and `vmap`. For
    each batch size: kernels per batch (from the compiled HLO) and time.

    Each program is compiled once, and the executable whose HLO is read
    is the one timed (the loop of calls calls the jitted function, whose
    first call finds that executable in JAX's cache); every case is
    timed in one profile (`device_time.measure_all`)."""
    params = init(jax.random.key(0), width)
    one = jax.jit(example_loss)
    example = jnp.zeros(width)
    one_kernels = hlo.kernel_count(
        one.lower(params, example, example).compile().as_text())
    batched = jax.jit(jax.vmap(example_loss, in_axes=(None, 0, 0)))

    def looped(params: Params, xs: jax.Array, ys: jax.Array) -> jax.Array:
        return jnp.stack([example_loss(params, x, y)
                          for x, y in zip(xs, ys)])

    cases: Cases = {}
    rows = []
    for b in batches:
        xs = jax.random.normal(jax.random.key(b), (b, width))
        inside = jax.jit(looped).lower(params, xs, xs).compile()
        mapped = batched.lower(params, xs, xs).compile()
        versions: dict[str, tuple[Callable[..., Any], int]] = {
            "Python loop of jitted calls": (
                lambda xs=xs: [one(params, x, y) for x, y in zip(xs, xs)],
                b * one_kernels),
            "Python loop inside jit": (
                lambda xs=xs, inside=inside: inside(params, xs, xs),
                hlo.kernel_count(inside.as_text())),
            "vmap": (lambda xs=xs, mapped=mapped: mapped(params, xs, xs),
                     hlo.kernel_count(mapped.as_text())),
        }
        for name, (call, kernels) in versions.items():
            cases[f"{name}, batch {b}"] = (call, [()])
            rows.append({"batch": b, "version": name, "kernels": kernels})
    timed = device_time.measure_all(cases, repeat=10, profiled=3,
                                    max_seconds=2.0)
    return pd.DataFrame([{**row, **device_time.columns(timing)}
                         for row, timing in zip(rows, timed.values())])


# --- 3. scan vs an unrolled loop ----------------------------------------

def rnn_cell(w: jax.Array, h: jax.Array, x: jax.Array) -> jax.Array:
    """The source's RNN cell, without the output projection."""
    return jnp.tanh(w @ h + x)


def rnn_scan(w: jax.Array, h: jax.Array, xs: jax.Array) -> jax.Array:
    """All steps in one `lax.scan`: the body is compiled once."""
    def body(h: jax.Array, x: jax.Array) -> tuple[jax.Array, None]:
        return rnn_cell(w, h, x), None
    return jax.lax.scan(body, h, xs)[0]


def rnn_unrolled(w: jax.Array, h: jax.Array, xs: jax.Array) -> jax.Array:
    """A Python loop under jit: every step is traced and compiled."""
    for x in xs:
        h = rnn_cell(w, h, x)
    return h


def scan_vs_unrolled(width: int, lengths: tuple[int, ...]) -> pd.DataFrame:
    """Compile time and run time of both versions as the length grows,
    with the matrix products each compiled program holds."""
    w = jax.random.normal(jax.random.key(0), (width, width)) / np.sqrt(width)
    h = jnp.zeros(width)
    rows = []
    cases: Cases = {}
    for t in lengths:
        xs = jax.random.normal(jax.random.key(t), (t, width))
        for name, fn in (("scan", rnn_scan), ("unrolled", rnn_unrolled)):
            jitted = jax.jit(fn)
            start = time.perf_counter()
            compiled = jitted.lower(w, h, xs).compile()
            compile_s = time.perf_counter() - start
            cases[f"{name} {t}"] = (compiled, [(w, h, xs)])
            rows.append({"length": t, "version": name,
                         "products": hlo.source_products(compiled.as_text()),
                         "compile ms": compile_s * 1e3})
    # every compiled program timed in one profile
    timed = device_time.measure_all(cases, repeat=10, profiled=3)
    for row, timing in zip(rows, timed.values()):
        times = device_time.columns(timing)
        row.update({"run ms": times["ms"],
                    "run device ms": times["device ms"],
                    "run kernel ms": times["kernel ms"]})
    return pd.DataFrame(rows)


# --- 4. remat -----------------------------------------------------------

BLOCKS = 6  # the source's six residual blocks


def block(params: Params, x: jax.Array) -> jax.Array:
    """The source's block: gelu(x @ w1) @ w2."""
    return jax.nn.gelu(x @ params["w1"]) @ params["w2"]


def deep_loss(params: Params, x: jax.Array, checkpoint: bool,
              layers: int = BLOCKS) -> jax.Array:
    """Six residual blocks sharing weights, as in the source; with
    ``checkpoint`` each block is wrapped in `jax.checkpoint` (remat)."""
    step = jax.checkpoint(block) if checkpoint else block
    for _ in range(layers):
        x = x + step(params, x)
    return jnp.mean(x ** 2)


def remat_table(width: int, hidden: int, batch: int) -> pd.DataFrame:
    """Peak temporary memory (from ``memory_analysis()``) and time of the
    gradient, with and without checkpointing each block."""
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    params = {"w1": jax.random.normal(k1, (width, hidden)) / np.sqrt(width),
              "w2": jax.random.normal(k2, (hidden, width)) / np.sqrt(hidden)}
    x = jax.random.normal(k3, (batch, width))
    rows, cases = [], {}
    for checkpoint in (False, True):
        grad = jax.jit(jax.grad(
            lambda p, x, c=checkpoint: deep_loss(p, x, c)))
        compiled = grad.lower(params, x).compile()
        memory = compiled.memory_analysis()
        if memory is None:
            raise RuntimeError("this backend reports no memory analysis "
                               "of a compiled program.")
        cases[f"remat={checkpoint}"] = (compiled, [(params, x)])
        rows.append({"remat": checkpoint,
                     "temp MB": memory.temp_size_in_bytes / 1e6,
                     "dots": hlo.matrix_products(compiled.as_text())})
    # both steps timed in one profile
    timed = device_time.measure_all(cases, repeat=10, profiled=3)
    frame = pd.DataFrame([{**row, **device_time.columns(timing)}
                          for row, timing in zip(rows, timed.values())])
    return frame[["remat", "temp MB", "ms", "device ms", "kernel ms",
                  "dots"]].set_index("remat")


def _remat_compiled(width: int, hidden: int, batch: int, checkpoint: bool
                    ) -> Any:
    """The gradient of `deep_loss`, compiled for an H100 (run through
    `helpers.xla.crosscompile.run`): no arrays are made, only their shapes."""
    from helpers.xla import crosscompile
    params = {"w1": jax.ShapeDtypeStruct((width, hidden), jnp.float32),
              "w2": jax.ShapeDtypeStruct((hidden, width), jnp.float32)}
    x = jax.ShapeDtypeStruct((batch, width), jnp.float32)
    return crosscompile.compile_for_gpu(
        jax.grad(lambda p, x: deep_loss(p, x, checkpoint)), params, x)


def _peak_bytes(compiled: Any) -> int:
    """Arguments, outputs and temporaries of one call, from XLA's buffer
    assignment (outputs that reuse an argument's buffer count once)."""
    m = compiled.memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes
            + m.temp_size_in_bytes - m.alias_size_in_bytes)


def scan_products_for_gpu(width: int, lengths: tuple[int, ...]
                         ) -> dict[str, int]:
    """`scan_vs_unrolled`'s products column as XLA:GPU compiles it for an
    H100 (run through `helpers.xla.crosscompile.run`), keyed
    ``'<version> <length>'``. There each step's matrix-vector product is a
    reduction fusion, not a dot: `hlo.source_products` still finds it."""
    from helpers.xla import crosscompile
    w = jax.ShapeDtypeStruct((width, width), jnp.float32)
    h = jax.ShapeDtypeStruct((width,), jnp.float32)
    counts = {}
    for t in lengths:
        xs = jax.ShapeDtypeStruct((t, width), jnp.float32)
        for name, fn in (("scan", rnn_scan), ("unrolled", rnn_unrolled)):
            compiled = crosscompile.compile_for_gpu(fn, w, h, xs)
            counts[f"{name} {t}"] = hlo.source_products(compiled.as_text())
    return counts


def remat_for_gpu(width: int, hidden: int, batch: int) -> list[dict]:
    """`remat_table`'s compile-time columns as XLA:GPU compiles them for
    an H100, with and without checkpointing: temporary memory and matrix
    products at ``batch``, and the bytes each example adds to the step's
    peak (from compiling at ``batch`` and ``2 * batch``)."""
    rows = []
    for checkpoint in (False, True):
        compiled = _remat_compiled(width, hidden, batch, checkpoint)
        double = _remat_compiled(width, hidden, 2 * batch, checkpoint)
        per_example = (_peak_bytes(double) - _peak_bytes(compiled)) / batch
        rows.append({"remat": checkpoint, "temp MB":
                     compiled.memory_analysis().temp_size_in_bytes / 1e6,
                     "dots": hlo.matrix_products(compiled.as_text()),
                     "bytes per example": per_example})
    return rows


def remat_passes(width: int = 64, hidden: int = 256, batch: int = 32,
                 on_gpu: bool = False) -> dict[str, Any]:
    """Where the compiler removes remat's optimisation barriers, and what
    that does to the recomputed products, read from XLA's per-pass dump.

    Returns the pass (step number and pipeline) that removed the barriers,
    and the table of matrix products after each pass that changed their
    number. ``on_gpu`` compiles for an H100 (run it through
    `helpers.xla.crosscompile.run`); otherwise for this machine's own
    backend (``jax.devices()[0].platform``).
    """
    from helpers.xla import crosscompile, xla_dump
    spec = {"w1": jax.ShapeDtypeStruct((width, hidden), jnp.float32),
            "w2": jax.ShapeDtypeStruct((hidden, width), jnp.float32)}
    x = jax.ShapeDtypeStruct((batch, width), jnp.float32)
    grad = jax.grad(lambda p, x: deep_loss(p, x, True))
    if on_gpu:
        folder = tempfile.mkdtemp(prefix="xla_dump_")
        crosscompile.compile_for_gpu(grad, spec, x, compiler_options={
            "xla_dump_to": folder, "xla_dump_hlo_pass_re": ".*"})
        dump = xla_dump.Dump(Path(folder), None)
    else:
        dump = xla_dump.compile_with_dump(jax.jit(grad).lower(spec, x),
                                          passes=True)
    barriers = dump.pass_counts("opt-barrier")
    removed = barriers[barriers["count"] == 0]
    return {"barriers removed at": (
                None if removed.empty else
                {"step": int(removed.index[0]),
                 "pipeline": removed.iloc[0]["pipeline"],
                 "pass": removed.iloc[0]["after pass"]}),
            "products": dump.pass_counts("dot").reset_index().to_dict(
                "records")}


