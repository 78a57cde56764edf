"""helpers.measuring.device_time: per-call device time from a profile.

Real CPU profiles, the recorded H100 trace of chapter 4, and fake traces
for the cases no machine here can make (overlapping streams, CUDA
graphs, no kernels at all).
"""

import gzip
import json

import jax
import jax.numpy as jnp
import pytest

from helpers.measuring import device_time, recorded
from helpers.measuring.device_time import CALL_MARK, DeviceTiming
from helpers.profiler import trace, xprof_tables


def write_trace(folder, device_events=(), host_events=()):
    """A jax.profiler-shaped folder holding one trace: device events on
    /device:GPU:0 (tid = stream) and host events on the python thread."""
    target = folder / "plugins" / "profile" / "fake"
    target.mkdir(parents=True)
    events = [
        {"ph": "M", "pid": 1, "name": "process_name",
         "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 2, "name": "process_name",
         "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 2, "tid": 9, "name": "thread_name",
         "args": {"name": "python"}}]
    for stream, start, dur, args in device_events:
        events.append({"ph": "X", "pid": 1, "tid": stream, "ts": start,
                       "dur": dur, "name": f"kernel@{start}",
                       "args": args})
    for name, start, dur in host_events:
        events.append({"ph": "X", "pid": 2, "tid": 9, "ts": start,
                       "dur": dur, "name": name, "args": {}})
    with gzip.open(target / "host.trace.json.gz", "wt") as fh:
        json.dump({"traceEvents": events}, fh)
    return folder


def calls(*windows):
    """Host annotations for calls 0, 1, ... over the given windows."""
    return [(f"{CALL_MARK} {i}", start, end - start)
            for i, (start, end) in enumerate(windows)]


def test_per_call_sums_and_spans_each_calls_kernels(tmp_path):
    events = trace.load(write_trace(
        tmp_path,
        device_events=[(7, 10, 5, {}), (7, 20, 3, {}),   # call 0
                       (7, 110, 40, {}),                  # call 1
                       (7, 500, 9, {})],                  # after the calls
        host_events=calls((0, 50), (100, 200))))
    table = device_time.per_call(events, device_time.call_windows(events))
    assert table["kernels"].tolist() == [2, 1]
    assert table["kernel_us"].tolist() == [8, 40]
    assert table["span_us"].tolist() == [13, 40]  # 10 to 23; 110 to 150
    assert table["in_graph"].tolist() == [0, 0]


def test_overlapping_streams_sum_more_than_they_span(tmp_path):
    events = trace.load(write_trace(
        tmp_path, device_events=[(7, 10, 30, {}), (8, 15, 30, {})],
        host_events=calls((0, 100))))
    row = device_time.per_call(events, [(0, 100)]).iloc[0]
    assert row["kernel_us"] == 60 and row["span_us"] == 35


def test_kernels_inside_a_cuda_graph_are_counted_and_marked(tmp_path):
    graph = {"cuda_graph_id": "52", "hlo_op": "command_buffer_1"}
    events = trace.load(write_trace(
        tmp_path, device_events=[(7, 10, 2, graph), (7, 12, 2, graph),
                                 (7, 30, 1, {})],
        host_events=calls((0, 20), (25, 40))))
    table = device_time.per_call(events, device_time.call_windows(events))
    assert table["kernels"].tolist() == [2, 1]
    assert table["in_graph"].tolist() == [1.0, 0.0]


def test_no_kernel_events_is_a_clear_error(tmp_path):
    events = trace.load(write_trace(tmp_path,
                                    host_events=calls((0, 10))))
    with pytest.raises(ValueError, match="no kernel events"):
        device_time.per_call(events, [(0, 10)])


def test_a_call_without_kernels_is_named(tmp_path):
    events = trace.load(write_trace(
        tmp_path, device_events=[(7, 5, 1, {})],
        host_events=calls((0, 10), (20, 30))))
    with pytest.raises(ValueError, match="call 1 ran no kernel"):
        device_time.per_call(events, device_time.call_windows(events))


def test_a_profile_without_call_annotations_says_how_to_make_them(tmp_path):
    events = trace.load(write_trace(tmp_path,
                                    device_events=[(7, 5, 1, {})],
                                    host_events=[("other", 0, 10)]))
    with pytest.raises(ValueError, match="TraceAnnotation"):
        device_time.call_windows(events)
    with pytest.raises(ValueError, match="at least one call window"):
        device_time.per_call(events, [])


def test_call_windows_are_in_call_order_not_name_order(tmp_path):
    events = trace.load(write_trace(
        tmp_path, host_events=[(f"{CALL_MARK} {i}", 10.0 * i, 5)
                               for i in range(12)]))
    windows = device_time.call_windows(events)
    assert [start for start, _ in windows] == [10.0 * i for i in range(12)]


@pytest.mark.slow
def test_recorded_h100_trace_agrees_with_xprofs_kernel_table():
    """Chapter 4's H100 profile: 400 calls, each one CUDA graph launch
    (its kernels share the launch's correlation id). Read per call, the
    kernels add up to XProf's own kernel total for the same profile."""
    folder = recorded.profile_folder("04_profiling/profile")
    events = trace.load(folder)
    kernels = device_time.kernel_events(events)
    groups = kernels.assign(end=kernels["start_us"] + kernels["dur_us"]) \
        .groupby(kernels["args"].map(lambda a: a["correlation_id"]))
    windows = sorted(zip(groups["start_us"].min(), groups["end"].max()))
    table = device_time.per_call(events, windows)
    assert len(table) == 400
    assert set(table["kernels"]) == {10}
    assert (table["in_graph"] == 1.0).all()
    assert (table["span_us"] >= table["kernel_us"] - 1e-6).all()
    by_xprof = xprof_tables.kernel_totals(folder)
    assert table["kernel_us"].sum() == pytest.approx(
        by_xprof["device_us"], rel=0.01)


def test_measure_on_this_machine_reads_xlas_own_steps():
    add_one = jax.jit(lambda v: v + 1)
    timing = device_time.measure(add_one, jnp.ones(2**16), repeat=4)
    assert timing.kernels_from == "XLA:CPU thunks"
    assert timing.kernels_per_call == 1.0  # one fusion
    assert timing.span.n == timing.wall.n == 4
    assert timing.kernel.median <= timing.span.median + 1e-9
    assert timing.median == timing.span.median
    assert timing.overhead_s == pytest.approx(
        timing.wall.median - timing.span.median)
    assert "host overhead" in repr(timing)


def test_a_loop_counts_its_outer_step_once():
    def loop(x):
        return jax.lax.fori_loop(0, 50, lambda i, c: jnp.sin(c) + 1, x)

    timing = device_time.measure(jax.jit(loop), jnp.ones(4096), repeat=3)
    # the while thunk encloses its body's; only the outermost count
    assert timing.kernel.median <= timing.span.median + 1e-9


def test_device_timing_round_trips_and_rotates_inputs():
    arrays = [(jnp.full(1024, float(i)),) for i in range(3)]
    timing = device_time.measure(jax.jit(lambda v: v * 2), rotate=arrays,
                                 repeat=6, name="double")
    again = DeviceTiming.from_dict(json.loads(json.dumps(timing.to_dict())))
    assert again == timing and again.name == "double"
    assert timing.throughput(bytes=8192)["byte/s"] == pytest.approx(
        8192 / timing.median)


def test_measure_inside_another_profile_says_why_it_cannot(tmp_path):
    add_one = jax.jit(lambda v: v + 1)
    with jax.profiler.trace(str(tmp_path)):
        with pytest.raises(RuntimeError, match="one at a time"):
            device_time.measure(add_one, jnp.ones(8), repeat=2)


def test_fewer_calls_can_be_profiled_than_timed():
    timing = device_time.measure(jax.jit(lambda v: v + 1), jnp.ones(64),
                                 repeat=6, profiled=2)
    assert timing.wall.n == 6 and timing.span.n == timing.kernel.n == 2
    with pytest.raises(ValueError, match="profiled must be"):
        device_time.measure(jax.jit(lambda v: v), jnp.ones(2), profiled=0)


def test_measure_refuses_what_benchmark_refuses():
    with pytest.raises(TypeError, match="nothing to wait for"):
        device_time.measure(lambda: (), repeat=2)
    with pytest.raises(ValueError, match="repeat must be"):
        device_time.measure(jax.jit(lambda v: v), jnp.ones(2), repeat=0)


def test_several_cases_share_one_profile_and_keep_their_own_calls():
    double = jax.jit(lambda v: v * 2)
    loop = jax.jit(lambda v: jax.lax.fori_loop(
        0, 20, lambda i, c: jnp.sin(c), v))
    x = jnp.ones(4096)
    found = device_time.measure_all(
        {"double": (double, [(x,)]), "loop": (loop, [(x,), (x + 1,)])},
        repeat=4, profiled=3)
    assert list(found) == ["double", "loop"]
    assert found["double"].span.n == found["loop"].span.n == 3
    assert found["double"].kernels_per_call == 1.0
    assert found["loop"].span.median > found["double"].span.median
    assert found["loop"].wall.n == 4
