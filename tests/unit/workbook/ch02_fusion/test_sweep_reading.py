"""Chapter 2's reading of the sweep: the slowest K and the kernel that ran
them, and CuPy against a @ b; the numbers follow the data."""

import pandas as pd

from helpers.workbook.ch02_fusion import numbers, sweep_reading

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
    slowest = numbers.slowest(rows)
    assert slowest["float32_points"] == (
        "K = 35 (50%, XLA's own kInput emitter) and K = 25 (70%, a Triton "
        "fusion)")
    assert slowest["own_kinput_slowest"]
    triton_slowest = sweep(
        (0.9, 0.5, 0.7, 0.95), (TRITON, TRITON, "kInput reduce", TRITON))
    assert not numbers.slowest(triton_slowest)["own_kinput_slowest"]
    assert sweep_reading.kernel_in_words("kLoop reduce") == \
        "XLA's own kLoop emitter"


def test_cupy_is_compared_with_a_matmul_over_the_sweep():
    rows = sweep((0.9,) * 4, (TRITON,) * 4, cupy_ms=(2.0, 5.0, 3.0, 30.0))
    slowest = numbers.slowest(rows)
    assert (slowest["cupy_low"], slowest["cupy_high"]) == (2.0, 30.0)
    none = numbers.slowest(sweep((0.9,) * 4, (TRITON,) * 4))
    assert none["cupy_low"] is None
