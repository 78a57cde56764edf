"""Checks that only mean something on a CUDA GPU (skipped elsewhere, with
the reason): provenance is complete, and the measured ceilings and timings
are physically plausible."""

import jax
import jax.numpy as jnp
import pytest

from helpers.measuring import bench, datasheet, machine, roofline

pytestmark = pytest.mark.gpu


def test_provenance_names_the_gpu():
    info = machine.describe()
    assert info["backend"] == "gpu"
    assert info["compute_capability"] and info["memory_bytes"]
    assert info["driver"], "nvidia-smi should report the driver version"
    assert machine.gpu_arch() >= (7, 0)


def test_copy_bandwidth_is_that_of_a_gpu():
    # Every CUDA GPU the book targets (T4 and newer) moves > 200 GB/s, and
    # none beats its datasheet: an H200 copied 4.25 TB/s against its rated
    # 4.8 (2026-11-28), over the 4 TB/s an H100-only bound allowed.
    sheet = datasheet.peaks(machine.describe()["device"])
    ceiling = sheet.memory_bytes_per_s if sheet else 1e13
    assert 2e11 < roofline.copy_bandwidth() < ceiling


def test_blocking_time_exceeds_dispatch_time():
    a = jnp.ones((4096, 4096), jnp.float32)
    timing = bench.benchmark(jax.jit(lambda m: m @ m), a, repeat=10)
    flops = 2 * 4096**3
    assert timing.throughput(flops=flops)["flop/s"] < 2e15
    assert timing.compile_s > timing.median
