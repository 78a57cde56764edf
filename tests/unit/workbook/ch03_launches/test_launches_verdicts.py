"""Chapter 3's numbers for its authored paragraphs: each read as the data
say, and each flips with the data behind it."""

import pandas as pd
import pytest

from helpers.measuring import recorded
from helpers.workbook.ch03_launches import command_buffers, verdicts

GPU = "NVIDIA H100 80GB HBM3"
# XLA:GPU's thunk sequence for an H100 (jaxlib 0.10.2): which loop bodies
# are one CUDA graph at the default minimum graph size.
COMPILED = {"while, traced bound": True, "while, static bound": True,
            "scan, split per step": True, "scan, noise outside": False,
            "scan, softplus hoisted": False,
            "fused_scan (one kernel)": None}


def variants(times, kernels=None, in_graph=None):
    """A recording of the variants (float32 only): µs a step by name."""
    kernels = kernels or {}
    rows = []
    for name, us in times.items():
        row = {"variant": name, "dtype": "float32", "steps": 8000,
               "launches_per_step": kernels.get(name, 3.0),
               "us_per_step": us, "ms": us * 8,
               "kernel_us_per_step": us / 4,
               "kernels_per_step": kernels.get(name, 3.0)}
        if in_graph is not None:
            row["in_graph"] = in_graph.get(name, 0.0)
        else:
            row["in_graph"] = None
        rows.append(row)
    return {"gpu": rows, "cpu": [{**r, "us_per_step": 1.0} for r in rows]}


FIVE = {"while, static bound": 5.0, "scan, split per step": 5.0}


def test_the_reference_recording_reads_the_graph_numbers():
    table = verdicts.variants_table(
        recorded.load("03_launches/variants")["data"])
    numbers = verdicts.graph_numbers(table, COMPILED)
    assert numbers["plain"] == ("scan, noise outside and "
                                "scan, softplus hoisted")
    # fewer kernels a step, and yet slower: the graphs made the difference
    assert numbers["plain_kernels"] < numbers["graphed_kernels"]
    assert numbers["plain_low_us"] > numbers["graphed_high_us"]
    steps = verdicts.step_numbers(table)
    assert steps["round_trip_us"] == pytest.approx(14.4, abs=0.05)
    assert steps["round_trip_us"] == pytest.approx(
        steps["traced_us"] - steps["static_us"])


def test_a_measured_graph_share_outranks_the_compilation():
    times = {"while, static bound": 6.0, "scan, split per step": 6.1,
             "scan, noise outside": 6.0, "scan, softplus hoisted": 6.0}
    everywhere = {name: 1.0 for name in times}
    table = verdicts.variants_table(variants(times, FIVE, everywhere))
    numbers = verdicts.graph_numbers(table, COMPILED)
    assert numbers["plain"] == "" and numbers["plain_low_us"] is None
    assert numbers["graphed_low_us"] == 6.0
    assert numbers["graphed_high_us"] == 6.1


def test_the_round_trip_is_the_difference_of_the_two_while_loops():
    times = {"while, traced bound": 18.6, "while, static bound": 6.2,
             "fused_scan (one kernel)": 0.23}
    steps = verdicts.step_numbers(verdicts.variants_table(variants(times)))
    assert steps == pytest.approx({"traced_us": 18.6, "static_us": 6.2,
                                   "round_trip_us": 12.4, "fused_us": 0.23})
    del times["fused_scan (one kernel)"]
    with pytest.raises(ValueError, match="lacks .* the fused kernel"):
        verdicts.step_numbers(verdicts.variants_table(variants(times)))


def test_command_buffer_settings_read_as_ratios_to_the_default():
    reference = recorded.load("03_launches/command_buffers")["data"]
    ratios = command_buffers.setting_ratios(reference)
    assert "default" not in ratios
    off = ratios["graphs off"]
    assert [round(off[loop], 2) for loop in (
        "while, traced bound", "while, static bound",
        "scan, softplus hoisted")] == [1.40, 2.64, 1.02]
    assert ratios["default + WHILE"]["scan, softplus hoisted"] == \
        pytest.approx(0.78, abs=0.005)
    row = [{"variant": "scan", "dtype": "float32", "us_per_step": 10.0}]
    half = [{"variant": "scan", "dtype": "float32", "us_per_step": 5.0},
            {"variant": "scan", "dtype": "float64", "us_per_step": 99.0}]
    assert command_buffers.setting_ratios(
        {"default": row, "default + WHILE": half}) == \
        {"default + WHILE": {"scan": 0.5}}


def goals(gpu_fused, cpu, device=None):
    """A goals recording: the fused kernels' wall clock ``gpu_fused``
    (Triton's 1.2 times that), their device time ``device`` (by default
    0.9 times each wall time), and the CPU's jitted scan ``cpu``."""
    wall = {"gpu fused_scan": gpu_fused,
            "gpu fused_scan, triton": gpu_fused * 1.2}
    return {"steps": 8000, "chains": 10000,
            "one_chain_s": {**wall, "cpu scan, softplus hoisted": cpu},
            "many_chains_s": {"gpu fused_scan": 0.1,
                              "gpu fused, 64 chains per program": 0.01,
                              "gpu fused, one chain per thread": 0.002,
                              "cpu scan, softplus hoisted": cpu * 1000},
            "device_s": device if device is not None else
            {name: 0.9 * s for name, s in wall.items()}}


def test_one_chain_is_judged_on_the_best_kernel_by_device_time():
    plain = verdicts.chain_numbers(goals(0.0015, 0.0017))
    assert plain["clock"] == "device" and plain["backend"] == "Mosaic GPU"
    assert plain["one_ratio"] == pytest.approx(0.00135 / 0.0017)
    assert plain["wall_ratio"] == pytest.approx(0.0015 / 0.0017)
    assert plain["cpu_ns"] == pytest.approx(212.5)
    assert plain["floor_ns"] is None  # no one-multiply-add loop timed
    by_device = verdicts.chain_numbers(goals(0.0020, 0.0017, device={
        "gpu fused_scan": 0.0019, "gpu fused_scan, triton": 0.0018,
        "trivial fused": 0.00004}))
    assert by_device["clock"] == "device"
    assert by_device["backend"] == "Triton"  # the faster by device time
    assert by_device["one_ns"] == pytest.approx(225.0)
    assert by_device["one_ratio"] > 1  # the goal is missed by device time
    assert by_device["wall_ratio"] == pytest.approx(0.0024 / 0.0017)
    assert by_device["floor_ns"] == pytest.approx(5.0)


def test_the_latency_kernel_is_judged_with_the_others():
    data = goals(0.0015, 0.0017, device={
        "gpu fused_scan": 0.0019, "gpu fused_scan, triton": 0.0018,
        "gpu latency kernel, triton": 0.0005})
    data["one_chain_s"]["gpu latency kernel, triton"] = 0.0006
    numbers = verdicts.chain_numbers(data)
    assert numbers["kernel"] == "gpu latency kernel, triton"
    assert numbers["backend"] == "Triton"
    assert numbers["one_ratio"] == pytest.approx(0.0005 / 0.0017)
    assert numbers["wall_ratio"] == pytest.approx(0.0006 / 0.0017)
    # a recording from before the latency kernel existed reads as before
    assert verdicts.chain_numbers(goals(0.0015, 0.0017))["kernel"] == \
        "gpu fused_scan"


def test_many_chains_against_the_cpu_and_vmap():
    numbers = verdicts.chain_numbers(goals(0.002, 0.0017))
    assert numbers["many_speedup"] == pytest.approx(1.7 / 0.002)
    assert numbers["vmap_over_side"] == pytest.approx(50.0)
    slow = goals(0.002, 0.0017)
    slow["many_chains_s"]["cpu scan, softplus hoisted"] = 0.05
    assert verdicts.chain_numbers(slow)["many_speedup"] == \
        pytest.approx(25.0)
    with pytest.raises(ValueError, match="no fused kernel's time"):
        verdicts.chain_numbers({**slow, "device_s": {}})
    missing = goals(0.002, 0.0017)
    del missing["one_chain_s"]["cpu scan, softplus hoisted"]
    with pytest.raises(ValueError, match="no time for 'cpu scan"):
        verdicts.chain_numbers(missing)


@pytest.mark.parametrize("rows, plain, all_at_1", [
    ({"default": [{"variant": "a", "body steps": 1,
                   "body is a CUDA graph": True}],
      "minimum 1": [{"variant": "a", "body steps": 1,
                     "body is a CUDA graph": True}]}, "", True),
    ({"default": [{"variant": "a", "body steps": 1,
                   "body is a CUDA graph": True},
                  {"variant": "b", "body steps": 3,
                   "body is a CUDA graph": False}],
      "minimum 1": [{"variant": "a", "body steps": 1,
                     "body is a CUDA graph": True},
                    {"variant": "b", "body steps": 1,
                     "body is a CUDA graph": False}]}, "b", False),
])
def test_the_compiled_graphs_are_read_as_they_are(rows, plain, all_at_1):
    split = verdicts.graph_split(rows)
    assert split["graphs"] == "a"
    assert split["plain"] == plain
    assert split["all_at_1"] is all_at_1


def test_the_reference_variants_read_without_empty_columns():
    table = verdicts.variants_table(
        recorded.load("03_launches/variants")["data"])
    shown = verdicts.variants_for_page(table)
    assert "dtype" not in shown.columns
    assert list(shown.columns[:2]) == ["GPU µs", "CPU µs"]
    assert not shown.isna().all().any()  # no column empty in every row
    assert "while, traced bound" in shown.index


def test_hoisting_says_whether_the_body_lost_its_graph():
    table = pd.DataFrame({
        "variant": ["scan, split per step", "scan, noise outside"],
        "dtype": ["float32", "float32"],
        "us_per_step GPU": [6.36, 12.8]})
    lost = {"scan, split per step": True, "scan, noise outside": False}
    assert verdicts.hoist_numbers(table, lost) == {
        "before_us": 6.36, "after_us": 12.8, "lost_graph": True}
    kept = {"scan, split per step": True, "scan, noise outside": True}
    assert verdicts.hoist_numbers(table, kept)["lost_graph"] is False
