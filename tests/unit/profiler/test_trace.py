import gzip
import json

import jax
import jax.numpy as jnp
import pandas as pd
import pytest

from helpers.profiler import trace


def test_load_a_real_cpu_profile(tmp_path):
    f = jax.jit(lambda x: (x * 2).sum())
    x = jnp.ones(1024)
    f(x).block_until_ready()
    with jax.profiler.trace(str(tmp_path)):
        with jax.profiler.TraceAnnotation("my_step"):
            f(x).block_until_ready()
    events = trace.load(tmp_path)
    assert list(events.columns) == trace.COLUMNS
    step = events[events["name"] == "my_step"]
    assert len(step) == 1 and step["dur_us"].iloc[0] > 0
    assert step["process"].iloc[0].startswith("/host:")
    assert trace.device_events(events).empty  # no GPU on this machine


def _write(folder, payload):
    run = folder / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    with gzip.open(run / "host.trace.json.gz", "wt") as fh:
        fh.write(payload)


def _names_of(stream):
    """Metadata events: pid 1 is the GPU (tid 7 its stream), pid 2 the
    host."""
    return [{"ph": "M", "pid": 1, "name": "process_name",
             "args": {"name": "/device:GPU:0"}},
            {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name",
             "args": {"name": stream}},
            {"ph": "M", "pid": 2, "name": "process_name",
             "args": {"name": "/host:CPU"}}]


def test_device_events_are_selected_by_process(tmp_path):
    _write(tmp_path, json.dumps({"traceEvents": _names_of("Stream #7") + [
        {"ph": "X", "pid": 1, "tid": 7, "ts": 5, "dur": 3,
         "name": "loop_add_fusion"},
        {"ph": "X", "pid": 2, "tid": 1, "ts": 1, "dur": 9, "name": "step"},
    ]}))
    events = trace.load(tmp_path)
    assert events["name"].tolist() == ["step", "loop_add_fusion"]
    gpu = trace.device_events(events)
    assert gpu["thread"].tolist() == ["Stream #7"]
    assert gpu["dur_us"].tolist() == [3.0]


def test_errors_for_missing_empty_and_foreign_folders(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        trace.load(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no \\*.trace.json.gz"):
        trace.load(tmp_path)
    _write(tmp_path, json.dumps({"something": "else"}))
    with pytest.raises(ValueError, match="no 'traceEvents'"):
        trace.load(tmp_path)


def test_errors_for_a_trace_with_no_events(tmp_path):
    _write(tmp_path, json.dumps({"traceEvents": []}))
    with pytest.raises(ValueError, match="no complete events"):
        trace.load(tmp_path)


def test_errors_for_a_corrupt_file(tmp_path):
    run = tmp_path / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    (run / "x.trace.json.gz").write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="not a gzipped JSON"):
        trace.load(tmp_path)


def test_kernel_events_on_cpu_match_fusion_names(tmp_path):
    from helpers.xla import hlo

    f = jax.jit(lambda x: x + 1)
    x = jnp.ones(4096)
    f(x).block_until_ready()
    with jax.profiler.trace(str(tmp_path)):
        for _ in range(3):
            f(x).block_until_ready()
    names = [fusion.name for fusion in hlo.fusions(f, x)]
    kernels = trace.kernel_events(trace.load(tmp_path), names)
    assert len(kernels) == 3
    assert set(kernels["name"]) == set(names)
    assert trace.kernel_events(trace.load(tmp_path)).empty


def _scoped(x):
    with jax.named_scope("attn_q_k"):
        y = x @ x.T
    with jax.named_scope("attn_att_v"):
        return jnp.tanh(y) @ x


def test_cpu_kernels_get_their_named_scope_from_the_hlo(tmp_path):
    f = jax.jit(_scoped)
    x = jnp.ones((64, 64))
    f(x).block_until_ready()
    with jax.profiler.trace(str(tmp_path)):
        for _ in range(2):
            f(x).block_until_ready()
    events = trace.load(tmp_path)
    assert (events["scope"] == "").all()  # the CPU trace has no paths
    text = f.lower(x).compile().as_text()
    scoped = trace.attach_scopes(events, text)
    q_k = trace.in_scope(scoped, "attn_q_k")
    att_v = trace.in_scope(scoped, "attn_att_v")
    assert len(q_k) == 2 and (q_k["scope"].str.endswith("dot_general")).all()
    assert len(att_v) >= 2  # the second matmul, and tanh when not fused
    assert set(q_k.index).isdisjoint(att_v.index)


def _gpu_like_trace():
    """A trace shaped like a jax.profiler GPU trace (made up here, not
    recorded): kernels on a device process, with hlo_op and name args."""
    def kernel(ts, hlo_op, path):
        return {"ph": "X", "pid": 1, "tid": 7, "ts": ts, "dur": 4.5,
                "name": "sm90_gemm", "args": {"hlo_op": hlo_op,
                                               "name": path}}
    return {"traceEvents": _names_of("Stream #7(Compute)") + [
        {"ph": "X", "pid": 2, "tid": 1, "ts": 1, "dur": 50, "name": "step"},
        kernel(10, "custom-call.1", "jit(f)/attn_q_k/dot_general"),
        kernel(20, "custom-call.2", "jit(f)/attn_att_v/dot_general"),
        kernel(30, "custom-call.1", "jit(f)/attn_q_k2/dot_general"),
    ]}


def test_gpu_kernels_carry_their_scope_and_hlo_op(tmp_path):
    _write(tmp_path, json.dumps(_gpu_like_trace()))
    events = trace.load(tmp_path)
    q_k = trace.in_scope(events, "attn_q_k")
    assert q_k["start_us"].tolist() == [10.0]  # not attn_q_k2
    assert q_k["hlo_op"].tolist() == ["custom-call.1"]
    assert q_k["thread"].tolist() == ["Stream #7(Compute)"]
    with pytest.raises(ValueError, match="one jax.named_scope name"):
        trace.in_scope(events, "jit(f)/attn_q_k")


def test_trim_keeps_device_events_and_names(tmp_path):
    _write(tmp_path / "full", json.dumps(_gpu_like_trace()))
    out = trace.trim(tmp_path / "full", tmp_path / "small")
    assert out.exists()
    small = trace.load(tmp_path / "small")
    assert small["name"].tolist() == ["sm90_gemm"] * 3
    assert set(small["process"]) == {"/device:GPU:0"}
    _write(tmp_path / "cpu", json.dumps({"traceEvents": [
        {"ph": "X", "pid": 2, "tid": 1, "ts": 1, "dur": 5, "name": "s"}]}))
    with pytest.raises(ValueError, match="no device events"):
        trace.trim(tmp_path / "cpu", tmp_path / "nothing")


def test_scope_sql_asks_for_device_slices_in_the_scope():
    sql = trace.scope_sql("attn_q_k")
    assert "GLOB '*/attn_q_k/*'" in sql and "'/device:*'" in sql
    with pytest.raises(ValueError, match="one jax.named_scope name"):
        trace.scope_sql("x'; DROP TABLE slice; --")


def test_query_explains_a_missing_package_or_binary(tmp_path, monkeypatch):
    import sys

    _write(tmp_path, json.dumps(_gpu_like_trace()))
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "perfetto", None)  # as if not installed
        patch.setitem(sys.modules, "perfetto.trace_processor", None)
        with pytest.raises(ImportError, match="pip install perfetto"):
            trace.query(tmp_path, "select 1")
    pytest.importorskip("perfetto")
    with pytest.raises(FileNotFoundError, match="no trace processor"):
        trace.query(tmp_path, "select 1", binary=tmp_path / "missing")


def _trace_processor_binary():
    """A local trace_processor_shell, or skip: the test needs one and this
    machine may have no network to download it."""
    binary = trace.local_processor()
    if binary is None:
        pytest.skip("no trace_processor_shell here; set "
                    "PERFETTO_TRACE_PROCESSOR to its path to run this test")
    return binary


def test_local_processor_honours_the_environment(tmp_path, monkeypatch):
    program = tmp_path / "trace_processor_shell"
    program.write_text("")
    monkeypatch.setenv("PERFETTO_TRACE_PROCESSOR", str(program))
    assert trace.local_processor() == program


def test_query_returns_the_same_rows_as_pandas(tmp_path):
    pytest.importorskip("perfetto")
    binary = _trace_processor_binary()
    _write(tmp_path, json.dumps(_gpu_like_trace()))
    rows = trace.query(tmp_path, trace.scope_sql("attn_q_k"), binary=binary)
    expected = trace.in_scope(trace.device_events(trace.load(tmp_path)),
                              "attn_q_k")
    assert rows["start_us"].tolist() == expected["start_us"].tolist()
    assert rows["dur_us"].tolist() == expected["dur_us"].tolist()
    assert rows["scope"].tolist() == expected["scope"].tolist()


def test_kernels_inside_a_cuda_graph_get_their_scope_from_their_name():
    """As jax 0.11.2 traced an H100 (first GPU visit): a kernel run by a
    CUDA graph carries the graph's hlo_op and no scope, and its name is
    its fusion's with '.' written '_'."""
    hlo_text = (
        "HloModule jit_attention\nENTRY %main {\n"
        "  %gemm_fusion_dot.2 = f32[8,8]{1,0} fusion(), kind=kCustom, "
        'calls=%c, metadata={op_name="jit(attention)/attn_q_k/dot_general"}'
        "\n  %loop_add_fusion = f32[8,8]{1,0} fusion(), kind=kLoop, "
        'calls=%d, metadata={op_name="jit(attention)/add"}\n}\n')
    events = pd.DataFrame({
        "name": ["gemm_fusion_dot_2", "loop_add_fusion", "gemm_fusion_dot_2"],
        "hlo_op": ["command_buffer_1", "command_buffer_1",
                   "gemm_fusion_dot.2"],
        "scope": ["", "", ""]})
    scoped = trace.attach_scopes(events, hlo_text)
    assert scoped["scope"].tolist() == [
        "jit(attention)/attn_q_k/dot_general", "jit(attention)/add",
        "jit(attention)/attn_q_k/dot_general"]
