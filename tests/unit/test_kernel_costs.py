"""Chapter 3's predictions for CUDA graphs and one kernel: each verdict
flips with the data behind it."""

import pandas as pd
import pytest

from helpers.workbook.ch03_launches import kernel_costs

STATIC, HOISTED = "while, static bound", "scan, softplus hoisted"
MEASURED = ["while, traced bound", STATIC, HOISTED]
GRAPH_BODIES = {STATIC: True, HOISTED: False}


def table(static_us=6.0, hoisted_us=9.0, kernel_us=3.0, fused_us=0.2,
          fused_kernel_us=0.18):
    """The timing section's float32 rows, as `variants_table` gives them."""
    rows = [("while, traced bound", 20.0, 6.0, 8.0),
            (STATIC, static_us, 5.0, 5.5),
            (HOISTED, hoisted_us, 3.0, kernel_us),
            ("fused_scan (one kernel)", fused_us, 0.000625, fused_kernel_us)]
    return pd.DataFrame(
        [{"variant": v, "dtype": "float32", "us_per_step GPU": us,
          "launches_per_step": n, "kernel_us_per_step": k}
         for v, us, n, k in rows]
        + [{"variant": STATIC, "dtype": "float64", "us_per_step GPU": 99.0,
            "launches_per_step": 5.0, "kernel_us_per_step": 9.0}])


def buffers(off, any_size, default_static=6.0):
    def row(variant, us):
        return {"variant": variant, "dtype": "float32", "us_per_step": us}
    return {"default": [row(STATIC, default_static), row(HOISTED, 9.0)],
            "graphs off": [row(STATIC, off), row(HOISTED, 9.0)],
            "smallest graphs": [row(STATIC, 6.0), row(HOISTED, any_size)]}


def test_the_graph_prediction_swaps_the_price_of_a_kernel():
    guess = kernel_costs.graphs(table(), GRAPH_BODIES, MEASURED)
    assert (guess.graph_loop, guess.loose_loop) == (STATIC, HOISTED)
    assert guess.graphs_off.value == pytest.approx(15e-6)  # 5 x 9 / 3
    assert guess.any_size.value == pytest.approx(3.6e-6)   # 3 x 6 / 5
    text = guess.markdown()
    assert "*while, static bound* (call it G)" in text
    assert text.count("$$") == 4
    # both loops in graphs, or neither: nothing to swap
    assert kernel_costs.graphs(table(), {STATIC: True, HOISTED: True},
                               MEASURED) is None
    assert kernel_costs.graphs(table(), {}, MEASURED) is None


@pytest.mark.parametrize("off, any_size, says", [
    (14.0, 4.0, "Both predictions held"),
    (30.0, 1.0, "Neither prediction held"),
    (14.0, 1.0, "graphs off held and the one for graphs of any size "
                "missed"),
])
def test_the_graph_prediction_held_or_not(off, any_size, says):
    guess = kernel_costs.graphs(table(), GRAPH_BODIES, MEASURED)
    text = kernel_costs.graphs_held(guess, buffers(off, any_size))
    assert says in text
    assert f"*while, static bound* took {off:.3g} µs a step" in text
    missing = {"default": buffers(off, any_size)["default"]}
    assert kernel_costs.graphs_held(guess, missing) is None


def test_the_repeated_default_is_the_same_or_not():
    same = kernel_costs.repeat_spread(table(), buffers(15.0, 3.6, 6.3))
    assert "differ by up to 5% a step (*while, static bound*: 6.3 µs " \
           "in this run, 6 µs in the timing section's)" in same
    assert "within the 10%" in same
    apart = kernel_costs.repeat_spread(table(), buffers(15.0, 3.6, 8.0))
    assert "up to 33%" in apart and "compare the settings within" in apart
    assert kernel_costs.repeat_spread(table(), {}) is None


def test_one_kernel_is_predicted_from_the_profile():
    speedup = kernel_costs.one_kernel(table())
    assert speedup.value == pytest.approx(3.0)  # 9 µs over 3 µs
    assert r"t_\text{kernels}" in speedup.markdown()
    assert kernel_costs.one_kernel(table(kernel_us=None)) is None
    assert kernel_costs.one_kernel(table().iloc[:1]) is None


@pytest.mark.parametrize("fused_us, fused_kernel_us, says", [
    (0.2, 0.18, ["45 times faster", "held, by far", "fixed costs"]),
    (2.5, 2.9, ["3.6 times faster", "3 times held.",
                "about as long as in separate kernels"]),
    (4.0, 3.8, ["2.25 times faster", "times missed.",
                "took longer than in separate kernels"]),
])
def test_one_kernel_held_or_not(fused_us, fused_kernel_us, says):
    data = table(fused_us=fused_us, fused_kernel_us=fused_kernel_us)
    text = kernel_costs.one_kernel_held(
        data, kernel_costs.one_kernel(data), "a GPU")
    for part in says:
        assert part in text
    no_device = table(fused_us=fused_us, fused_kernel_us=None)
    alone = kernel_costs.one_kernel_held(
        no_device, kernel_costs.one_kernel(no_device), "a GPU")
    assert "device's clock" not in alone
    assert alone.endswith("missed.") == (fused_us > 3)
