"""Chapter 4's reading of XProf's tables: each row named by its version,
rates in the book's units, and the rates above chapter 1's ceilings with
what explains each."""

import pandas as pd
import pytest

from helpers.profiler import trace
from helpers.workbook.ch04_profiling import attention, verdicts
from helpers.workbook.ch04_profiling import xprof_rates as rates

CEILINGS = (397.0, 3005.0)  # TF32 TFLOP/s and copy GB/s, as in chapter 1
GIB = 2**30 / 1e9
CUBLAS = ("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_"
          "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas")


def hlo(gemm_tflops=425.0, gemm_events=400, softmax_gbs=3430.0):
    """An hlo_stats table of two programs, einsum's (1) and matmul's (2):
    a cuBLAS GEMM, a softmax and a fusion each, 200 calls."""
    rows = []
    for program, path in (("1", "jit(f)/s/bhts,bhqs->bhtq/dot_general:"),
                          ("2", "jit(f)/s/dot_general:")):
        rows += [
            {"program_id": program, "hlo_op_name": "cublas-lt-matmul.0",
             "tf_op_name": "jit(f)/dot_general:", "occurrences": gemm_events,
             "total_time_us": 6800.0, "model_flop_rate": gemm_tflops * 1e3,
             "measured_memory_bw_GiB_s": 1762.0},
            {"program_id": program, "hlo_op_name": "triton_softmax.2",
             "tf_op_name": "jit(f)/div:", "occurrences": 200,
             "total_time_us": 2900.0, "model_flop_rate": 86600.0,
             "measured_memory_bw_GiB_s": softmax_gbs / GIB},
            {"program_id": program, "hlo_op_name": "gemm_fusion_dot.2",
             "tf_op_name": path, "occurrences": 200,
             "total_time_us": 3100.0, "model_flop_rate": 51800.0,
             "measured_memory_bw_GiB_s": 2211.6}]
    return pd.DataFrame(rows)


def roofline(peak_tflops=1070.5, peak_gbs=3352.3):
    """A roofline_model table whose rows give back the two peaks, each op
    listed twice (with and without infeed and outfeed)."""
    one = pd.DataFrame({
        "operation": ["cublas-lt-matmul.0", "triton_softmax.2"],
        "hlo_module_id": ["1", "1"],
        "measured_flop_rate_GFLOP_s": [425e3, 86.6e3],
        "compute_efficiency": [425e3 / (peak_tflops * 1e3),
                               86.6e3 / (peak_tflops * 1e3)],
        "hbm_bw_GiB_s": [730.9, 3193.3],
        "max_mem_bw_utilization": [730.9 * GIB / peak_gbs,
                                   3193.3 * GIB / peak_gbs],
        "operational_intensity_FLOP_Byte": [224.7, 25.3],
        "bound_by": ["Compute", "HBM"], "roofline_efficiency": [0.4, 1.02]})
    return pd.concat([one.assign(include_infeed_outfeed=True),
                      one.assign(include_infeed_outfeed=False)])


def test_rates_keep_three_significant_figures():
    assert rates.three_figures(3428.7) == 3430
    assert rates.three_figures(425.1497) == 425
    assert rates.three_figures(51.847) == 51.8
    assert rates.three_figures(0.0) == 0.0


def test_programs_are_named_by_their_einsum_subscripts():
    assert rates.program_versions(hlo()) == {"1": "einsum", "2": "matmul"}
    plain = hlo().assign(tf_op_name="jit(f)/dot_general:")
    assert rates.program_versions(plain) == {"1": "program 1",
                                             "2": "program 2"}


def test_a_kernel_is_placed_in_its_version_or_in_both():
    kernels = pd.DataFrame({
        "kernel_name": [CUBLAS, "gemm_fusion_dot_2", "gemm_fusion_dot_2"],
        "op_name": ["jit(f)/dot_general", "jit(f)/s/bhts,bhqs->bhtq/"
                    "dot_general", "jit(f)/s/dot_general"]})
    versions = {"1": "einsum", "2": "matmul"}
    assert rates.kernel_versions(kernels, hlo(), versions) == [
        "both", "einsum", "matmul"]


def test_tables_show_versions_and_the_books_units():
    table = rates.readable(hlo(), "hlo_stats",
                           rates.program_versions(hlo()))
    assert list(table.columns) == ["version", "HLO op", "events",
                                   "total µs", "TFLOP/s", "GB/s"]
    assert table["version"].tolist()[:2] == ["einsum", "einsum"]
    assert table.loc[0, "TFLOP/s"] == 425
    assert table.loc[1, "GB/s"] == 3430
    placed = rates.readable(roofline(), "roofline_model", {"1": "einsum"})
    assert len(placed) == 2 and placed.loc[0, "version"] == "einsum"
    kernels = rates.readable(pd.DataFrame({
        "kernel_name": [CUBLAS], "is_kernel_using_tensor_core": [True],
        "total_duration_us": [1.0]}), "kernel_stats")
    assert kernels.loc[0, "kernel"] == "sm90 cuBLAS gemm, tilesize64x128x32"
    assert kernels.loc[0, "tensor cores"] == "yes"


def test_the_roofline_peaks_are_read_back_from_its_table():
    flops, memory = rates.device_peaks(roofline(1000.0, 3000.0))
    assert flops == pytest.approx(1000.0) and memory == pytest.approx(3000.0)
    assert rates.device_peaks(pd.DataFrame()) == (None, None)


def found(**kwargs):
    memsets = {"cublas-lt-matmul.0": 0.5}
    return rates.over_ceilings(hlo(**kwargs), roofline(), CEILINGS, memsets)


def test_a_flop_rate_over_the_ceiling_is_explained_by_its_events():
    assert found()["flops_over"] == [
        {"op": "cublas-lt-matmul.0", "counted": 425, "events": 2,
         "memsets": 1, "per_call": 212}]
    once = found(gemm_events=200, gemm_tflops=420.0)["flops_over"]
    assert once[0]["events"] == 1 and once[0]["per_call"] == 420
    assert found(gemm_tflops=300.0)["flops_over"] == []


def test_bytes_over_the_copy_are_sorted_by_where_they_stand():
    beyond = found(softmax_gbs=3430.0)
    assert beyond["cached"] == ["triton_softmax.2"]
    assert beyond["cached_gbs"] == 3430 and beyond["peak_gbs"] == 3350
    assert beyond["reads"] == []
    within = found(softmax_gbs=3100.0)
    assert within["cached"] == [] and within["cached_gbs"] is None
    assert within["reads"] == ["triton_softmax.2"]
    none = found(softmax_gbs=2500.0, gemm_tflops=300.0)
    assert none["cached"] == none["reads"] == none["flops_over"] == []


def test_the_recorded_tables_read_against_the_ceilings():
    folder = attention.fixture_folder(name=attention.PER_OP_FIXTURE)
    if not folder.exists():
        pytest.skip("no per-op profile recorded")
    views = attention.xprof_views(folder)
    if isinstance(views["hlo_stats"], str):
        pytest.skip(views["hlo_stats"])
    table = pd.DataFrame(views["hlo_stats"])
    assert sorted(rates.program_versions(table).values()) == [
        "einsum", "matmul"]
    memsets = verdicts.memsets_by_op(
        trace.device_events(trace.load(folder)))
    over = rates.over_ceilings(table, pd.DataFrame(views["roofline_model"]),
                               CEILINGS, memsets)
    gemm, = over["flops_over"]
    assert (gemm["events"], gemm["memsets"]) == (2, 1)
    assert gemm["per_call"] <= CEILINGS[0] < gemm["counted"]
    assert over["cached"] and over["reads"]
