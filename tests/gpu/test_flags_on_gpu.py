"""Chapter 6 on a GPU: each setting runs in its own process and reports
what it compiled; Triton GEMMs replace the library call when asked."""

import pytest

from helpers.workbook import flags

pytestmark = pytest.mark.gpu


def test_triton_gemm_any_changes_the_matmul_kernel():
    default = flags.in_child("matmul_epilogue", "")
    triton = flags.in_child("matmul_epilogue",
                            "--xla_gpu_triton_gemm_any=true")
    assert "error" not in default and "error" not in triton
    assert default["custom calls"] != triton["custom calls"] or \
        default["fusion kinds"] != triton["fusion kinds"]


def test_every_gpu_setting_measures():
    result = flags.measure_on_gpu()
    assert all("error" not in row for row in result["rows"]), result
    assert "error" not in result["auto_pgle"]
