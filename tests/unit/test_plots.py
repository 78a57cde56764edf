import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.measuring.recorded import Result  # noqa: E402
from helpers.page import plots  # noqa: E402

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
