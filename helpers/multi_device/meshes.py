"""Devices and meshes for multi-device examples that run anywhere.

A machine with one GPU, or none, can still run a program written for eight
devices: JAX's CPU backend can pretend to be several devices
(``jax.config.update("jax_num_cpu_devices", 8)``). The compiler partitions
the program and emits the same collectives it would for eight GPUs; the
"network" is memory copies between threads. The setting only takes effect
before JAX starts its backends, so `simulate` must run first.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax
import numpy as np


def simulate(n: int) -> None:
    """Ask JAX's CPU backend for ``n`` devices.

    Call it before anything else touches JAX devices (a notebook's first
    cell, a script's first lines). Calling it again later is harmless when
    the backend already has ``n`` or more CPU devices.

    Raises:
        ValueError: ``n`` is not a positive integer.
        RuntimeError: JAX has already started with fewer CPU devices; the
            message says to restart and call this first.

    Example:
        >>> simulate(8)
        >>> len(jax.devices("cpu")) >= 8
        True
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"simulate(n) needs a positive int, got {n!r}.")
    try:
        jax.config.update("jax_num_cpu_devices", n)
    except RuntimeError:  # the backend has started: check what it has
        have = len(jax.devices("cpu"))
        if have < n:
            raise RuntimeError(
                f"JAX already started with {have} CPU device(s), fewer than "
                f"{n}. Restart the kernel and call "
                f"helpers.multi_device.meshes.simulate({n}) before any "
                "other JAX call.") from None


def devices(n: int) -> list[Any]:
    """``n`` devices: real accelerators when there are that many, else the
    simulated CPU devices.

    Raises:
        RuntimeError: neither kind has ``n`` devices; says to `simulate`.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"devices(n) needs a positive int, got {n!r}.")
    default = jax.devices()
    if len(default) >= n:
        return default[:n]
    cpus = jax.devices("cpu")
    if len(cpus) >= n:
        return cpus[:n]
    raise RuntimeError(
        f"{n} devices wanted, but JAX has {len(default)} "
        f"{default[0].platform} device(s) and {len(cpus)} CPU device(s). "
        f"Call helpers.multi_device.meshes.simulate({n}) before any other "
        "JAX call (restart the kernel first).")


def mesh(shape: Sequence[int], names: Sequence[str]) -> jax.sharding.Mesh:
    """A mesh of ``prod(shape)`` devices from `devices`, axes named.

    Example:
        >>> mesh((2, 4), ("data", "model")).devices.shape
        (2, 4)
    """
    shape = tuple(shape)
    if len(shape) != len(names):
        raise ValueError(f"mesh shape {shape} has {len(shape)} axes but "
                         f"{len(names)} names {tuple(names)}; give one name "
                         "per axis.")
    grid = np.array(devices(math.prod(shape))).reshape(shape)
    return jax.sharding.Mesh(grid, tuple(names))


def platform(m: jax.sharding.Mesh) -> str:
    """What the mesh's devices are, in words: ``'8 simulated CPU devices'``
    or ``'4 gpu devices'``."""
    first = m.devices.flat[0]
    kind = ("simulated CPU" if first.platform == "cpu" and m.devices.size > 1
            else first.platform)
    return f"{m.devices.size} {kind} device" + ("s" if m.devices.size > 1
                                                 else "")


def on_one_device(m: jax.sharding.Mesh, tree: Any) -> Any:
    """``tree`` on the mesh's first device: the single-device reference a
    sharded result is compared with runs on the same kind of device (on a
    GPU machine with simulated CPU devices, a reference left on the GPU
    would multiply float32 in TF32 and differ by about 3e-4)."""
    return jax.device_put(tree, m.devices.flat[0])
