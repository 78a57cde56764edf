import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.measuring.results import Result  # noqa: E402
from helpers.page import legends, plots  # noqa: E402

GPU = {"device": "NVIDIA H100 80GB HBM3"}


def test_sweep_draws_live_recorded_and_ceiling():
    rec = Result("02_fusion/sweep", "recorded",
                 {"x": [1, 2, 4], "f32": [3.0, 2.0, 1.0]}, GPU)
    ax = plots.sweep([1, 2], {"f32": [1.0, 2.0]}, recorded=rec,
                     ceiling=("copy bandwidth", 5.0), xlabel="K",
                     ylabel="GB/s", logx=True)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["f32 (here)", "f32 (recorded, NVIDIA H100 80GB HBM3)",
                      "copy bandwidth"]
    assert ax.get_lines()[1].get_linestyle() == "--"
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "K"
    plt.close("all")


def test_sweep_skips_a_missing_recording():
    ax = plots.sweep([1], {"a": [1.0]},
                     recorded=Result("02_fusion/x", "missing", None, None))
    assert len(ax.get_lines()) == 1
    plt.close("all")


def test_sweep_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one series"):
        plots.sweep([1], {})
    with pytest.raises(ValueError, match="has 1 values for 2"):
        plots.sweep([1, 2], {"a": [1.0]})
    rec = Result("02_fusion/x", "recorded", {"k": [1]}, GPU)
    with pytest.raises(KeyError, match="has no 'x'"):
        plots.sweep([1], {"a": [1.0]}, recorded=rec)
    plt.close("all")


def test_use_book_style_sets_rcparams():
    plots.use_book_style()
    assert matplotlib.rcParams["axes.spines.top"] is False


def crowded_panel(ax):
    """Lines that fill every corner of the axes, as chapter 2's do."""
    for offset in range(4):
        ax.plot([0, 1, 2, 3, 4], [offset, 4 - offset, offset, 4 - offset,
                                  offset], marker="o", label=f"v{offset}")


def test_a_legend_inside_crowded_axes_is_found_covering_data():
    fig, ax = plt.subplots()
    crowded_panel(ax)
    ax.legend(loc="center")
    found = legends.covering_data(fig)
    assert len(found) == 1 and "covers" in found[0]
    plt.close("all")


def test_legend_beside_and_below_leave_the_data_clear():
    fig, ax = plt.subplots()
    crowded_panel(ax)
    legend = legends.beside(ax)
    assert [t.get_text() for t in legend.get_texts()] == [
        "v0", "v1", "v2", "v3"]
    assert legends.covering_data(fig) == []
    fig, axes = plt.subplots(1, 2)
    for ax in axes:
        crowded_panel(ax)
    legend = legends.below(fig, axes[0], columns=4)
    assert legend in fig.legends and legends.covering_data(fig) == []
    plt.close("all")


def test_legends_reject_axes_with_nothing_labelled():
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    with pytest.raises(ValueError, match="nothing labelled"):
        legends.beside(ax)
    with pytest.raises(ValueError, match="columns must be at least 1"):
        legends.below(fig, ax, columns=0)
    plt.close("all")
