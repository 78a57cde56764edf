"""Back-of-envelope arithmetic, written out: a formula, the same formula
with the numbers in, and the result.

Each section of the book predicts before it measures. `worked` takes the
formula as a Python expression over named quantities, computes it, and
writes it as LaTeX the way one would on paper::

    t = N k t_launch = 8 000 x 6 x 1 us = 48 ms

so the prediction the reader sees is the one the cell computed, and a new
recording that changes a number changes the line.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass

# How a unit is typeset: micro as the Greek letter, per cent escaped (a
# bare % starts a TeX comment), the rest upright.
_UNIT_LATEX = {"µs": r"\mu\text{s}", "us": r"\mu\text{s}", "%": r"\%"}


@dataclass(frozen=True)
class Quantity:
    """A named number in a formula.

    Args:
        symbol: how the formula writes it, in LaTeX (``'N'``,
            ``r'B_\\text{copy}'``).
        value: its value in base units (seconds, bytes, bytes per second,
            operations per second).
        unit: the unit it is shown in (``'µs'``, ``'TB/s'``), or ``''``.
        per_unit: the size of one shown unit in base units (1e-6 for µs,
            1e12 for TB/s), so that the shown number is value / per_unit.
    """

    symbol: str
    value: float
    unit: str = ""
    per_unit: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.value, (int, float)) or isinstance(
                self.value, bool) or not math.isfinite(self.value):
            raise ValueError(f"{self.symbol}: a quantity needs a finite "
                             f"number, got {self.value!r}.")
        if self.per_unit <= 0:
            raise ValueError(f"{self.symbol}: per_unit must be positive "
                             f"(the size of one {self.unit or 'unit'} in "
                             "base units).")

    def shown(self) -> str:
        """The value in its unit, as LaTeX (``'3.03\\,\\text{TB/s}'``)."""
        return latex_number(_in_units(self.value, self.per_unit)) + _unit(
            self.unit)


def quantity(symbol: str, value: float, unit: str = "",
             per_unit: float = 1.0) -> Quantity:
    """A `Quantity`; ``value`` may be a numpy scalar."""
    if hasattr(value, "item"):
        value = value.item()
    return Quantity(symbol, value, unit, per_unit)


@dataclass(frozen=True)
class Worked:
    """A worked estimate: ``value`` in base units, and its LaTeX."""

    symbol: str
    value: float
    symbolic: str
    with_numbers: str
    result: str
    exact: bool = False  # the result is written in full, not rounded

    @property
    def latex(self) -> str:
        """The whole line: symbol = formula = numbers = result (``=`` when
        the result is written exactly, else ``\\approx``)."""
        sign = "=" if self.exact else r"\approx"
        return (f"{self.symbol} = {self.symbolic} = {self.with_numbers} "
                f"{sign} {self.result}")

    def markdown(self) -> str:
        """The line as a displayed equation, for MyST and Jupyter."""
        return f"$$\n{self.latex}\n$$"

    def _repr_markdown_(self) -> str:  # Jupyter and Colab render this
        return self.markdown()


def worked(symbol: str, expression: str, *, unit: str = "",
           per_unit: float = 1.0, **quantities: Quantity) -> Worked:
    """Compute ``expression`` over ``quantities`` and write it out.

    Args:
        symbol: what the result is called, in LaTeX (``r't_\\text{loop}'``).
        expression: a Python expression over the quantities' names, with
            ``+ - * / **``, parentheses, numbers, ``min`` and ``max``.
        unit, per_unit: how the result is shown (see `Quantity`).
        quantities: the named `Quantity` values the expression uses.

    Example:
        >>> line = worked("t", "steps * k * launch", unit="ms",
        ...               per_unit=1e-3, steps=quantity("N", 8000),
        ...               k=quantity("k", 6),
        ...               launch=quantity(r"t_\\text{launch}", 1e-6, "µs",
        ...                               1e-6))
        >>> round(line.value, 6)
        0.048
        >>> print(line.symbolic)
        N \\cdot k \\cdot t_\\text{launch}
        >>> print(line.with_numbers, "=", line.result)
        8\\,000 \\times 6 \\times 1\\,\\mu\\text{s} = 48\\,\\text{ms}
    """
    tree = _parse(expression)
    _check_names(tree, quantities, expression)
    value = _evaluate(tree.body, quantities)
    shown = _in_units(value, per_unit)
    return Worked(
        symbol, value,
        _latex(tree.body, lambda name: quantities[name].symbol, r"\cdot"),
        _latex(tree.body, lambda name: quantities[name].shown(), r"\times"),
        latex_number(shown) + _unit(unit),
        exact=isinstance(shown, int) and abs(shown) < 10 ** 6)


def _in_units(value: float, per_unit: float) -> float:
    """``value`` in shown units; a whole count stays a whole number."""
    if isinstance(value, int) and per_unit == 1:
        return value
    return value / per_unit


def latex_number(value: float) -> str:
    """A number to three significant figures, in LaTeX: thousands apart,
    powers of ten for the very large and very small. A Python ``int``
    below a million (a count, a size) is written exactly.

    Example:
        >>> print(latex_number(8000), latex_number(3.0312),
        ...       latex_number(2.5e-9), latex_number(1024))
        8\\,000 3.03 2.5 \\times 10^{-9} 1\\,024
    """
    if value == 0:
        return "0"
    if isinstance(value, int) and abs(value) < 10 ** 6:
        return f"{value:,}".replace(",", r"\,")
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 6 or magnitude <= -4:
        mantissa = float(f"{value / 10 ** magnitude:.3g}")
        return f"{mantissa:g} \\times 10^{{{magnitude}}}"
    rounded = float(f"{value:.3g}")
    text = f"{rounded:,.{max(0, 2 - magnitude)}f}"
    if "." in text:  # 3.00 reads as 3, but 8,000 keeps its zeros
        text = text.rstrip("0").rstrip(".")
    return text.replace(",", r"\,")


def _unit(unit: str) -> str:
    if not unit:
        return ""
    return r"\," + _UNIT_LATEX.get(unit, rf"\text{{{unit}}}")


def _parse(expression: str) -> ast.Expression:
    try:
        return ast.parse(expression, mode="eval")
    except SyntaxError as error:
        raise ValueError(f"{expression!r} is not a Python expression: "
                         f"{error.msg}.") from None


def _check_names(tree: ast.Expression, quantities: dict[str, Quantity],
                 expression: str) -> None:
    for name, value in quantities.items():
        if not isinstance(value, Quantity):
            raise TypeError(f"{name}={value!r}: pass each number as "
                            "quantity(symbol, value, ...).")
    called = {node.func for node in ast.walk(tree)
              if isinstance(node, ast.Call)}  # checked by _evaluate
    used = {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and node not in called}
    missing = used - set(quantities)
    if missing:
        raise KeyError(f"{expression!r} uses {sorted(missing)}, which are "
                       "not given; pass each as name=quantity(...).")


_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
              ast.Pow: lambda a, b: a ** b}


def _evaluate(node: ast.AST, quantities: dict[str, Quantity]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value,
                                                     (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        return quantities[node.id].value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left, quantities),
                                         _evaluate(node.right, quantities))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, quantities)
    if _is_min_max(node):
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        pick = min if node.func.id == "min" else max
        return pick(_evaluate(arg, quantities) for arg in node.args)
    raise ValueError(f"{ast.unparse(node)!r}: a formula may use numbers, "
                     "names, + - * / **, min and max only.")


def _is_min_max(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("min", "max") and len(node.args) >= 2)


# Higher binds tighter; an operand of lower precedence gets parentheses.
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.Pow: 3}


def _latex(node: ast.AST, name_to: Callable[[str], str], times: str) -> str:
    if isinstance(node, ast.Name):
        return name_to(node.id)
    if isinstance(node, ast.Constant):
        return latex_number(float(node.value))  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp):
        return "-" + _latex(node.operand, name_to, times)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        inner = ", ".join(_latex(arg, name_to, times) for arg in node.args)
        return rf"\{node.func.id}\left({inner}\right)"
    assert isinstance(node, ast.BinOp)
    left = _latex(node.left, name_to, times)
    right = _latex(node.right, name_to, times)
    if isinstance(node.op, ast.Div):  # a fraction needs no parentheses
        return rf"\frac{{{left}}}{{{right}}}"
    mine = _PRECEDENCE[type(node.op)]
    left = _bracket(node.left, left, mine)
    right = _bracket(node.right, right, mine + isinstance(node.op, ast.Sub))
    if isinstance(node.op, ast.Pow):
        return f"{left}^{{{right}}}"
    symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: times}[type(node.op)]
    return f"{left} {symbol} {right}"


def _bracket(node: ast.AST, text: str, outer: int) -> str:
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Div) \
            and _PRECEDENCE[type(node.op)] < outer:
        return rf"\left({text}\right)"
    return text
