import gzip
import json

import jax
import jax.numpy as jnp
import pytest

from helpers import trace


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


def test_device_events_are_selected_by_process(tmp_path):
    _write(tmp_path, json.dumps({"traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name",
         "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name",
         "args": {"name": "Stream #7"}},
        {"ph": "M", "pid": 2, "name": "process_name",
         "args": {"name": "/host:CPU"}},
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
    from helpers import hlo

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
