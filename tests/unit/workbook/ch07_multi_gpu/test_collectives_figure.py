"""Chapter 7's picture of the collectives: cells large enough to read,
one size in every panel, and panels that do not overlap."""

import itertools

import matplotlib.pyplot as plt
import pytest

from helpers.workbook.ch07_multi_gpu import figures

FOUR = [[(d, f"{'ABCD'[d]}{j}") for j in range(4)] for d in range(4)]
PANELS = {
    "before": FOUR,
    "psum → all-reduce": [[(None, f"Σ{j}") for j in range(4)]] * 4,
    "all_gather → all-gather": [sum(FOUR, [])] * 4,
    "psum_scatter → reduce-scatter": [[(None, f"Σ{d}")] for d in range(4)],
}


def _cell_inches(ax):
    fig = ax.figure
    width = ax.get_position().width * fig.get_figwidth()
    return width / (ax.get_xlim()[1] - ax.get_xlim()[0])


def test_every_cell_has_one_size_and_a_readable_label():
    fig = figures.holdings(PANELS)
    assert [len(ax.patches) for ax in fig.axes] == [16, 16, 64, 4]
    sizes = {round(_cell_inches(ax), 6) for ax in fig.axes}
    assert len(sizes) == 1 and sizes.pop() >= 0.35  # inches a cell
    assert all(t.get_fontsize() >= 11 for ax in fig.axes for t in ax.texts)
    # no tick mark reaches into the first chunk of a row
    assert all(tick.tick1line.get_markersize() == 0
               for ax in fig.axes for tick in ax.yaxis.get_major_ticks())
    plt.close(fig)


def test_the_wide_panel_gets_a_row_of_its_own_and_none_overlap():
    fig = figures.holdings(PANELS)
    before, psum, gathered, scattered = (ax.get_position() for ax in fig.axes)
    assert before.y0 == psum.y0 > gathered.y0 > scattered.y0
    assert gathered.x1 <= 1 and gathered.width > 3 * before.width
    for a, b in itertools.combinations(fig.axes, 2):
        assert not a.get_position().overlaps(b.get_position())
    # the device names label the first panel of each row only
    labels = [[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes]
    assert labels[0] == labels[2] == labels[3] == [
        f"device {d}" for d in range(4)]
    assert labels[1] == ["", "", "", ""]
    plt.close(fig)


def test_a_two_part_title_takes_two_lines():
    fig = figures.holdings(PANELS)
    assert fig.axes[1].get_title(loc="left") == "psum\n→ all-reduce"
    plt.close(fig)


def test_no_panels_is_an_error():
    with pytest.raises(ValueError, match="at least one panel"):
        figures.holdings({})
    with pytest.raises(ValueError, match="at least one panel"):
        figures.holdings({"before": []})
