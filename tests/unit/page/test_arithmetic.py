"""The worked estimates the chapters print before they measure."""

import math

import numpy as np
import pytest

from helpers.page.arithmetic import latex_number, quantity, worked


def test_fraction_and_product_are_written_as_on_paper():
    line = worked(
        "t", "bytes / bandwidth", unit="µs", per_unit=1e-6,
        bytes=quantity(r"2 n^2 \cdot 4", 2 * 4096**2 * 4, "MB", 1e6),
        bandwidth=quantity("B", 3.0e12, "TB/s", 1e12))
    assert math.isclose(line.value, 2 * 4096**2 * 4 / 3.0e12)
    assert line.symbolic == r"\frac{2 n^2 \cdot 4}{B}"
    assert line.with_numbers == (r"\frac{134\,\text{MB}}{3\,\text{TB/s}}")
    assert line.result == r"44.7\,\mu\text{s}"
    assert line.markdown().startswith("$$\nt = ")


def test_parentheses_only_where_precedence_needs_them():
    q = {name: quantity(name, 2.0) for name in "abc"}
    assert worked("x", "(a + b) * c", **q).symbolic == \
        r"\left(a + b\right) \cdot c"
    assert worked("x", "a + b * c", **q).symbolic == r"a + b \cdot c"
    assert worked("x", "a - (b - c)", **q).symbolic == \
        r"a - \left(b - c\right)"
    assert worked("x", "a - (b - c)", **q).value == 2.0
    assert worked("x", "a ** 2", **q).symbolic == "a^{2}"


def test_min_and_max_compute_and_show():
    line = worked("t", "max(a, b)", a=quantity("t_m", 3.0),
                  b=quantity("t_c", 5.0))
    assert line.value == 5.0
    assert line.symbolic == r"\max\left(t_m, t_c\right)"


def test_numpy_scalars_are_accepted():
    assert worked("x", "a * 2", a=quantity("a", np.float32(1.5))).value == 3.0


@pytest.mark.parametrize("value, text", [
    (8000, r"8\,000"), (3.0312, "3.03"), (0.5, "0.5"), (48.0, "48"),
    (2.5e-9, r"2.5 \times 10^{-9}"), (1.61e9, r"1.61 \times 10^{9}"),
    (0, "0"), (-12.34, "-12.3")])
def test_numbers_have_three_significant_figures(value, text):
    assert latex_number(value) == text


def test_counts_and_sizes_are_written_exactly_and_equal_their_result():
    line = worked("n", "2 * L + w", L=quantity("L", 6),
                  w=quantity("w", 1024))
    assert line.with_numbers == r"2 \times 6 + 1\,024"
    assert line.latex.endswith(r"= 1\,036")  # a count: '=', not '\approx'
    rate = worked("r", "w / t", w=quantity("w", 1024),
                  t=quantity("t", 3.0))
    assert rate.latex.endswith(r"\approx 341")
    assert latex_number(4096) == r"4\,096"
    assert latex_number(4096.0) == r"4\,100"  # a measured float: rounded


def test_unknown_names_are_named():
    with pytest.raises(KeyError, match=r"\['rate'\].*name=quantity"):
        worked("t", "flops / rate", flops=quantity("F", 1.0))


def test_a_plain_number_is_refused_with_the_fix():
    with pytest.raises(TypeError, match="quantity"):
        worked("t", "a * 2", a=3.0)


def test_other_operations_are_refused():
    with pytest.raises(ValueError, match="min and max only"):
        worked("t", "abs(a)", a=quantity("a", 1.0))
    with pytest.raises(ValueError, match="not a Python expression"):
        worked("t", "a *", a=quantity("a", 1.0))


def test_missing_numbers_are_refused():
    with pytest.raises(ValueError, match="finite number"):
        quantity("B", float("nan"))
    with pytest.raises(ValueError, match="finite number"):
        quantity("B", None)
    with pytest.raises(ValueError, match="per_unit"):
        quantity("B", 1.0, "GB/s", 0)


def test_a_count_shown_in_larger_units_is_rounded_and_says_so():
    line = worked("m", "n * b", unit="kB", per_unit=1e3,
                  n=quantity("n", 55296), b=quantity("b", 4, "B"))
    assert line.latex.endswith(r"\approx 221\,\text{kB}")


def test_a_percentage_is_escaped_for_tex():
    line = worked("P", "1 - a", unit="%", per_unit=0.01,
                  a=quantity("a", 0.63))
    assert line.result == r"37\,\%"
