"""Chapter 3 on a GPU: the variants' launch counts, the fused loop as one
kernel, and both exercises' solutions passing their checks."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.measuring import device_time
from helpers.profiler import trace
from helpers.workbook.ch03_launches import exercises, on_gpu, variants
from helpers.xla import hlo

pytestmark = pytest.mark.gpu

WEIGHTS = variants.init_weights(jax.random.key(0))
KEY = jax.random.key(1)
STEPS = 500


def test_fused_variant_is_one_kernel_and_agrees_with_scan():
    assert hlo.while_loops(variants.fused, WEIGHTS, KEY, STEPS) == []
    assert len(hlo.custom_calls(variants.fused, WEIGHTS, KEY, STEPS)) == 1
    np.testing.assert_allclose(
        variants.fused(WEIGHTS, KEY, STEPS),
        variants.scan_hoisted(WEIGHTS, KEY, STEPS), rtol=1e-5)


def test_static_bound_skips_the_condition():
    traced = variants.launches_per_step(variants.while_traced, WEIGHTS, KEY,
                                        jnp.int32(STEPS))
    static = variants.launches_per_step(variants.while_static, WEIGHTS, KEY,
                                        STEPS)
    assert traced > static


def test_noise_outside_the_loop_launches_less():
    split = variants.launches_per_step(variants.scan_split, WEIGHTS, KEY,
                                       STEPS)
    outside = variants.launches_per_step(variants.scan_noise, WEIGHTS, KEY,
                                         STEPS)
    assert outside < split


def test_profile_counts_one_launch_for_the_fused_loop(tmp_path):
    """One kernel runs the loop; the rest of the call only lays out its
    inputs (on the first visit: three pad and broadcast fusions and one
    device-to-device copy, five in all)."""
    on_gpu.profile_one_call(variants.fused, WEIGHTS, KEY, STEPS,
                                  folder=str(tmp_path))
    names = list(trace.device_events(trace.load(str(tmp_path)))["name"])
    loops = [n for n in names if "mosaic" in n or "triton" in n]
    layout = [n for n in names if n not in loops]
    assert len(loops) == 1, names
    assert all(re.search(r"pad|broadcast|copy|Memcpy|transpose|slice|"
                         r"concatenate", n) for n in layout), names


def test_cuda_graphs_stay_on_under_jax_profiler():
    """The static while loop's body is a CUDA graph (compiled for an H100:
    tests/unit/workbook/ch03_launches/test_launches.py); under
    jax.profiler its kernels still run inside graphs: the plugin's
    profiler lock never sees jax's session, so XLA does not run the graph
    op by op."""
    timing = device_time.measure(variants.while_static, WEIGHTS, KEY,
                                 STEPS, repeat=3, profiled=2)
    assert timing.in_graph > 0.5, timing


def test_exercise_solutions_pass_on_the_gpu():
    assert exercises.fewer_launches.check(exercises.solution).passed
    assert exercises.fused_step.check(exercises.filter_solution).passed
    assert not exercises.fewer_launches.check(exercises.starter).passed


def test_xprof_counts_the_kernels_the_trace_counts(tmp_path):
    on_gpu.profile_one_call(variants.scan_noise, WEIGHTS, KEY, STEPS,
                                  folder=str(tmp_path))
    # XProf's kernel table leaves out the trace's memory copies and sets
    # (2026-11-25, H100: 3006 device events, 3002 of them kernels).
    events = trace.device_events(trace.load(str(tmp_path)))
    kernels = events[~events["name"].str.startswith(("Memcpy", "Memset"))]
    assert on_gpu.xprof_launches(str(tmp_path), STEPS) == \
        pytest.approx(len(kernels) / STEPS)


def test_the_latency_kernel_follows_the_scan():
    """Its tanh is the GPU's approximate one, so the chain follows the
    jitted scan closely, not to float32's last bit."""
    from helpers.measuring import capability
    from helpers.workbook.ch03_launches import chain_kernel
    lacking = capability.lacking(on_gpu.TRITON)
    if lacking:
        pytest.skip(f"{on_gpu.TRITON} {lacking}")
    np.testing.assert_allclose(
        chain_kernel.latency_kernel(WEIGHTS, KEY, variants.STEPS),
        variants.scan_hoisted(WEIGHTS, KEY, variants.STEPS), atol=1e-2)
