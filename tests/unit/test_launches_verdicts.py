"""Chapter 3's computed sentences: each flips with the data behind it."""

import pandas as pd
import pytest

import first_visit
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


def test_the_first_recording_tells_the_graph_story():
    table = verdicts.variants_table(
        first_visit.load("03_launches/variants")["data"])
    text = verdicts.graph_story(table, COMPILED, 5, GPU)
    assert "Fewer kernels, and yet slower" in text
    assert "*scan, noise outside* and *scan, softplus hoisted*" in text
    assert "12.5 µs a step, is the predicate's round trip" in \
        verdicts.round_trip(table, GPU)


def test_graphs_that_make_no_difference_are_said_to():
    same = {"while, static bound": 6.0, "scan, split per step": 6.1,
            "scan, noise outside": 6.2, "scan, softplus hoisted": 6.0}
    table = verdicts.variants_table(variants(same, FIVE))
    assert "made no difference" in verdicts.graph_story(
        table, COMPILED, 5, GPU)


def test_graphs_that_win_with_more_kernels_are_the_graphs_doing():
    times = {"while, static bound": 6.0, "scan, split per step": 6.1,
             "scan, noise outside": 13.0, "scan, softplus hoisted": 16.0}
    more = {"scan, noise outside": 7.0, "scan, softplus hoisted": 7.0,
            **FIVE}
    text = verdicts.graph_story(verdicts.variants_table(
        variants(times, more)), COMPILED, 5, GPU)
    assert "The graphs made the difference" in text
    assert "yet slower" not in text


def test_a_measured_graph_share_outranks_the_compilation():
    times = {"while, static bound": 6.0, "scan, split per step": 6.1,
             "scan, noise outside": 6.0, "scan, softplus hoisted": 6.0}
    everywhere = {name: 1.0 for name in times}
    table = verdicts.variants_table(variants(times, FIVE, everywhere))
    assert "every loop body ran as one CUDA graph" in \
        verdicts.graph_story(table, COMPILED, 5, GPU)


def test_the_round_trip_is_there_or_not():
    times = {"while, traced bound": 18.6, "while, static bound": 6.2,
             "fused_scan (one kernel)": 0.23}
    table = verdicts.variants_table(variants(times))
    assert "round trip to the host" in verdicts.round_trip(table, GPU)
    times["while, traced bound"] = 6.3
    table = verdicts.variants_table(variants(times))
    assert "costs nothing measurable" in verdicts.round_trip(table, GPU)


def unroll(times, per_step):
    return [{"unroll": u, "us_per_step": t, "launches_per_step": k}
            for u, t, k in zip((1, 2, 4, 8), times, per_step)]


def test_unrolling_gains_where_the_body_becomes_a_graph_or_elsewhere():
    first = first_visit.load("03_launches/unroll")["data"]
    text = verdicts.unroll_story(first, "5", GPU)
    assert "from unroll 4 to 8" in text and "the gain is the graph's" in text
    own = unroll((16.0, 4.0, 3.5, 3.4), (3, 1.5, 1.0, 0.75))
    text = verdicts.unroll_story(own, "5", GPU)
    assert "from unroll 1 to 2" in text
    assert "the gain is the unrolling's own" in text
    assert "threshold" not in verdicts.unroll_story(
        own, "(no CUDA plugin here)", GPU)


def test_command_buffer_settings_are_faster_slower_or_the_same():
    first = first_visit.load("03_launches/command_buffers")["data"]
    text = command_buffers.command_buffers_story(first, GPU)
    assert ("With graphs off, *while, traced bound*, *while, static bound* "
            "and *scan, softplus hoisted* ran slower (1.82, 3.49 and 1.26 "
            "times the default's time).") in text
    assert "*scan, softplus hoisted* ran faster (0.58 times the " in text
    same = {setting: [{"variant": "scan", "dtype": "float32",
                       "us_per_step": 10.0}]
            for setting in ("default", "default + WHILE")}
    assert "Adding WHILE, *scan* ran the same." in \
        command_buffers.command_buffers_story(same, GPU)


def goals(gpu_fused, cpu, device=None, trivial=0.000234):
    data = {"steps": 8000, "chains": 10000,
            "one_chain_s": {"gpu fused_scan": gpu_fused,
                            "gpu fused_scan, triton": gpu_fused * 1.2,
                            "cpu scan, softplus hoisted": cpu},
            "many_chains_s": {"gpu fused_scan": 0.1,
                              "gpu fused, 64 chains per program": 0.01,
                              "gpu fused, one chain per thread": 0.002,
                              "cpu scan, softplus hoisted": cpu * 1000},
            "trivial_fused_s": trivial}
    if device:
        data["device_s"] = device
    return data


def test_one_chain_is_judged_on_the_best_kernel_by_its_clock():
    first = first_visit.load("03_launches/goals")["data"]
    text = verdicts.one_chain(first, GPU, host_part_us=155)
    assert "(Triton)" in text  # the better of the two fused kernels
    assert "by the wall clock a step" in text
    assert "the goal (no slower than the CPU) is not met." in text
    assert "155 µs" in text
    met = verdicts.one_chain(goals(0.0015, 0.0017), GPU)
    assert "0.88 times the 212 ns of the CPU's jitted scan: the goal (no " \
        "slower than the CPU) is met." in met
    by_device = goals(0.0020, 0.0017, device={
        "gpu fused_scan": 0.0016, "gpu fused_scan, triton": 0.0018,
        "trivial fused": 0.00004})
    text = verdicts.one_chain(by_device, GPU)
    assert "(Mosaic GPU)" in text and "by device time a step" in text
    assert "takes 200 ns, 0.94 times the 212 ns" in text
    assert "is met." in text and "it is 1.18 times the CPU's" in text
    assert "5 ns a step by device time" in text
    slower = verdicts.one_chain(goals(0.0020, 0.0017, device={
        "gpu fused_scan": 0.0019}), GPU)
    assert "1.12 times the 212 ns" in slower and "is not met." in slower


def test_many_chains_goal_flips_at_fifty():
    assert "goal of 50 is met" in verdicts.many_chains(
        goals(0.002, 0.0017), GPU)
    slow = goals(0.002, 0.0017)
    slow["many_chains_s"]["cpu scan, softplus hoisted"] = 0.05
    assert "goal of 50 is not met" in verdicts.many_chains(slow, GPU)


@pytest.mark.parametrize("rows, says", [
    ({"default": [{"variant": "a", "body steps": 1,
                   "body is a CUDA graph": True}]},
     "every loop body as one CUDA graph"),
    ({"default": [{"variant": "a", "body steps": 1,
                   "body is a CUDA graph": True},
                  {"variant": "b", "body steps": 3,
                   "body is a CUDA graph": False}],
      "minimum 1": [{"variant": "a", "body steps": 1,
                     "body is a CUDA graph": True},
                    {"variant": "b", "body steps": 1,
                     "body is a CUDA graph": True}]},
     "launches the steps of *b* (3 a body) one by one"),
])
def test_the_compiled_graphs_are_read_as_they_are(rows, says):
    assert says in verdicts.graphs_compiled(rows, 5)


def test_the_first_recordings_variants_read_without_empty_columns():
    table = verdicts.variants_table(
        first_visit.load("03_launches/variants")["data"])
    shown = verdicts.variants_for_page(table)
    assert "dtype" not in shown.columns
    assert list(shown.columns[:2]) == ["GPU µs", "CPU µs"]
    assert not shown.isna().all().any()  # no column empty in every row
    assert "while, traced bound" in shown.index


def test_adding_while_names_the_loops_it_helped_and_hurt():
    text = command_buffers.command_buffers_story(
        first_visit.load("03_launches/command_buffers")["data"], "a GPU")
    assert ("do not say why *while, traced bound* and *while, static "
            "bound* lost from WHILE") in text
    rows = [{"variant": "v", "dtype": "float32", "us_per_step": 1.0}]
    faster = [{"variant": "v", "dtype": "float32", "us_per_step": 0.5}]
    same = command_buffers.command_buffers_story(
        {"default": rows, "default + WHILE": faster}, "a GPU")
    assert "do not say why" not in same  # nothing got slower: no lesson


def test_one_chain_says_whether_the_host_part_could_flip_the_verdict():
    data = first_visit.load("03_launches/goals")["data"]
    flips = verdicts.one_chain(data, "a GPU", 154.764)
    assert "takes 216 ns, 1.02 times the 212 ns" in flips
    assert "is not met." in flips
    assert "a step takes about 197 ns, 0.93 times the CPU's: the goal " \
           "would be met, so only device time can settle it." in flips
    clear = dict(data, one_chain_s={**data["one_chain_s"],
                                    "gpu fused_scan, triton": 0.0030})
    text = verdicts.one_chain(clear, "a GPU", 154.764)
    assert "is not met." in text and "the goal is still not met." in text
    fast = dict(data, one_chain_s={**data["one_chain_s"],
                                   "gpu fused_scan, triton": 0.0015})
    assert "the goal is met either way." in verdicts.one_chain(
        fast, "a GPU", 154.764)


def test_hoisting_says_when_it_slowed_a_step_and_why():
    table = pd.DataFrame({
        "variant": ["scan, split per step", "scan, noise outside"],
        "dtype": ["float32", "float32"],
        "us_per_step GPU": [6.36, 12.8]})
    lost = {"scan, split per step": True, "scan, noise outside": False}
    text = verdicts.hoisting(table, "GPU", lost)
    assert "slower (6.36 → 12.8 µs): the smaller body lost its CUDA graph" \
        in text
    kept = {"scan, split per step": True, "scan, noise outside": True}
    assert "time a hoist" in verdicts.hoisting(table, "GPU", kept)
    faster = table.assign(**{"us_per_step GPU": [12.8, 6.36]})
    assert "from 12.8 to 6.36" in verdicts.hoisting(faster, "GPU",
                                                             lost)
