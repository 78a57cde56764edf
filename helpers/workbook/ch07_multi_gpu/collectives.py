"""Chapter 7 (Multi-GPU communication): collectives on a mesh, what
shardings compile to, the all-reduce combiner, and collective timings.

Everything here runs on a mesh from `helpers.multi_device.meshes`: real GPUs
when there are enough, simulated CPU devices otherwise.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from helpers.measuring import bench
from helpers.multi_device import meshes
from helpers.page import arithmetic
from helpers.xla import hlo

# Each collective as a shard_map body over axis `a` (each device holds a
# block of 2p numbers), and what device d must end up holding, from the
# (p, 2p) array of every device's block, in NumPy.
COLLECTIVES: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "psum": (lambda x, a: jax.lax.psum(x, a),
             lambda blocks, d: blocks.sum(0)),
    "all_gather": (lambda x, a: jax.lax.all_gather(x, a, tiled=True),
                   lambda blocks, d: blocks.reshape(-1)),
    "psum_scatter": (lambda x, a: jax.lax.psum_scatter(x, a, tiled=True),
                     lambda blocks, d: np.split(blocks.sum(0),
                                                len(blocks))[d]),
    "ppermute (ring shift)": (
        lambda x, a: jax.lax.ppermute(x, a, ring(jax.lax.axis_size(a))),
        lambda blocks, d: blocks[d - 1]),
    "all_to_all": (lambda x, a: jax.lax.all_to_all(x, a, 0, 0, tiled=True),
                   lambda blocks, d: np.concatenate(
                       [np.split(b, len(blocks))[d] for b in blocks])),
}


def ring(p: int) -> list[tuple[int, int]]:
    """The pairs of a ring shift: device i sends to device i + 1."""
    return [(i, (i + 1) % p) for i in range(p)]


def on_each_device(body: Callable[..., Any], mesh: jax.sharding.Mesh,
                   axis: str) -> Callable[..., Any]:
    """``body`` run by every device of ``axis`` on its own block; the
    result has one row per device, row d being what device d holds."""
    def per_device(x: jax.Array) -> jax.Array:
        return body(x[0], axis)[None]
    return jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=P(axis),
                                 out_specs=P(axis)))


def blocks_for(mesh: jax.sharding.Mesh, axis: str) -> jax.Array:
    """One block of 2p distinct numbers per device of ``axis``."""
    p = mesh.shape[axis]
    values = jnp.arange(p * 2 * p, dtype=jnp.float32).reshape(p, 2 * p)
    return jax.device_put(values, NamedSharding(mesh, P(axis)))


def collective_table(mesh: jax.sharding.Mesh, axis: str) -> pd.DataFrame:
    """Each JAX collective on ``mesh``: the HLO operation it compiles to,
    its device groups or pairs, and whether every device's result agrees
    with NumPy."""
    x = blocks_for(mesh, axis)
    blocks = np.asarray(x)
    rows = []
    for name, (body, expected) in COLLECTIVES.items():
        fn = on_each_device(body, mesh, axis)
        got = np.asarray(fn(x))
        agree = all(np.allclose(got[d], expected(blocks, d))
                    for d in range(len(blocks)))
        (op,) = hlo.collectives(fn, x)
        rows.append({"jax": name, "hlo": op.kind,
                     "groups or pairs": op.groups or op.pairs,
                     "result shape per device": got.shape[1:],
                     "matches NumPy": agree})
    return pd.DataFrame(rows)


# A chunk as a picture shows it: the device it came from (None for a sum
# over all devices) and its label.
Chunk = tuple[int | None, str]
DEVICE_NAMES = "ABCDE"  # a letter per device: chunk 'B2' is device 1's third


def who_holds_what(mesh: jax.sharding.Mesh, axis: str
                   ) -> dict[str, list[list[Chunk]]]:
    """What every device holds before and after each collective, chunk by
    chunk, as JAX computed it.

    Device d's block is p chunks, chunk j holding the number 2 ** (d p + j),
    so every result reads back as the chunks it was made of: one bit is a
    chunk moved, p bits a sum over the devices. Keys are 'before' and
    'name → HLO operation'; values list each device's chunks."""
    p = mesh.shape[axis]
    if not 2 <= p <= len(DEVICE_NAMES):
        raise ValueError(f"the picture names devices {DEVICE_NAMES[0]} to "
                         f"{DEVICE_NAMES[-1]}: use a mesh axis of 2 to "
                         f"{len(DEVICE_NAMES)} devices, not {p}.")
    bits = (2 ** np.arange(p * p, dtype=np.int64)).reshape(p, p)
    x = jax.device_put(jnp.asarray(bits, jnp.int32),
                       NamedSharding(mesh, P(axis)))
    held = {"before": [[_chunk(v, p) for v in row] for row in bits]}
    for name, (body, _) in COLLECTIVES.items():
        fn = on_each_device(body, mesh, axis)
        (op,) = hlo.collectives(fn, x)
        held[f"{name} → {op.kind}"] = [
            [_chunk(int(v), p) for v in row] for row in np.asarray(fn(x))]
    return held


def _chunk(value: int, p: int) -> Chunk:
    """The chunk(s) a number of `who_holds_what` is made of."""
    parts = [i for i in range(p * p) if value >> i & 1]
    devices = {i // p for i in parts}
    chunks = {i % p for i in parts}
    if len(parts) == 1:
        return parts[0] // p, f"{DEVICE_NAMES[parts[0] // p]}{parts[0] % p}"
    if len(chunks) == 1 and len(devices) == p:
        return None, f"Σ{chunks.pop()}"
    raise ValueError(f"{value} mixes chunks {parts}: no collective of "
                     "this chapter makes that.")


def groups_of(mesh: jax.sharding.Mesh, axis: str) -> tuple[tuple[int, ...],
                                                           ...]:
    """The replica groups of a psum over one axis of a 2-D mesh."""
    spec = P(*mesh.axis_names)

    def body(x: jax.Array) -> jax.Array:
        return jax.lax.psum(x, axis)

    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec,
                               out_specs=spec))
    x = jax.device_put(jnp.ones(mesh.devices.shape),
                       NamedSharding(mesh, spec))
    (op,) = hlo.collectives(fn, x)
    return op.groups


# --- shardings of an MLP and the collectives they compile to -------------

def mlp(params: list[dict[str, jax.Array]], x: jax.Array) -> jax.Array:
    """A stack of two-matmul blocks: gelu(x @ w_in) @ w_out, with residual.
    """
    for block in params:
        x = x + jax.nn.gelu(x @ block["w_in"]) @ block["w_out"]
    return x


def mlp_loss(params: list[dict[str, jax.Array]], x: jax.Array) -> jax.Array:
    """Mean square of the MLP's output: something to differentiate."""
    return jnp.mean(mlp(params, x) ** 2)


def init_mlp(layers: int, width: int, hidden: int, key: jax.Array
             ) -> list[dict[str, jax.Array]]:
    """Random MLP parameters, scaled so activations stay O(1)."""
    keys = jax.random.split(key, 2 * layers)
    return [{"w_in": jax.random.normal(keys[2 * i], (width, hidden))
             / np.sqrt(width),
             "w_out": jax.random.normal(keys[2 * i + 1], (hidden, width))
             / np.sqrt(hidden)} for i in range(layers)]


def sharding_plans() -> dict[str, dict[str, Any]]:
    """Three ways to spread an MLP's training step over a ``data`` x
    ``model`` mesh: the specs of the parameters and the batch, and whether
    each weight is gathered whole just before it is used (FSDP's rule)."""
    return {
        "data parallel": {"w_in": P(), "w_out": P(), "x": P("data"),
                          "gather": False},
        "tensor parallel (Megatron)": {"w_in": P(None, "model"),
                                       "w_out": P("model", None),
                                       "x": P(), "gather": False},
        "fully sharded (FSDP)": {"w_in": P("data"), "w_out": P("data"),
                                 "x": P("data"), "gather": True},
    }


def placed(mesh: jax.sharding.Mesh, plan: dict[str, Any],
           params: list[dict[str, jax.Array]], x: jax.Array
           ) -> tuple[list[dict[str, jax.Array]], jax.Array]:
    """Parameters and batch put on ``mesh`` as ``plan`` says."""
    def put(value: jax.Array, spec: Any) -> jax.Array:
        return jax.device_put(value, NamedSharding(mesh, spec))
    return ([{k: put(v, plan[k]) for k, v in block.items()}
             for block in params], put(x, plan["x"]))


def gradient_step(mesh: jax.sharding.Mesh, plan: dict[str, Any]
                  ) -> jax.stages.Wrapped:
    """The jitted gradient of `mlp_loss` under ``plan``: with FSDP each
    weight is constrained to be whole (replicated) where it is used, and
    the gradients leave sharded like the weights."""
    if not plan["gather"]:
        return jax.jit(jax.grad(mlp_loss))
    whole = NamedSharding(mesh, P())

    def loss(params: list[dict[str, jax.Array]], x: jax.Array
             ) -> jax.Array:
        gathered = jax.tree.map(
            lambda w: jax.lax.with_sharding_constraint(w, whole), params)
        return mlp_loss(gathered, x)

    def sharded_like_weights(params: Any) -> Any:
        return [{k: NamedSharding(mesh, plan[k]) for k in block}
                for block in params]

    def step(params: list[dict[str, jax.Array]], x: jax.Array) -> Any:
        grads = jax.grad(loss)(params, x)
        return jax.lax.with_sharding_constraint(
            grads, sharded_like_weights(params))

    return jax.jit(step)


def plan_table(mesh: jax.sharding.Mesh, params: list[dict[str, jax.Array]],
               x: jax.Array) -> pd.DataFrame:
    """For each plan: the collectives in the compiled gradient step, and
    whether its gradients equal the single-device ones."""
    want = jax.jit(jax.grad(mlp_loss))(*meshes.on_one_device(
        mesh, (params, x)))
    rows = []
    for name, plan in sharding_plans().items():
        args = placed(mesh, plan, params, x)
        step = gradient_step(mesh, plan)
        text = step.lower(*args).compile().as_text()
        same = all(np.allclose(g, w, rtol=1e-4, atol=1e-6) for g, w in
                   zip(jax.tree.leaves(step(*args)), jax.tree.leaves(want)))
        rows.append({"plan": name, **hlo.collective_counts(text),
                     "gradients match one device": same})
    table = pd.DataFrame(rows).set_index("plan").fillna(0)
    counts = [c for c in table.columns if c != "gradients match one device"]
    return table[counts + ["gradients match one device"]].astype(
        {c: int for c in counts})


def predicted_collectives(layers: int
                          ) -> dict[str, tuple[str, arithmetic.Worked]]:
    """Each plan's collectives before any combining, for ``layers``
    blocks of two weights, as (column of `plan_table`, worked count):
    data parallel sums each weight's gradient; tensor parallel sums each
    block's output forward and each block's input gradient backward (not
    the first block's: its input is the data); FSDP gathers each weight
    once before use."""
    blocks = arithmetic.quantity("L", layers)
    return {
        "data parallel": ("all-reduce", arithmetic.worked(
            r"n_\text{all-reduce}^\text{DP}", "2 * L", L=blocks)),
        "tensor parallel (Megatron)": ("all-reduce", arithmetic.worked(
            r"n_\text{all-reduce}^\text{TP}", "2 * L - 1", L=blocks)),
        "fully sharded (FSDP)": ("all-gather", arithmetic.worked(
            r"n_\text{all-gather}^\text{FSDP}", "2 * L", L=blocks)),
    }


def all_reduce_operands(text: hlo.Program) -> list[int]:
    """How many arrays each all-reduce of a compiled module reduces: a
    combined all-reduce takes a tuple of several."""
    return [len(hlo.Shape.parse(c.shape).arrays)
            for c in hlo.collectives(text) if c.kind == "all-reduce"]


def data_parallel_step(mesh: jax.sharding.Mesh, layers: int
                       ) -> tuple[jax.stages.Wrapped, tuple[Any, ...]]:
    """The data-parallel gradient step of a ``layers``-block MLP on
    ``mesh`` (its ``data`` axis), and its arguments."""
    params = init_mlp(layers, 64, 128, jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (8 * mesh.shape["data"], 64))
    args = placed(mesh, sharding_plans()["data parallel"], params, x)
    return jax.jit(jax.grad(mlp_loss)), args


def combined_all_reduces(mesh: jax.sharding.Mesh, layers: int,
                         compiler_options: dict[str, Any] | None = None
                         ) -> list[int]:
    """Operands per all-reduce in the compiled data-parallel step."""
    step, args = data_parallel_step(mesh, layers)
    compiled = step.lower(*args).compile(compiler_options=compiler_options)
    return all_reduce_operands(compiled.as_text())


GPU_THRESHOLDS = (0, 256 * 1024, 4 * 1024 * 1024, None)  # None: default
GPU_COMBINE_FLAGS = ("xla_gpu_all_reduce_combine_threshold_bytes",
              "xla_gpu_all_gather_combine_threshold_bytes",
              "xla_gpu_reduce_scatter_combine_threshold_bytes")


def compile_only_gpus(n: int) -> jax.sharding.Mesh:
    """A ``(n/2, 2)`` ``data`` x ``model`` mesh of *compile-only* H100s:
    XLA compiles for ``n`` GPUs without having them (run it through
    `helpers.xla.crosscompile.run`, which works with or without a GPU)."""
    from helpers.xla import crosscompile

    grid = np.array(crosscompile.devices(n)).reshape(n // 2, 2)
    return jax.sharding.Mesh(grid, ("data", "model"))


def combine_for_gpu(devices: int = 8, layers: int = 6) -> dict[str, Any]:
    """For each combine threshold: the collectives XLA:GPU compiles for
    the data-parallel and FSDP gradient steps of a ``layers``-block MLP
    whose weights are 1 MiB each, on ``devices`` compile-only GPUs."""
    mesh = compile_only_gpus(devices)
    params = init_mlp(layers, 256, 1024, jax.random.key(0))
    x = jax.ShapeDtypeStruct((16 * devices, 256), jnp.float32)
    rows = []
    for name in ("data parallel", "fully sharded (FSDP)"):
        plan = sharding_plans()[name]
        specs = [{k: jax.ShapeDtypeStruct(
            w.shape, w.dtype, sharding=NamedSharding(mesh, plan[k]))
            for k, w in block.items()} for block in params]
        batch = jax.ShapeDtypeStruct(x.shape, x.dtype,
                                     sharding=NamedSharding(mesh, plan["x"]))
        lowered = gradient_step(mesh, plan).lower(specs, batch)
        for threshold in GPU_THRESHOLDS:
            options: dict[str, Any] = (
                {} if threshold is None else
                {flag: threshold for flag in GPU_COMBINE_FLAGS})
            text = lowered.compile(compiler_options=options).as_text()
            rows.append({"plan": name, "threshold_bytes": threshold,
                         **hlo.collective_counts(text),
                         "kernels overlapping": sum(
                             w.kernels_between
                             for w in hlo.async_windows(text))})
    return {"devices": devices, "layers": layers, "weight_bytes": 1 << 20,
            "rows": rows}


# --- timing collectives ----------------------------------------------------

def time_psum(mesh: jax.sharding.Mesh, axis: str, n_bytes: int,
              repeat: int = 20) -> float:
    """Median seconds of one psum of an ``n_bytes`` float32 buffer per
    device over ``axis``."""
    p = mesh.shape[axis]
    per_device = max(n_bytes // 4, 1)
    x = jax.device_put(jnp.ones((p, per_device), jnp.float32),
                       NamedSharding(mesh, P(axis)))
    fn = on_each_device(COLLECTIVES["psum"][0], mesh, axis)
    return bench.benchmark(fn, x, repeat=repeat).median


def psum_sweep(device_counts: tuple[int, ...], sizes: tuple[int, ...],
               make_mesh: Callable[[int], jax.sharding.Mesh],
               repeat: int = 20) -> pd.DataFrame:
    """Measured psum times over device counts and buffer sizes, in the
    columns `helpers.multi_device.collective_cost.fit` reads."""
    rows = []
    for p in device_counts:
        mesh = make_mesh(p)
        for n_bytes in sizes:
            rows.append({"collective": "all-reduce", "devices": p,
                         "bytes": n_bytes,
                         "seconds": time_psum(mesh, mesh.axis_names[0],
                                              n_bytes, repeat)})
    return pd.DataFrame(rows)

