"""Chapter 4's readings of a profile as the page shows them: XProf's
empty tools said once, long kernel names shortened visibly, thunk
sequences counted, and Perfetto's answer beside the pandas one."""

from pathlib import Path

import pandas as pd

from helpers.profiler import xprof_tables
from helpers.workbook.ch04_profiling import profile_views as views

CUBLAS = ("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x256x32_"
          "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas")
CPU = ("XProf's hlo_stats has no rows for this profile: no GPU or TPU in "
       "it: XLA:CPU runs on host threads")
GRAPHS = ("XProf's roofline_model has no rows for this profile: this GPU "
          "profile has kernels, but they ran inside CUDA graphs, ...")


def test_long_kernel_names_are_shortened_visibly():
    short = xprof_tables.short_name
    assert short("gemm_fusion_dot_2") == "gemm_fusion_dot_2"
    assert short(CUBLAS) == "sm90 cuBLAS gemm, tilesize64x256x32"
    other = short("x" * 40)
    assert other.endswith("…") and len(other) == 32


def test_empty_tools_are_tabled_with_their_reason():
    cpu = views.empty_tools({"kernel_stats": CPU, "hlo_stats": CPU,
                             "roofline_model": CPU})
    assert list(cpu.index) == ["kernel_stats", "hlo_stats", "roofline_model"]
    assert cpu["why it has no rows"].str.contains("taken on a CPU").all()
    graphs = views.empty_tools({"kernel_stats": {"kernel_name": ["k"]},
                                "roofline_model": GRAPHS})
    assert list(graphs.index) == ["roofline_model"]
    assert "CUDA graphs" in graphs.iloc[0, 0]
    missing = views.empty_tools({"hlo_stats": "pip install xprof"})
    assert "not installed" in missing.iloc[0, 0]
    assert views.empty_tools({"hlo_stats": {"rank": [1]}}).empty


def test_the_compiled_kernels_are_set_beside_the_recorded_ones():
    events = views.version_events(device_events(6, NAMES), "einsum")
    found = views.thunks_against_profile(COMPILED, events, 3,
                                         ["cublas-lt-matmul.0"])
    assert found == {
        "compiled": 3, "in_buffer": True, "compiled_memsets": False,
        "ran": 3, "memsets": 1,
        "only_ran": ["sm90 cuBLAS gemm, tilesize64x256x32"],
        "only_here": ["gemm_fusion_dot"],
        "memset_ops": ["cublas-lt-matmul.0"]}
    same = views.thunks_against_profile(
        ["kCustomKernel loop_transpose_fusion_2", "kCustomKernel "
         "triton_softmax_2", f"kCustomKernel {CUBLAS}"],
        views.version_events(device_events(6, NAMES, False), "einsum"), 3)
    assert same["in_buffer"] is False and same["compiled"] == 3
    assert same["only_ran"] == same["only_here"] == []
    assert same["memsets"] == 0


def test_tables_with_rows_are_shown_and_empty_ones_tabled(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    kernels = {"kernel_name": [CUBLAS, "triton_softmax_2"],
               "registers_per_thread": [168, 56], "shmem_bytes": [0, 128],
               "occupancy_pct": [18.8, 56.2],
               "is_kernel_using_tensor_core": [True, False],
               "total_duration_us": [13280.0, 5850.0]}
    views.show_xprof_views({"kernel_stats": kernels, "hlo_stats": CPU},
                           "here")
    table, empty = shown
    html = table.to_html()
    assert "sm90 cuBLAS gemm, tilesize64x256x32" in html
    assert "long kernel names shortened" in html
    assert "hlo_stats" in empty.to_html() and "taken on a CPU" in \
        empty.to_html()


def test_thunk_sequences_are_counted_by_kind():
    table = views.thunk_table({
        "default": ["kCommandBuffer", "    kCustomKernel a",
                    "    kCustomKernel b"],
        "off": ["kCustomKernel a", "kCustomKernel b", "kMemset c"]})
    assert table.loc["default"].to_dict() == {
        "launches": 1, "kCommandBuffer": 1,
        "kCustomKernel in a command buffer": 2, "kCustomKernel": 0,
        "kMemset": 0}
    assert table.loc["off", "launches"] == 3
    assert table.loc["off", "kCustomKernel"] == 2
    text = views.thunk_text({"default": ["kCommandBuffer", "    k a"]})
    assert text == "default:\nkCommandBuffer\n    k a"


def rows(durations):
    return pd.DataFrame({"dur_us": durations})


def test_perfetto_s_answer_is_set_beside_pandas():
    same = views.perfetto_sentence("p", rows([1.5, 2.5]), rows([1, 2]),
                                   True)
    assert "finds 2 kernels, 4 µs in all: the same kernels" in same
    assert "no device threads" in views.perfetto_sentence(
        "p", rows([]), rows([]), False)
    assert "carry no scope path" in views.perfetto_sentence(
        "p", rows([]), rows([]), True)
    assert "and the pandas reading of its device events 3" in \
        views.perfetto_sentence("p", rows([1]), rows([1, 2, 3]), True)


def test_without_a_trace_processor_perfetto_says_nothing(monkeypatch):
    monkeypatch.setattr(views.trace, "local_processor", lambda: None)
    monkeypatch.setattr(views.machine, "in_colab", lambda: False)
    assert views.perfetto_checks({"here": "."}, "attn_q_k") == []


def test_a_failed_trace_processor_is_said_plainly(monkeypatch, tmp_path):
    def fails(*args, **kwargs):
        raise RuntimeError("could not start")

    monkeypatch.setattr(views.trace, "local_processor",
                        lambda: Path("/bin/true"))
    monkeypatch.setattr(views.trace, "query", fails)
    said = views.perfetto_checks({"here": tmp_path,
                                  "gone": tmp_path / "none"}, "attn_q_k")
    assert said == ["Perfetto could not run here; the pandas reading "
                    "above answers the same question."]


def device_events(calls, names, memset_per_call=True):
    """Device events of ``calls`` graph launches alternating einsum and
    matmul: each call its kernels (``names[version]``) and a memset, all
    sharing the launch's correlation id."""
    rows = []
    for call in range(calls):
        version = ("einsum", "matmul")[call % 2]
        kernels = (["Memset 0"] if memset_per_call else []) + names[version]
        rows += [{"name": name, "start_us": call * 100.0 + i,
                  "args": {"correlation_id": str(call)}}
                 for i, name in enumerate(kernels)]
    return pd.DataFrame(rows)


NAMES = {"einsum": [CUBLAS, "loop_transpose_fusion_2", "triton_softmax_2"],
         "matmul": [CUBLAS, "input_transpose_fusion_1", "triton_softmax_2"]}


def test_one_versions_calls_are_taken_in_turn():
    events = device_events(6, NAMES)
    einsum = views.version_events(events, "einsum")
    assert len(einsum) == 12
    assert "input_transpose_fusion_1" not in set(einsum["name"])
    matmul = views.version_events(events, "matmul")
    assert "loop_transpose_fusion_2" not in set(matmul["name"])


COMPILED = ["kCommandBuffer", "    kCustomKernel gemm_fusion_dot",
            "    kCustomKernel loop_transpose_fusion_2",
            "    kCustomKernel triton_softmax_2"]


DIFF = ["--- a", "+++ b", "@@ -1,3 +1,3 @@",
        "-c6 v1 = f32[2,4,64,32]{3,2,1,0} parameter(1)",
        "-c6 v2 = f32[2,4,64,64]{3,2,1,0} dot(v0, v1), "
        "lhs_contracting_dims={3}, rhs_contracting_dims={3}",
        "+c6 v1 = f32[2,4,32,64]{3,2,1,0} parameter(1)",
        "+c6 v2 = f32[2,4,64,64]{3,2,1,0} dot(v0, v1), "
        "lhs_contracting_dims={3}, rhs_contracting_dims={2}",
        "+c6 v3 = f32[2,4,64,32]{3,2,1,0} transpose(v1), dimensions={0,1,3,2}"]


def test_a_program_diff_reads_as_a_table_of_what_differs():
    table = views.diff_table(DIFF)
    assert list(table.columns) == ["instruction", "differs in", "einsum",
                                   "matmul"]
    assert table.values.tolist() == [
        ["v1 = parameter (c6)", "shape", "f32[2,4,64,32]{3,2,1,0}",
         "f32[2,4,32,64]{3,2,1,0}"],
        ["v2 = dot (c6)", "rhs_contracting_dims", "{3}", "{2}"],
        ["v3 = transpose (c6)", "whole instruction", "—",
         "f32[2,4,64,32]{3,2,1,0} (v1)"]]
    assert views.diff_table([]).empty
