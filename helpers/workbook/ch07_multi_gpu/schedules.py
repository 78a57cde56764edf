"""Chapter 7's training step as XLA:GPU schedules it for eight H100s:
the latency hiding scheduler on and off, read from the compiled module
(chapter 6 shows it).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding

from helpers.workbook.ch07_multi_gpu import collectives
from helpers.xla import hlo

# XLA:GPU's scheduling settings compared by `schedule_for_gpu`. In jaxlib
# 0.10.2, off by its flag, the latency hiding scheduler still runs on
# Hopper while XLA's speed-of-light latency estimator is on (its
# default); in 0.12 the flag alone stops it. With both off the
# memory-minimising scheduler alone places the collectives.
SCHEDULER_SETTINGS: dict[str, dict[str, bool]] = {
    "flag on": {
        "xla_gpu_enable_latency_hiding_scheduler": True},
    "flag off (default)": {
        "xla_gpu_enable_latency_hiding_scheduler": False},
    "flag and SoL estimator off": {
        "xla_gpu_enable_latency_hiding_scheduler": False,
        "xla_gpu_enable_analytical_sol_latency_estimator": False},
}


def schedule_for_gpu(devices: int = 8, layers: int = 6,
                    rows_per_device: int = 2048) -> dict[str, Any]:
    """The data-parallel and FSDP gradient steps of a ``layers``-block MLP
    (1 MiB weights) compiled for ``devices`` compile-only GPUs under each
    of `SCHEDULER_SETTINGS`, every collective kept apart (combine
    thresholds 0).

    One row per plan and setting: whether the latency hiding scheduler's
    passes ran (read from an XLA dump of the passes), the asynchronous
    collectives, how many have kernels scheduled between their start and
    done, the most kernels inside one (`hlo.async_windows`), and the most
    in flight at once (`hlo.most_in_flight`)."""
    mesh = collectives.compile_only_gpus(devices)
    params = collectives.init_mlp(layers, 256, 1024, jax.random.key(0))
    rows = []
    for name in ("data parallel", "fully sharded (FSDP)"):
        plan = collectives.sharding_plans()[name]
        specs = [{k: jax.ShapeDtypeStruct(
            w.shape, w.dtype, sharding=NamedSharding(mesh, plan[k]))
            for k, w in block.items()} for block in params]
        batch = jax.ShapeDtypeStruct(
            (rows_per_device * devices, 256), jnp.float32,
            sharding=NamedSharding(mesh, plan["x"]))
        lowered = collectives.gradient_step(mesh, plan).lower(specs, batch)
        for setting, flags in SCHEDULER_SETTINGS.items():
            with tempfile.TemporaryDirectory() as dump:
                options: dict[str, Any] = {
                    **flags,
                    **dict.fromkeys(collectives.GPU_COMBINE_FLAGS, 0),
                    "xla_dump_to": dump,
                    "xla_dump_hlo_pass_re": "latency-hiding-scheduler"}
                text = lowered.compile(compiler_options=options).as_text()
                ran = any(Path(dump).glob("*latency-hiding-scheduler*"))
            windows = hlo.async_windows(text)
            rows.append({
                "plan": name, "setting": setting, "scheduler ran": ran,
                "collectives": len(windows),
                "overlapped": sum(w.kernels_between > 0 for w in windows),
                "most kernels inside": max(
                    w.kernels_between for w in windows),
                "most in flight": hlo.most_in_flight(text)})
    return {"devices": devices, "layers": layers,
            "rows_per_device": rows_per_device, "rows": rows}
