"""Chapter 5 (Seven transformations), continued: data and model
parallelism in today's APIs, `value_and_grad(has_aux=True)`, and matmul
precision."""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from helpers.measuring import device_time
from helpers.multi_device import meshes
from helpers.workbook.ch05_transformations.transforms import (
    Cases,
    Params,
    init,
    loss,
    predict,
    sgd_step,
)
from helpers.xla import hlo

# --- 5. data and model parallelism, today --------------------------------

def pmean_step(params: Params, x: jax.Array, y: jax.Array,
               lr: float = 0.1) -> tuple[Params, jax.Array]:
    """The source's pmap step, body unchanged: per-device loss and
    gradients, averaged over the axis ``'d'`` with `lax.pmean`."""
    value, grads = jax.value_and_grad(loss)(params, x, y)
    value = jax.lax.pmean(value, "d")
    grads = jax.lax.pmean(grads, "d")
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), value


def shard_map_step(params: Params, x: jax.Array, y: jax.Array,
                   lr: float = 0.1) -> tuple[Params, jax.Array]:
    """The same step written for `shard_map`: average the *loss* over
    devices, then differentiate. shard_map knows the parameters are the
    same on every device, so their gradient is summed over devices by the
    transformation itself; a second `pmean` of the gradients is not
    needed (and, after the automatic sum, would not undo it)."""
    def global_loss(p: Params) -> jax.Array:
        return jax.lax.pmean(loss(p, x, y), "d")

    value, grads = jax.value_and_grad(global_loss)(params)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), value


def parallel_versions(mesh: jax.sharding.Mesh, width: int, batch: int
                      ) -> pd.DataFrame:
    """The source's data-parallel step as `shard_map` (its pmap body) and
    as `jit` on sharded arrays, and its pjit model-parallel forward as
    `jit` with a 2-D mesh: collectives compiled and agreement with one
    device."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    def put(value: Any, spec: Any) -> Any:
        return jax.device_put(value, NamedSharding(mesh, spec))

    flat = jax.sharding.Mesh(mesh.devices.reshape(-1), ("d",))
    params = init(jax.random.key(0), width)
    x = jax.random.normal(jax.random.key(1), (batch, width))
    one = meshes.on_one_device(mesh, (params, x))
    want_step = jax.jit(sgd_step)(*one, one[1])

    def on_devices(step: Callable[..., Any]) -> Callable[..., Any]:
        return jax.jit(jax.shard_map(step, mesh=flat,
                                     in_specs=(P(), P("d"), P("d")),
                                     out_specs=(P(), P())))

    on_flat = [jax.device_put(v, NamedSharding(flat, s))
               for v, s in ((params, P()), (x, P("d")))]
    by_jit = jax.jit(sgd_step)
    on_grid = [put(params, P()), put(x, P(("dp", "mp")))]
    model_parallel = jax.jit(predict)
    split = [put(params, P(None, "mp")), put(x, P("dp"))]
    rows: list[tuple[str, Any, Any, Callable[[Any], Any], Any]] = [
        ("the pmap body, verbatim in shard_map", on_devices(pmean_step),
         (*on_flat, on_flat[1]), lambda out: out[0], want_step),
        ("shard_map, pmean of the loss", on_devices(shard_map_step),
         (*on_flat, on_flat[1]), lambda out: out[0], want_step),
        ("jit on a batch-sharded array", by_jit, (*on_grid, on_grid[1]),
         lambda out: out, want_step),
        ("pjit example: jit, weights over 'mp', batch over 'dp'",
         model_parallel, split, lambda out: out, jax.jit(predict)(*one)),
    ]
    table = []
    for name, fn, args, pick, want in rows:
        got = pick(fn(*args))
        same = all(np.allclose(g, w, rtol=1e-4, atol=1e-6) for g, w in
                   zip(jax.tree.leaves(got), jax.tree.leaves(want)))
        kinds = [c.kind for c in hlo.collectives(fn, *args)]
        table.append({"version": name, "collectives": ", ".join(
            f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds)),
            "matches one device": same,
            "update / one device's": _update_ratio(params, got, want)
            if isinstance(got, dict) else float("nan")})
    return pd.DataFrame(table).set_index("version")


def _update_ratio(params: Params, got: Params, want: Params) -> float:
    """How large a step's change of the first weight is, relative to the
    single-device step's (1.0 when they agree)."""
    name = sorted(params)[0]
    done = np.asarray(got[name] - params[name])
    wanted = np.asarray(want[name] - params[name])
    return float(np.sum(done * wanted) / np.sum(wanted * wanted))


def api_status() -> pd.DataFrame:
    """Which of the source's APIs the installed JAX still has, and what
    replaces each."""
    import importlib
    import warnings

    def has(module: str, name: str) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return hasattr(importlib.import_module(module), name)
            except ImportError:
                return False

    rows = [("jax.tree_map", has("jax", "tree_map"), "jax.tree.map"),
            ("jax.pmap", has("jax", "pmap"),
             "jax.jit with NamedSharding, or jax.shard_map"),
            ("jax.experimental.pjit.pjit",
             has("jax.experimental.pjit", "pjit"),
             "jax.jit (in_shardings=, out_shardings=)"),
            ("jax.experimental.shard_map",
             has("jax.experimental", "shard_map"), "jax.shard_map"),
            ("jax.random.PRNGKey", has("jax.random", "PRNGKey"),
             "jax.random.key (typed keys)"),
            ("jax.remat", has("jax", "remat"), "jax.checkpoint")]
    importable = f"still importable in jax {jax.__version__}"
    return pd.DataFrame(rows, columns=["older API", importable,
                                       "use instead"])


# --- 6. value_and_grad with has_aux ---------------------------------------

def loss_with_aux(params: Params, x: jax.Array, y: jax.Array
                  ) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The source's loss: returns (loss, metrics)."""
    pred = predict(params, x)
    mse = jnp.mean((pred - y) ** 2)
    return mse, {"mse": mse, "mean_pred": jnp.mean(pred)}


def forward_counts(width: int, batch: int) -> pd.DataFrame:
    """Matrix products compiled, and time, for three ways to get the loss,
    its metrics and the gradient: `value_and_grad(has_aux=True)` in one
    jit; a jitted loss plus a jitted gradient (two calls, so two forward
    passes); and loss and gradient computed separately inside one jit.
    Each program is compiled once, its HLO read and the same executable
    timed, all three in one profile."""
    params = init(jax.random.key(0), width)
    x = jnp.ones((batch, width))
    grad = jax.grad(loss_with_aux, has_aux=True)

    def compiled(fn: Callable[..., Any]) -> Any:
        return jax.jit(fn).lower(params, x, x).compile()

    together = compiled(jax.value_and_grad(loss_with_aux, has_aux=True))
    apart_loss, apart_grad = compiled(loss_with_aux), compiled(grad)
    one_jit = compiled(lambda p, x, y: (loss_with_aux(p, x, y),
                                        grad(p, x, y)))

    def dots(*programs: Any) -> int:
        return sum(hlo.matrix_products(p.as_text()) for p in programs)

    cases = {"value_and_grad(has_aux=True), one jit":
             (together, dots(together)),
             "loss and grad, two jitted calls":
             (lambda p, x, y: (apart_loss(p, x, y), apart_grad(p, x, y)),
              dots(apart_loss, apart_grad)),
             "loss and grad separately, one jit": (one_jit, dots(one_jit))}
    timed = device_time.measure_all(
        {name: (fn, [(params, x, x)]) for name, (fn, _) in cases.items()},
        profiled=5)
    rows = [{"version": name, "dots": count,
             **device_time.columns(timed[name])}
            for name, (_, count) in cases.items()]
    return pd.DataFrame(rows).set_index("version")


# --- 7. matmul precision --------------------------------------------------

# Each way to run an n x n float32 product: the two float32 precisions;
# bf16 with the casts inside the timed call (both inputs converted, the
# product rounded to bf16 and back); bf16 inputs made before the call,
# accumulated and returned in float32; and the algorithms XLA offers by
# name (jax.lax.DotAlgorithmPreset: inputs, accumulator, passes).
HIGHEST = "float32, precision='highest'"
DEFAULT = "float32, default precision"
BF16_CAST = "bfloat16, cast in the call"
BF16_INPUTS = "bfloat16 inputs, float32 result"
ALGORITHMS = ("TF32_TF32_F32", "TF32_TF32_F32_X3", "BF16_BF16_F32",
              "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "F32_F32_F32")
PRECISIONS = (HIGHEST, DEFAULT, BF16_CAST, BF16_INPUTS,
              *(f"algorithm {name}" for name in ALGORITHMS))


# How a backend refuses an algorithm it does not run: a ValueError on the
# CPU ("not supported by dot_general on CPU"), XLA:GPU's runtime error on
# a T4 ("UNIMPLEMENTED: Unsupported algorithm on the current device(s)").
UNSUPPORTED = (ValueError, jax.errors.JaxRuntimeError)


def matmul_at(kind: str, a: jax.Array, b: jax.Array) -> jax.Array:
    """``a @ b`` at the precision ``kind`` names (one of
    `PRECISIONS`)."""
    if kind == BF16_CAST:
        return (a.astype(jnp.bfloat16) @ b.astype(jnp.bfloat16)).astype(
            jnp.float32)
    if kind == BF16_INPUTS:
        return jnp.matmul(a, b, preferred_element_type=jnp.float32)
    if kind.startswith("algorithm "):
        preset = getattr(jax.lax.DotAlgorithmPreset, kind.split()[-1])
        return jnp.matmul(a, b, precision=preset)
    return jnp.matmul(a, b, precision="highest" if kind == HIGHEST
                      else None)


def _inputs(kind: str, a: jax.Array, b: jax.Array
            ) -> tuple[jax.Array, jax.Array]:
    """The arguments a kind is timed with: bf16 copies, made before the
    call, for the kind that takes bf16 inputs."""
    if kind == BF16_INPUTS:
        return a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)
    return a, b


# Rows of the float64 product each error is read from: an error is a
# property of the arithmetic, the same in every row, and 1024 rows of an
# n = 8192 product cost the host an eighth of the whole one.
REFERENCE_ROWS = 1024


def precision_table(sizes: tuple[int, ...]) -> pd.DataFrame:
    """Time and relative error of an n x n matmul at each precision and
    size (`PRECISIONS`; an algorithm this backend does not run is left
    out). The error is the Frobenius norm of the difference from the
    float64 product of the same float32 inputs, in the first
    `REFERENCE_ROWS` rows (all rows of a smaller product), relative to
    that product's. Each program is compiled once and the same
    executable checked and timed, all in one profile."""
    rows: list[dict[str, Any]] = []
    cases: Cases = {}
    refused: set[str] = set()
    for n in sizes:
        a = jax.random.normal(jax.random.key(n), (n, n), jnp.float32)
        b = jax.random.normal(jax.random.key(n + 1), (n, n), jnp.float32)
        kept = min(n, REFERENCE_ROWS)
        want = (np.asarray(a)[:kept].astype(np.float64)
                @ np.asarray(b).astype(np.float64))
        for kind in PRECISIONS:
            inputs = _inputs(kind, a, b)
            try:
                program = jax.jit(lambda a, b, kind=kind: matmul_at(
                    kind, a, b)).lower(*inputs).compile()
            except UNSUPPORTED:
                refused.add(kind)
                continue
            got = np.asarray(program(*inputs))[:kept].astype(np.float64)
            cases[f"{kind}, n={n}"] = (program, [inputs])
            rows.append({"n": n, "precision": kind,
                         "rel error": np.linalg.norm(got - want)
                         / np.linalg.norm(want)})
    if refused:
        print(f"Left out here, refused by {jax.default_backend()}'s "
              f"compiler: {', '.join(sorted(refused))}.")
    timed = device_time.measure_all(cases, repeat=10, max_seconds=2.0)
    return pd.DataFrame([
        {**row, **device_time.columns(timing),
         "TFLOP/s": 2 * row["n"] ** 3 / timing.median / 1e12}
        for row, timing in zip(rows, timed.values())])
