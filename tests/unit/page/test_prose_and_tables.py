import numpy as np
import pandas as pd
import pytest

from helpers.page import prose, tables


def test_glue_returns_plain_values():
    assert prose.glue("ratio", np.float32(2.5)) == 2.5
    assert isinstance(prose.glue("n", np.int64(3)), int)


def test_glue_rejects_names_the_text_cannot_cite():
    with pytest.raises(ValueError, match="must be letters"):
        prose.glue("a-b", 1)


def test_glue_text_formats_or_says_missing():
    from helpers.page.prose import glue_text

    assert glue_text("some_ms", 1.23456, ".2f") == "1.23"
    assert glue_text("some_ms", None) == "(no recording yet)"
    assert glue_text("some_ms", None, missing="n/a") == "n/a"


def test_number_rounds_to_three_significant_figures():
    assert [tables.number(v) for v in (1651.234, 0.46213, 12.0, 0.0)] == [
        "1651", "0.462", "12", "0"]
    assert tables.number(12.5) == "12.5"
    assert tables.number(2.5e-7) == "2.5e-07"
    assert tables.number(3.2e9) == "3.2e+09"
    assert tables.number(np.float32(18.75)) == "18.8"
    assert tables.number("kLoop") == "kLoop"
    # a value that does not exist here reads as a dash, not None or nan
    assert tables.number(None) == tables.number(float("nan")) == "—"
    assert tables.number(np.float64("nan")) == tables.MISSING_CELL


def test_tidy_hides_a_meaningless_index_and_keeps_a_real_one():
    import pandas as pd

    plain = tables.tidy(pd.DataFrame({"ms": [1.23456, 20.5]})).to_html()
    assert "1.23" in plain and "1.23456" not in plain and "20.5" in plain
    assert ">0<" not in plain  # no 0..n-1 row labels
    named = tables.tidy(pd.DataFrame({"ms": [1.0]}, index=["einsum"]))
    assert "einsum" in named.to_html()
    with pytest.raises(TypeError, match="DataFrame"):
        tables.tidy([1, 2])


def test_tidy_display_is_a_no_op_outside_ipython():
    from IPython.core.interactiveshell import InteractiveShell

    InteractiveShell.clear_instance()  # another test may have made one
    assert tables.tidy_display() is False


def test_tidy_display_routes_dataframes_through_tidy():
    import pandas as pd
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert tables.tidy_display() is True
        html, _ = shell.display_formatter.format(
            pd.DataFrame({"ms": [0.123456]}))
        assert "0.123" in html["text/html"]
        assert "0.123456" not in html["text/html"]
    finally:
        InteractiveShell.clear_instance()


def test_show_code_highlights_public_functions_only():
    from helpers.workbook.ch03_launches import variants

    shown = tables.show_code(variants.split_step, variants.run_steps)
    assert shown.data.startswith("def split_step(")
    assert "def run_steps(" in shown.data
    assert 'class="highlight"' in shown._repr_html_()
    # a listing longer than a screen's worth is folded under its title
    assert shown.data.count("\n") + 1 > tables.SHOWN_LINES
    assert shown._repr_html_().startswith(
        "<details><summary>The source of <code>split_step</code>, "
        "<code>run_steps</code> (")
    from helpers.workbook.ch10_field_guide import cases

    short = tables.show_code(cases.step)  # three lines
    assert "<details>" not in short._repr_html_()
    with pytest.raises(ValueError, match="private"):
        tables.show_code(tables._unnamed_rows)
    with pytest.raises(TypeError, match="one or more"):
        tables.show_code()
    with pytest.raises(TypeError, match="functions or classes"):
        tables.show_code("variants.split_step")


def test_glue_result_is_the_paragraph_or_one_notice():
    done = prose.glue_result("gpu_wall", "On the GPU: a faster.",
                            will_show="Which is faster.")
    assert done == "On the GPU: a faster."
    waiting = prose.glue_result("gpu_wall", None, will_show="Which is faster.")
    assert waiting.startswith(":::{admonition} " + prose.WAITING_TITLE)
    assert "Which is faster." in waiting and "make record" in waiting
    assert "(no recording yet)" not in waiting
    with pytest.raises(ValueError, match="will_show"):
        prose.glue_result("gpu_wall", None, will_show=" ")


def test_glue_result_names_what_the_missing_result_needs():
    waiting = prose.glue_result("h100_counts", None,
                               will_show="How many kernels.",
                               needs=prose.Needs.GPU_COMPILER)
    assert waiting.startswith(":::{admonition} "
                              + prose.Needs.GPU_COMPILER.title)
    assert "make cross" in waiting and "make record" not in waiting
    with pytest.raises(TypeError, match="Needs"):
        prose.glue_result("h100_counts", None, will_show="How many kernels.",
                         needs="compiler")


def test_fill_formats_every_value_or_returns_none():
    assert prose.fill("{n} kernels, {ms:.1f} ms", n=3, ms=1.25) == \
        "3 kernels, 1.2 ms"
    assert prose.fill("{n} kernels, {ms:.1f} ms", n=3, ms=None) is None
    assert prose.fill("{ms:.1f} ms", ms=float("nan")) is None
    assert prose.fill("cited {{cite}}`x`: {n}", n=2) == "cited {cite}`x`: 2"
    with pytest.raises(KeyError, match="pass ms="):
        prose.fill("{n} kernels, {ms} ms", n=3)


def test_per_group_splits_by_the_first_level_and_says_when_it_cannot():
    frame = pd.DataFrame(
        {"ms": [1.0, 2.0, 3.0]}, index=pd.MultiIndex.from_tuples(
            [("matmul", "a"), ("matmul", "b"), ("loop", "a")],
            names=["program", "setting"]))
    parts = tables.per_group(frame)
    assert [p.caption for p in parts] == ["matmul", "loop"]
    assert list(parts[0].data.index) == ["a", "b"]
    with pytest.raises(ValueError, match="at least two"):
        tables.per_group(frame.droplevel(0))


def test_counts_read_as_whole_numbers_with_separators():
    html = tables.counts(pd.DataFrame(
        {"bytes": [8388608, 2.147483648e9, None]})).to_html()
    assert "8,388,608" in html and "2,147,483,648" in html
    assert "e+09" not in html and "—" in html
