"""Chapter 2's reading of the sweep: the slowest K and the kernel that ran
them, and CuPy against a @ b; the sentences follow the data."""

import pandas as pd

from helpers.workbook.ch02_fusion import sweep_reading

GPU = "NVIDIA H100 80GB HBM3"
TRITON = "kCustom (named kLoop) reduce"


def sweep(achieved, fusions, cupy_ms=None):
    """a @ b rows at K 10, 25, 35, 50 in float32 with these shares and
    kernels (1 ms each), and CuPy rows taking ``cupy_ms``."""
    ks = (10, 25, 35, 50)
    rows = [{"K": k, "dtype": "float32", "version": "a @ b", "ms": 1.0,
             "achieved": a, "fusions": f}
            for k, a, f in zip(ks, achieved, fusions)]
    if cupy_ms is not None:
        rows += [{"K": k, "dtype": "float32", "version": "CuPy", "ms": ms,
                  "achieved": 0.1, "fusions": ""}
                 for k, ms in zip(ks, cupy_ms)]
    return pd.DataFrame(rows)


def test_the_slowest_points_name_the_kernel_that_ran_them():
    rows = sweep((0.9, 0.7, 0.5, 0.95),
                 (TRITON, TRITON, "kInput reduce", TRITON))
    text = sweep_reading.slowest(rows, GPU)
    assert "were K = 35 (50%, XLA's own kInput emitter) and K = 25 " \
        "(70%, a Triton fusion) in float32." in text
    assert "The kind XLA's rule calls fast ran slowest here" in text
    triton_slowest = sweep(
        (0.9, 0.5, 0.7, 0.95), (TRITON, TRITON, "kInput reduce", TRITON))
    assert "ran slowest here" not in sweep_reading.slowest(triton_slowest,
                                                           GPU)
    assert sweep_reading.slowest(rows.drop(columns="fusions"), GPU) is None


def test_cupy_is_compared_with_a_matmul_over_the_sweep():
    rows = sweep((0.9,) * 4, (TRITON,) * 4, cupy_ms=(2.0, 5.0, 3.0, 30.0))
    assert "took 2.0 to 30.0 times as long as `a @ b`" in \
        sweep_reading.cupy_against_jax(rows, GPU)
    assert sweep_reading.cupy_against_jax(sweep((0.9,) * 4, (TRITON,) * 4),
                                          GPU) is None
