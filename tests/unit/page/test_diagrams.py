"""The book's pictures draw what their parameters say."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from helpers.page import diagrams, plots  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_warp_reads_counts_the_sectors_each_emitter_fetches():
    fig = diagrams.warp_reads(25, lanes=8)
    loop, shared = (ax.get_title() for ax in fig.axes)
    assert "256 bytes fetched for 32 used" in loop
    assert "32 bytes fetched for 32 used" in shared
    # K = 4: two lanes share each sector even one thread per row
    assert "128 bytes fetched" in diagrams.warp_reads(4).axes[0].get_title()


def test_launch_timeline_draws_each_setting_to_its_measured_length():
    fig = diagrams.launch_timeline(5, {"graphs off": 20.0,
                                       "CUDA graph": 5.0}, steps=3)
    off, graph = fig.axes
    assert off.get_title() == "graphs off: 20 µs per step"
    host = [p for p in off.patches if p.get_y() > 1]
    assert len(host) == 3 * 5  # a launch per kernel
    assert len([p for p in graph.patches if p.get_y() > 1]) == 3
    assert off.get_xlim()[1] >= 60


def test_pipeline_schedule_names_its_bubble():
    fig = diagrams.pipeline_schedule(4, 6)
    assert "idles 33%" in fig.axes[0].get_title()
    assert len(fig.axes[0].patches) == 4 * 6


def test_a_circular_schedule_takes_each_microbatch_around_again():
    fig = diagrams.pipeline_schedule(4, 5, repeats=2)
    ax = fig.axes[0]
    # the source's loop: 2 x 5 + 4 - 1 = 13 steps, 3 of them idle
    assert ax.get_xlim() == (0, 13)
    assert "2 trips around the ring" in ax.get_title()
    assert "idles 23%" in ax.get_title()
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(ax.patches) == 2 * 4 * 5 and len(hatched) == 4 * 5
    with pytest.raises(ValueError, match="microbatches >= stages"):
        diagrams.pipeline_schedule(4, 3, repeats=2)


def test_mesh_and_ring_draw_every_device():
    texts = [t.get_text() for t in diagrams.mesh(
        (2, 4), ("data", "model")).axes[0].texts]
    assert [f"GPU {i}" for i in range(8)] == [t for t in texts
                                              if t.startswith("GPU")]
    ring = diagrams.ring(6).axes[0]
    assert sorted(t.get_text() for t in ring.texts) == list("012345")


@pytest.mark.parametrize("call", [
    lambda: diagrams.warp_reads(0), lambda: diagrams.ring(1),
    lambda: diagrams.pipeline_schedule(0, 3),
    # One axis name where mesh needs two: wrong on purpose.
    lambda: diagrams.mesh((2, 4), ("data",)),  # type: ignore[arg-type]
    lambda: diagrams.launch_timeline(0, {"a": 1.0})])
def test_bad_parameters_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_roofline_marks_the_ridge_point_and_places_each_kernel():
    kernels = pd.DataFrame({"kernel": ["copy", "matmul"],
                            "flops": [1e9, 1e13], "bytes": [4e9, 1e9],
                            "seconds": [2e-3, 0.05]})
    ax = plots.roofline(2e12, {"tf32": 4e14}, kernels, title="GPU")
    labels = [t.get_text() for t in ax.texts]
    assert "ridge point\n200 FLOP/byte" in labels
    assert {"copy", "matmul"} <= set(labels)
    points = [line.get_xydata()[0] for line in ax.lines
              if line.get_marker() == "o"]
    assert points[0].tolist() == pytest.approx([0.25, 0.5])  # TFLOP/s


def test_roofline_legend_stays_off_the_roofs_in_a_narrow_panel():
    from helpers.page import legends
    # chapter 1's two panels: an elementwise kernel and a large matmul
    kernels = pd.DataFrame({"kernel": ["2x + 1", "matmul"],
                            "flops": [1e9, 2 * 16384 ** 3],
                            "bytes": [4e9, 3 * 16384 ** 2 * 4],
                            "seconds": [2e-3, 0.03]})
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), layout="constrained")
    for ax in axes:
        plots.roofline(3.3e12, {"float32, default (TF32)": 4e14,
                                "float32, highest": 5e13}, kernels,
                       ax=ax, title="GPU")
    assert legends.covering_data(fig) == []


def test_roofline_refuses_missing_columns():
    with pytest.raises(KeyError, match="seconds"):
        plots.roofline(1e9, {"x": 1e12}, pd.DataFrame(
            {"kernel": ["a"], "flops": [1], "bytes": [1]}), title="t")
