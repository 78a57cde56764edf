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


@pytest.mark.parametrize("off, any_size, held", [
    (14.0, 4.0, (True, True)),
    (30.0, 1.0, (False, False)),
    (14.0, 1.0, (True, False)),
])
def test_the_graph_prediction_held_or_not(off, any_size, held):
    guess = kernel_costs.graphs(table(), GRAPH_BODIES, MEASURED)
    numbers = kernel_costs.graph_numbers(guess, table(),
                                         buffers(off, any_size))
    assert numbers["off_loop"] == STATIC and numbers["any_loop"] == HOISTED
    assert numbers["off_us"] == off and numbers["any_us"] == any_size
    assert numbers["off_predicted_us"] == pytest.approx(15.0)
    assert numbers["any_predicted_us"] == pytest.approx(3.6)
    within = tuple(0.8 <= numbers[f"{s}_ratio"] <= 1.25
                   for s in ("off", "any"))
    assert within == held


def test_the_repeated_default_is_compared_with_the_timing_section():
    guess = kernel_costs.graphs(table(), GRAPH_BODIES, MEASURED)
    same = kernel_costs.graph_numbers(guess, table(),
                                      buffers(15.0, 3.6, 6.3))
    assert (same["rerun_loop"], same["rerun_us"], same["earlier_us"]) == \
        (STATIC, 6.3, 6.0)
    assert same["rerun_apart"] == pytest.approx(0.05)
    apart = kernel_costs.graph_numbers(guess, table(),
                                       buffers(15.0, 3.6, 8.0))
    assert apart["rerun_apart"] == pytest.approx(1 / 3)


def test_one_kernel_is_predicted_from_the_profile():
    speedup = kernel_costs.one_kernel(table())
    assert speedup.value == pytest.approx(3.0)  # 9 µs over 3 µs
    assert r"t_\text{kernels}" in speedup.markdown()
    assert kernel_costs.one_kernel(table(kernel_us=None)) is None
    assert kernel_costs.one_kernel(table().iloc[:1]) is None


@pytest.mark.parametrize("fused_us, fused_kernel_us", [
    (0.2, 0.18), (2.5, 2.9), (4.0, 3.8)])
def test_one_kernel_is_read_against_its_loop(fused_us, fused_kernel_us):
    numbers = kernel_costs.one_kernel_numbers(
        table(fused_us=fused_us, fused_kernel_us=fused_kernel_us))
    assert numbers == pytest.approx({
        "scan_us": 9.0, "best_scan_us": 9.0, "fused_us": fused_us,
        "faster": 9.0 / fused_us, "fused_device_us": fused_kernel_us,
        "kernels_us": 3.0})


def test_the_fastest_scan_is_read_whichever_its_graphs_favoured():
    faster_scan = pd.concat([table(), pd.DataFrame([{
        "variant": "scan, split per step", "dtype": "float32",
        "us_per_step GPU": 6.1, "launches_per_step": 4.0,
        "kernel_us_per_step": 2.0}])], ignore_index=True)
    numbers = kernel_costs.one_kernel_numbers(faster_scan)
    assert numbers["best_scan_us"] == 6.1 and numbers["scan_us"] == 9.0
