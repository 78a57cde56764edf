"""Chapter 6 on a GPU: each setting runs in its own process and reports
what it compiled; turning Triton GEMMs off brings back the library call."""

import pytest

from helpers.workbook.ch06_xla_flags import flag_runs

pytestmark = pytest.mark.gpu


def test_turning_triton_gemms_off_calls_cublas():
    """jax 0.11.2 on an H100 already compiles this GEMM with Triton (a
    kCustom fusion), so --xla_gpu_triton_gemm_any=true changes nothing
    (seen on the first visit); turning Triton GEMMs off brings cuBLAS."""
    default = flag_runs.in_child("matmul_epilogue", "")
    cublas = flag_runs.in_child("matmul_epilogue",
                            "--xla_gpu_enable_triton_gemm=false")
    assert "error" not in default and "error" not in cublas
    assert not default["custom calls"] and "kCustom" in default[
        "fusion kinds"]
    assert list(cublas["custom calls"]) == ["__cublas$lt$matmul"]


def test_every_gpu_setting_measures():
    result = flag_runs.measure_on_gpu()
    assert all("error" not in row for row in result["rows"]), result
    assert "error" not in result["auto_pgle"]
