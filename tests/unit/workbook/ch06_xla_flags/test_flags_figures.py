"""Chapter 6's figure: each setting against its program's default."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from helpers.page import legends  # noqa: E402
from helpers.workbook.ch06_xla_flags import figures, flag_runs  # noqa: E402


def row(program, flags, median, compile_s=1.0, **extra):
    return {"program": program, "flags": flags, "median s": median,
            "compile s": compile_s, **extra}


DATA = {"rows": [
    row("matmul", "(none)", 1e-3, 2.0),
    row("matmul", flag_runs.AGAIN, 1.05e-3, 2.0),
    row("matmul", "--xla_gpu_autotune_level=0", 4e-3, 0.5),
    row("loop", "(none)", 2e-3),
    row("loop", "--xla_gpu_enable_command_buffer=", 3e-3),
    row("loop", "--broken", 1e-3, error="unknown flag")]}


def test_ratios_are_against_each_programs_default_with_its_noise():
    table = figures.ratios(DATA)
    assert list(table["setting"]) == ["--xla_gpu_autotune_level=0",
                                      "--xla_gpu_enable_command_buffer="]
    assert list(table["run time / default's"]) == pytest.approx([4.0, 1.5])
    assert list(table["compile time / default's"]) == pytest.approx(
        [0.25, 1.0])
    assert table["noise"][0] == pytest.approx(0.05)
    assert pd.isna(table["noise"][1])  # the loop's default ran once


def test_the_figure_draws_a_band_only_where_noise_was_measured():
    fig = figures.plot(DATA, "a GPU")
    run, compile_ = fig.axes[:2]
    assert [t.get_text() for t in run.get_yticklabels()] == [
        "autotune_level=0", "enable_command_buffer="]
    def bands(ax):
        return [c for c in ax.collections
                if c.get_gid() == "noise"]

    assert len(bands(run)) == 1 and bands(compile_) == []
    assert legends.covering_data(fig) == []
    plt.close("all")


def test_a_recording_without_settings_is_refused():
    with pytest.raises(ValueError, match="nothing to compare"):
        figures.ratios({"rows": [row("loop", "(none)", 1e-3)]})


def test_a_narrow_axis_still_shows_values_a_reader_can_read():
    narrow = {"rows": [row("loop", "(none)", 1e-3, 1.0),
                       row("loop", "--xla_gpu_autotune_level=0", 1.02e-3,
                           1.07)]}
    fig = figures.plot(narrow, "a GPU")
    for ax in fig.axes[:2]:
        shown = [t for t in ax.get_xticks()
                 if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert len(shown) >= 2 and 1.0 in shown
    plt.close("all")
