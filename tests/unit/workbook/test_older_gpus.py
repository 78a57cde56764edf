"""Each chapter on a GPU older than the H100 (Colab's T4, L4, A100): a
kernel the GPU cannot compile is left out with one sentence on why,
instead of stopping the chapter. Where the choice is made on a GPU, the
tests stand in a T4 for this CPU (`machine.on_gpu`, `machine.gpu_arch`).
"""

from __future__ import annotations

import pytest

from helpers.measuring import machine
from helpers.workbook.ch02_fusion import fixes
from helpers.workbook.ch03_launches import on_gpu, verdicts
from helpers.workbook.ch04_profiling import fused
from helpers.workbook.ch05_transformations import steps, utilisation

T4, A100, H100 = (7, 5), (8, 0), (9, 0)


@pytest.fixture
def on_a_t4(monkeypatch):
    """This process believes it runs on a T4."""
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "gpu_arch", lambda: T4)


def test_chapter_4_leaves_out_the_fused_kernels_a_t4_lacks():
    assert fused.here(T4) == ("xla",)
    assert set(fused.left_out(T4)) == {"pallas", "cudnn"}
    assert "compute capability 8.0" in fused.left_out(T4)["pallas"]
    assert fused.here(A100) == fused.here(H100) == fused.IMPLEMENTATIONS
    # on a CPU Pallas's kernel runs in its interpreter; cuDNN needs a GPU
    assert fused.here() == ("xla", "pallas")


def test_chapter_2_leaves_out_the_row_kernel_below_ampere():
    assert "Pallas row kernel" not in fixes.versions_here(T4)
    assert "Triton" in fixes.left_out(T4)["Pallas row kernel"]
    assert fixes.versions_here(A100) == fixes.VERSIONS
    assert fixes.versions_here() == fixes.VERSIONS  # interpreted here


def test_chapter_3_times_no_kernel_a_t4_would_interpret(on_a_t4):
    watch = on_gpu._Stopwatch(repeat=3)

    def never(*args):
        raise AssertionError("a kernel the T4 lacks was timed")

    said = watch.time(never, needs=on_gpu.TRITON)
    assert said.startswith("skipped: Pallas (Triton backend) needs "
                           "compute capability 8.0")
    assert watch.time(lambda: 1.0, needs="") != said  # others are timed


def test_chapter_3s_goals_read_without_a_side_by_side_time():
    data = {"steps": 100, "chains": 10,
            "one_chain_s": {"gpu fused_scan": 0.01,
                            "cpu scan, softplus hoisted": 0.02},
            "device_s": {"gpu fused_scan": 0.01},
            "many_chains_s": {
                "gpu fused, 64 chains per program": "skipped: T4",
                "gpu fused, one chain per thread": "skipped: T4",
                "cpu scan, softplus hoisted": 0.5}}
    numbers = verdicts.chain_numbers(data)
    assert numbers["many_speedup"] is None
    assert numbers["vmap_over_side"] is None
    assert numbers["one_ratio"] == pytest.approx(0.5)


def test_chapter_5_reads_utilisation_against_the_gpu_it_ran_on():
    assert utilisation.peak_flops("NVIDIA A100-SXM4-40GB") == 312e12
    assert utilisation.peak_flops("NVIDIA H100 80GB HBM3") == \
        utilisation.BF16_PEAK_FLOPS


def test_chapter_5_names_the_algorithms_a_compiler_refuses(capsys):
    table = steps.precision_table((16,))
    said = capsys.readouterr().out
    kept = set(table["precision"])
    assert said.startswith("Left out here, refused by cpu's compiler: ")
    refused = {kind for kind in steps.PRECISIONS if kind not in kept}
    assert refused and all(kind in said for kind in refused)


def test_chapter_5s_mixed_step_multiplies_in_float16_on_a_t4(on_a_t4,
                                                             capsys):
    import jax
    import jax.numpy as jnp
    assert utilisation.product_dtype() == jnp.float16
    params, x, _ = utilisation.step_inputs(16, 4)
    text = jax.jit(utilisation.mixed_predict).lower(params, x).as_text()
    assert "f16" in text and "bf16" not in text
    assert utilisation.peak_flops("Tesla T4") == 65e12  # fp16 tensor cores


def test_a_mixed_step_compiled_for_a_t4_is_costed_in_float16(monkeypatch):
    import json

    import jax.numpy as jnp

    from helpers.xla import crosscompile
    monkeypatch.setenv(crosscompile.CHILD_ENV, "1")
    monkeypatch.setenv(crosscompile.TARGET_ENV, json.dumps(
        crosscompile.gpu_specs.spec("T4")))
    assert utilisation.product_dtype() == jnp.float16
    monkeypatch.setenv(crosscompile.TARGET_ENV, json.dumps(
        crosscompile.gpu_specs.spec("A100")))
    assert utilisation.product_dtype() == jnp.bfloat16
