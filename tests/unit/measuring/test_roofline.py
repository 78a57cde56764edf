import jax.numpy as jnp
import pytest

from helpers.measuring import roofline
from helpers.measuring.bench import Timing
from helpers.measuring.roofline import Ceilings, floor

CEIL = Ceilings("test", copy_bytes_per_s=1e12,
                matmul_flops_per_s={"float32": 1e14})


def test_floor_memory_bound():
    f = floor(bytes=8e9, flops=1e9, ceilings=CEIL)
    assert f.seconds == pytest.approx(8e-3)
    assert f.bound == "memory"
    assert f.compute_s == pytest.approx(1e-5)


def test_floor_compute_bound():
    f = floor(bytes=1e6, flops=1e12, ceilings=CEIL)
    assert f.bound == "compute" and f.seconds == pytest.approx(1e-2)


def test_floor_rejects_bad_input():
    with pytest.raises(ValueError, match="needs bytes="):
        floor(ceilings=CEIL)
    with pytest.raises(ValueError, match=">= 0"):
        floor(bytes=-1, ceilings=CEIL)
    with pytest.raises(KeyError, match="no measured matmul rate"):
        floor(flops=1, ceilings=CEIL, dtype="bfloat16")


def test_achieved_fraction():
    assert roofline.achieved(Timing("t", (2.0,)), 1.0) == 0.5
    assert roofline.achieved(4.0, floor(bytes=1e12, ceilings=CEIL)) == 0.25
    with pytest.raises(ValueError, match="positive"):
        roofline.achieved(0.0, 1.0)


def test_cost_reads_xla_cost_analysis():
    x = jnp.ones((1000,), jnp.float32)
    c = roofline.cost(lambda a: a * 2 + 1, x)
    assert c.flops == pytest.approx(2000, rel=0.1)
    # reads 4000 bytes and writes 4000 bytes
    assert c.bytes_accessed == pytest.approx(8000, rel=0.1)


def test_cost_handles_missing_analysis(monkeypatch):
    class NoAnalysis:
        def cost_analysis(self):
            return None

    from helpers.xla import hlo
    monkeypatch.setattr(hlo, "compiled", lambda fn, *a: NoAnalysis())
    assert roofline.cost(lambda a: a, 1.0) == roofline.Cost(None, None)


def test_cost_handles_old_list_shape(monkeypatch):
    class OldAnalysis:
        def cost_analysis(self):
            return [{"flops": 3.0, "bytes accessed": 8.0}]

    from helpers.xla import hlo
    monkeypatch.setattr(hlo, "compiled", lambda fn, *a: OldAnalysis())
    assert roofline.cost(lambda a: a, 1.0) == roofline.Cost(3.0, 8.0)


def test_measured_ceilings_are_positive_and_plausible():
    bw = roofline.copy_bandwidth(2**22, total=2**24, repeat=3)
    rate = roofline.matmul_rate(128, repeat=3)
    assert 1e8 < bw < 1e13
    assert 1e6 < rate < 1e15
    with pytest.raises(ValueError, match="at least 4"):
        roofline.copy_bandwidth(2)
    with pytest.raises(ValueError, match="positive"):
        roofline.matmul_rate(-1)


def test_ceilings_repr():
    assert repr(CEIL) == ("Ceilings(test: copy 1000 GB/s, float32 matmul "
                          "100 TFLOP/s)")


@pytest.mark.slow
def test_float32_is_measured_at_both_precisions():
    # on a GPU with tensor cores the default is TF32: a separate ceiling
    ceilings = roofline.measure_ceilings(("float32",), n=64)
    assert set(ceilings.matmul_flops_per_s) == {
        "float32", f"float32, {roofline.HIGHEST}"}
    assert all(rate > 0 for rate in ceilings.matmul_flops_per_s.values())


def test_a_fraction_above_its_ceiling_is_shown_as_an_error():
    assert roofline.share(0.85) == 0.85
    assert roofline.share(1.0) == 1.0
    assert roofline.share(1.0001) == roofline.ABOVE_CEILING
    assert roofline.share(None) is None
    nan = roofline.share(float("nan"))
    assert nan != nan


def test_ceilings_keep_the_device_time_behind_each_rate():
    timing, moved = roofline.copy_timing(2**20, total=2**22, repeat=3)
    assert moved == 2**21
    assert timing.kernels_per_call == 1.0
    assert timing.wall.median >= 0 and timing.span.median > 0
    assert roofline.matmul_timing(64, repeat=2).name == "matmul 64"
    read, read_bytes = roofline.read_timing(2**16, total=2**17, repeat=2)
    assert read.name == "read" and read_bytes == 2**16 + 16 * 4
    assert read.throughput(bytes=read_bytes)["byte/s"] > 0
    with pytest.raises(ValueError, match="at least 4096"):
        roofline.read_timing(1024)
    assert "read 2000 GB/s" in repr(Ceilings("t", 1e12, {}, {}, 2e12))
    with_timings = Ceilings("test", 1e12, {"float32": 1e14},
                            {"copy": timing})
    assert with_timings == CEIL.__class__("test", 1e12, {"float32": 1e14})
    saved = with_timings.to_dict()
    assert saved["timings"]["copy"]["span"]["times"]
    assert saved["copy_bytes_per_s"] == 1e12
