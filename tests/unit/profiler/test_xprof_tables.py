"""XProf's tables as DataFrames: a real CPU profile made here, a
GPU-shaped table and xplane written by hand, and the errors for bad
input."""

import gzip
import json

import jax
import jax.numpy as jnp
import pytest

from helpers.profiler import xplanes
from helpers.profiler import xprof_tables as xt

from book_paths import RECORDED

pytest.importorskip("xprof")


@pytest.fixture(scope="module")
def cpu_profile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("profile")
    f = jax.jit(lambda x: jnp.tanh(x @ x).sum())
    x = jnp.ones((128, 128))
    f(x).block_until_ready()
    with jax.profiler.trace(str(folder)):
        for _ in range(3):
            f(x).block_until_ready()
    return folder


@pytest.mark.slow
def test_every_tool_converts_a_cpu_profile_to_typed_frames(cpu_profile):
    for tool in xt.TOOLS:
        frames = xt.tables(cpu_profile, tool)
        assert frames and len(frames[0].columns) > 1
    stats = xt.tables(cpu_profile, "hlo_stats")[0]
    assert {"hlo_op_name", "total_time_us", "avg_time_us"} <= \
        set(stats.columns)
    assert str(stats["total_time_us"].dtype) == "float64"


def test_an_empty_device_table_is_explained_not_returned(cpu_profile):
    # XLA:CPU's work runs on host threads: XProf's device tables are empty
    with pytest.raises(ValueError, match="no rows for this profile.*"
                       "helpers.profiler.trace.load"):
        xt.table(cpu_profile, "kernel_stats")


def test_a_gpu_shaped_table_gets_units_and_types():
    gviz = {"cols": [
        {"id": "kernel_name", "label": "Kernel Name", "type": "string"},
        {"id": "registers_per_thread", "label": "Registers per thread",
         "type": "number"},
        {"id": "occupancy_pct", "label": "Theoretical occupancy (%)",
         "type": "number"},
        {"id": "total_duration_us", "label": "Total Duration (us)",
         "type": "number"},
        {"id": "is_kernel_using_tensor_core", "label": "TC used",
         "type": "boolean"}],
        "rows": [{"c": [{"v": "loop_fusion"}, {"v": 32}, {"v": 100.0},
                        {"v": 12.5}, {"v": False}]},
                 {"c": [{"v": "gemm"}, {"v": 168}, None, {"v": 80.0},
                        {"v": True}]}],
        "p": {"device_type": "GPU"}}
    frame = xt._frame(gviz)
    assert list(frame.columns) == [
        "kernel_name", "registers_per_thread", "occupancy_pct",
        "total_duration_us", "is_kernel_using_tensor_core"]
    assert frame["registers_per_thread"].tolist() == [32.0, 168.0]
    assert frame["occupancy_pct"].isna().tolist() == [False, True]
    assert frame.attrs["device_type"] == "GPU"
    assert xt._column_name({"id": "total_time", "label": "Total time (us)"}
                           ) == "total_time_us"


def _field(number, payload):
    """A length-delimited protobuf field (wire type 2), lengths < 128."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def _xspace(*names):
    # XSpace: planes = field 1; XPlane: id = field 1 (varint), name = 2.
    planes = [_field(1, bytes([1 << 3, i]) + _field(2, n.encode()))
              for i, n in enumerate(names)]
    return b"".join(planes) + _field(4, b"host-a")  # hostnames = field 4


def test_trim_keeps_the_device_and_metadata_planes_and_says_so(tmp_path):
    run = tmp_path / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    (run / "h.xplane.pb").write_bytes(_xspace(
        "/device:GPU:0", "/host:CPU", "/host:metadata"))
    assert xplanes.plane_names(run / "h.xplane.pb") == [
        "/device:GPU:0", "/host:CPU", "/host:metadata"]
    [trimmed] = xplanes.trim(tmp_path, tmp_path / "out")
    assert trimmed.name == "h.xplane.pb.gz"
    assert xplanes.plane_names(trimmed) == ["/device:GPU:0", "/host:metadata"]
    assert gzip.decompress(trimmed.read_bytes()).endswith(
        _field(4, b"host-a"))
    note = json.loads((trimmed.parent / "h.xplane.pb.trimmed.json")
                      .read_text())
    assert note["planes dropped"] == ["/host:CPU"]
    assert note["bytes after"] < note["bytes before"] and note["gzipped"]
    [plain] = xplanes.trim(tmp_path, tmp_path / "plain", compress=False)
    assert plain.read_bytes().endswith(_field(4, b"host-a"))


@pytest.mark.slow
def test_trim_of_a_real_profile_stays_readable(cpu_profile, tmp_path):
    [trimmed] = xplanes.trim(cpu_profile, tmp_path)
    assert "/host:CPU" not in xplanes.plane_names(trimmed)
    assert xt.tables(tmp_path, "hlo_stats")[0].columns[0] == "rank"


def test_bad_input_gets_a_clear_error(tmp_path, cpu_profile):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        xt.tables(tmp_path / "nowhere", "hlo_stats")
    with pytest.raises(FileNotFoundError, match="no \\*.xplane.pb"):
        xt.tables(tmp_path, "hlo_stats")
    with pytest.raises(ValueError, match="unknown XProf tool 'memory'"):
        xt.tables(cpu_profile, "memory")
    garbage = tmp_path / "plugins" / "x.xplane.pb"
    garbage.parent.mkdir(parents=True)
    garbage.write_bytes(b"not a profile at all")
    with pytest.raises(ValueError, match="made nothing of|could not read"):
        xt.tables(tmp_path, "hlo_stats")


def test_a_missing_xprof_says_how_to_install_it(monkeypatch, cpu_profile):
    import builtins

    real_import = builtins.__import__

    def no_xprof(name, *args, **kwargs):
        if name.startswith("xprof"):
            raise ImportError("No module named 'xprof'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_xprof)
    with pytest.raises(ModuleNotFoundError, match="pip install xprof"):
        xt.tables(cpu_profile, "hlo_stats")


def test_chapter_4_views_say_what_a_cpu_profile_lacks(cpu_profile):
    from helpers.workbook.ch04_profiling import attention

    views = attention.xprof_views(cpu_profile)
    assert set(views) == set(attention.XPROF_TOOLS)
    assert all(isinstance(v, str) and "no rows" in v for v in views.values())
    with pytest.raises(FileNotFoundError):
        attention.xprof_views(cpu_profile / "nowhere")


def test_chapter_4_tables_the_empty_tools_of_a_cpu_profile(cpu_profile,
                                                           monkeypatch):
    """Every tool of a CPU profile is empty, for the same reason: one
    table lists them all, each with it."""
    from helpers.workbook.ch04_profiling import attention, profile_views

    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    profile_views.show_xprof_views(attention.xprof_views(cpu_profile))
    assert len(shown) == 1
    empty = shown[0].data
    assert list(empty.index) == list(attention.XPROF_TOOLS)
    assert empty["why it has no rows"].str.endswith(
        "device analyses leave out").all()


def test_chapter_3_xprof_count_gives_the_reason_on_a_cpu(cpu_profile):
    from helpers.workbook.ch03_launches import on_gpu

    reason = on_gpu.xprof_launches(str(cpu_profile), steps=3)
    assert isinstance(reason, str) and "kernel_stats has no rows" in reason


H100_PROFILE = (RECORDED /
                "nvidia-h100-80gb-hbm3" / "04_profiling" / "profile")


@pytest.mark.skipif(not H100_PROFILE.exists(),
                    reason="no recorded H100 profile in this checkout")
def test_the_recorded_h100_profile_gives_xprof_kernel_tables():
    """The trimmed xplane chapter 4 keeps from the first GPU visit (jax
    0.11.2, an H100): XProf reads its kernels here, with no GPU."""
    assert xplanes.plane_names(xplanes.xplane_files(H100_PROFILE)[0]) == [
        "/host:metadata", "/device:GPU:0"]
    kernels = xt.table(H100_PROFILE, "kernel_stats")
    assert len(kernels) >= 10
    assert kernels["is_kernel_using_tensor_core"].any()  # the TF32 GEMMs
    assert (kernels["registers_per_thread"] > 0).all()
    assert (kernels["occupancy_pct"] > 0).all()
    assert (kernels["occurrences"] > 0).all()


def test_hlo_tables_of_a_cuda_graph_profile_say_why_they_are_empty():
    """Every kernel of the recorded profile ran in a CUDA graph and is
    labelled with the command buffer, not its HLO op: XProf's HLO table
    is empty, and the reason names the buffer and the compile option that
    gives per-op tables."""
    assert xplanes.command_buffers(H100_PROFILE) == ["command_buffer_1"]
    with pytest.raises(ValueError) as raised:
        xt.table(H100_PROFILE, "hlo_stats")
    message = str(raised.value)
    assert "ran inside CUDA graphs" in message
    assert "command_buffer_1" in message
    assert str(xt.NO_COMMAND_BUFFERS) in message


def test_the_roofline_of_a_cuda_graph_profile_is_explained_not_zeros():
    """XProf's roofline_model of the same profile holds only whole-program
    rows (zero rates, bound by 'Unknown'): they place no op on the
    roofline, so the table is reported empty, with the same reason."""
    raw = xt.tables(H100_PROFILE, "roofline_model")[0]
    assert set(raw["category"]) == {"Program"}
    assert set(raw["bound_by"]) == {"Unknown"}
    with pytest.raises(ValueError, match="ran inside CUDA graphs"):
        xt.table(H100_PROFILE, "roofline_model")


def test_a_cpu_profile_has_no_command_buffers(cpu_profile):
    assert xplanes.command_buffers(cpu_profile) == []


def test_a_gzipped_trimmed_profile_reads_as_the_original(tmp_path):
    """What a recording keeps (`trim`, gzipped) gives XProf's same kernel
    table, at a fraction of the bytes."""
    [kept] = xplanes.trim(H100_PROFILE, tmp_path)
    original = xplanes.xplane_files(H100_PROFILE)[0].read_bytes()
    if original[:2] == b"\x1f\x8b":  # the recording keeps it gzipped
        original = gzip.decompress(original)
    assert kept.stat().st_size < len(original) / 4
    assert xt.table(tmp_path, "kernel_stats").equals(
        xt.table(H100_PROFILE, "kernel_stats"))


def test_kernel_totals_sum_xprof_kernel_table():
    kernels = xt.table(H100_PROFILE, "kernel_stats")
    totals = xt.kernel_totals(H100_PROFILE)
    assert totals["kernels"] == kernels["occurrences"].sum() > 0
    assert totals["device_us"] == pytest.approx(
        kernels["total_duration_us"].sum())


def test_units_in_microseconds_are_named_once():
    """XProf labels kernel times "(μs)" on ids already ending in _us."""
    kernels = xt.table(H100_PROFILE, "kernel_stats")
    assert "total_duration_us" in kernels.columns
    assert not [c for c in kernels.columns if "μ" in c or c.endswith("_us_us")]


def test_key_columns_keep_what_the_page_discusses_in_order():
    kernels = xt.key_columns(xt.table(H100_PROFILE, "kernel_stats"),
                             "kernel_stats")
    assert list(kernels.columns) == [xt.SHORT_HEADERS.get(c, c) for c in
                                     xt.KEY_COLUMNS["kernel_stats"]]
    assert list(kernels.columns[:2]) == ["kernel", "registers"]
    with pytest.raises(ValueError, match="choose one of"):
        xt.key_columns(kernels, "trace_viewer")
    with pytest.raises(ValueError, match="another tool's"):
        xt.key_columns(kernels[["kernel"]], "hlo_stats")


def test_xprof_native_notes_stay_off_the_page(capfd):
    """XProf's C++ code notes "falling back to legacy" on stderr; the
    table comes back without that text on the reader's page."""
    xt.table(H100_PROFILE, "kernel_stats")
    assert "UnifiedProfileProcessor" not in capfd.readouterr().err


def test_a_failed_conversion_carries_xprof_native_log(tmp_path):
    run = tmp_path / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    (run / "host.xplane.pb").write_bytes(b"\x0a\x05bogus not a profile")
    with pytest.raises(ValueError, match="could not read|made nothing"):
        xt.table(tmp_path, "kernel_stats")


def test_chapter_3_counts_kept_profiles_here_and_falls_back(
        tmp_path, monkeypatch):
    """A recording of chapter 3's variants keeps one profile per variant;
    XProf counts each here. Without a kept profile, the count the GPU run
    made stands, and a reason string (XProf had no table) counts as
    none."""
    import shutil

    from helpers.measuring import recorded, results
    from helpers.workbook.ch03_launches import on_gpu

    monkeypatch.setenv("BOOK_RECORDED_DIR", str(tmp_path))
    provenance = {"device": "NVIDIA H100 80GB HBM3"}
    name = on_gpu.kept_profile("while, traced bound")
    assert name == "03_launches/profile-while-traced-bound"
    xplanes.trim(H100_PROFILE, recorded.profile_folder(name))
    counted_on_gpu = {"scan, noise outside": 3.0,
                      "scan, split per step": "no kernel table"}
    result = results.Result("03_launches/variants", "recorded", {
        "profiled_steps": 4, "xprof_launches_per_step": counted_on_gpu},
        provenance)
    counts = on_gpu.xprof_launches_of_recording(result)
    assert counts["while, traced bound"] == \
        xt.kernel_totals(H100_PROFILE)["kernels"] / 4
    assert counts["scan, noise outside"] == 3.0  # the GPU run's own count
    assert counts["scan, split per step"] is None  # a reason, not a count
    assert counts["fused_scan (one kernel)"] is None  # neither
    shutil.rmtree(tmp_path / "nvidia-h100-80gb-hbm3")
    assert on_gpu.xprof_launches_of_recording(result)[
        "while, traced bound"] is None


def test_key_columns_cut_long_names_to_fit_a_page():
    import pandas as pd

    long = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_cublas"
    other = "loop_multiply_add_fusion_with_a_very_long_name_1"
    frame = pd.DataFrame({"kernel_name": [long, other, "short"],
                          "total_duration_us": [1.0, 2.0, 3.0]})
    shown = xt.key_columns(frame, "kernel_stats")
    # a cuBLAS GEMM keeps what tells two apart; another name is cut
    cut = other[:xt.NAME_CHARS - 1] + "…"
    assert shown["kernel"].tolist() == [
        "sm90 cuBLAS gemm, tilesize64x128x32", cut, "short"]
    assert frame["kernel_name"][0] == long  # the caller's table untouched
