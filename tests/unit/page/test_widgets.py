import pandas as pd
import pytest

from helpers.page import widgets

TABLE = pd.DataFrame({"K": [5, 5, 25, 25, 35, 35],
                      "dtype": ["f32", "f64"] * 3,
                      "fusion": ["kLoop"] * 4 + ["kInput"] * 2,
                      "ms": [1.0, 2.0, 3.0, 4.0, 1.5, 2.5]})


def test_matching_rows():
    rows = widgets.matching_rows(TABLE, {"K": 25, "dtype": "f64"})
    assert rows["ms"].tolist() == [4.0]


def test_explore_updates_when_a_control_moves():
    box = widgets.explore(TABLE, ["K", "dtype"], ["fusion", "ms"],
                          caption="recorded on X")
    slider, toggle, view = box.children
    assert slider.options == (5, 25, 35)
    assert "recorded on X" in view.value and "kLoop" in view.value
    slider.value = 35
    toggle.value = "f64"
    assert "kInput" in view.value and "2.5" in view.value
    assert "kLoop" not in view.value


def test_explore_starts_where_it_is_told():
    box = widgets.explore(TABLE, ["K", "dtype"], ["ms"],
                          start={"K": 35, "dtype": "f64"})
    slider, toggle, view = box.children
    assert (slider.value, toggle.value) == (35, "f64")
    assert "2.5" in view.value
    static = box._repr_mimebundle_()["text/html"]
    assert "(shown: 35)" in static
    with pytest.raises(KeyError,
                       match="start names 'n', which is not a control"):
        widgets.explore(TABLE, ["K"], start={"n": 1})
    with pytest.raises(ValueError, match="not in the table; choose one of"):
        widgets.explore(TABLE, ["K"], start={"K": 7})


def test_explore_bad_inputs():
    with pytest.raises(KeyError, match=r"\['nope'\] are not in the table"):
        widgets.explore(TABLE, ["nope"])
    with pytest.raises(ValueError, match="at least one row"):
        widgets.explore(TABLE.iloc[:0], ["K"])
    with pytest.raises(ValueError, match="at least one column"):
        widgets.explore(TABLE, [])


def test_explore_draws_as_html_where_no_kernel_runs():
    bundle = widgets.explore(TABLE, ["K", "dtype"], ["fusion", "ms"],
                             caption="recorded on X")._repr_mimebundle_()
    # live front ends get the widget; the static book gets the HTML
    assert "application/vnd.jupyter.widget-view+json" in bundle
    static = bundle["text/html"]
    assert "recorded on X" in static
    assert "<b>K</b>: 5, 25, 35 (shown: 5)" in static
    assert "All 6 rows" in static and static.count("<tr") == 2 + 7


def test_a_big_grid_folds_its_first_rows():
    grid = pd.DataFrame({"n": range(widgets.MAX_FOLDED_ROWS + 1)})
    grid["twice"] = 2 * grid["n"]
    static = widgets.explore(grid, ["n"])._repr_mimebundle_()["text/html"]
    assert (f"The first {widgets.MAX_FOLDED_ROWS} of {len(grid)} rows"
            in static)
    # the chosen row (and header), then the folded rows (and header)
    assert static.count("<tr") == 2 + widgets.MAX_FOLDED_ROWS + 1
