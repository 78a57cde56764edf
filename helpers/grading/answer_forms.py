"""Reading a learner's answer in whatever natural form it comes.

A check compares what a learner's function returned with what it should
return. Learners write the same answer in many forms: a list or a NumPy
array of booleans, a dict or a pandas Series, a Python float or a JAX
scalar, ``'Memory'`` or ``'memory'``. The functions here turn each into one
form, and raise `WrongAnswer`, with a message naming what was returned and
what was expected, when the answer cannot mean what the exercise asks.
`helpers.grading.exercises` reports a `WrongAnswer` as a failed criterion.
`computes_nothing` catches the one form no fact should pass: a function
that returns no array at all.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, Callable, Sequence

import jax
import numpy as np

from helpers.grading.report import Outcome, learner_error


class WrongAnswer(ValueError):
    """The learner's answer is of a form the exercise cannot grade (a
    string where a number was asked, a missing key, NaN ...)."""


def describe(value: Any) -> str:
    """A short description of a value for a learner: its type and size.

    Example:
        >>> describe("fast")
        "'fast' (a str)"
        >>> describe(np.ones((2, 3)))
        'an array of shape (2, 3) and dtype float64'
    """
    if value is None:
        return "None"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"{shown!r} (a str)"
    if hasattr(value, "shape") and hasattr(value, "dtype") and \
            getattr(value, "ndim", 0) > 0:
        return (f"an array of shape {tuple(value.shape)} and dtype "
                f"{value.dtype}")
    if isinstance(value, (list, tuple, dict, set)):
        return f"a {type(value).__name__} of {len(value)} items"
    if hasattr(value, "to_dict"):  # a pandas Series or DataFrame
        return f"a pandas {type(value).__name__} of {len(value)} rows"
    if isinstance(value, (numbers.Number, np.generic)) or \
            getattr(value, "ndim", None) == 0:
        return f"{value!r} (a {type(value).__name__})"
    return f"a {type(value).__name__}"


def as_number(value: Any, what: str = "a number") -> float:
    """``value`` as a finite Python float: Python and NumPy numbers, JAX
    and NumPy 0-d arrays and one-element sequences all qualify.

    Raises:
        WrongAnswer: anything else, and NaN or infinity.
    """
    try:
        array = np.asarray(value)
    except Exception:  # an object NumPy cannot read
        array = np.asarray(None)
    if array.size != 1 or array.dtype.kind not in "biuf":
        raise WrongAnswer(f"returned {describe(value)}; expected {what}")
    number = float(array.reshape(()))
    if not math.isfinite(number):
        raise WrongAnswer(f"returned {number}; expected {what}, finite")
    return number


def as_mapping(value: Any, keys: Sequence[str] | None = None
               ) -> dict[Any, Any]:
    """``value`` as a dict: a dict, a pandas Series (index to value), a
    one-column DataFrame, or a two-column one (first column to second).

    Args:
        value: the learner's answer.
        keys: when given, the keys the answer must have, no more, no fewer.

    Raises:
        WrongAnswer: not a mapping, or the wrong keys.
    """
    if hasattr(value, "columns") and len(value.columns) == 1:
        value = value.iloc[:, 0]
    elif hasattr(value, "columns") and len(value.columns) == 2:
        # groupby(..., as_index=False) or reset_index(): key, value
        value = dict(zip(value.iloc[:, 0], value.iloc[:, 1]))
    if hasattr(value, "to_dict") and not isinstance(value, Mapping):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise WrongAnswer(f"returned {describe(value)}; expected a dict "
                          "(or a pandas Series) by key")
    if keys is not None and set(value) != set(keys):
        raise WrongAnswer(f"returned the keys {sorted(map(str, value))}; "
                          f"expected {sorted(map(str, keys))}")
    return dict(value)


def as_choice(value: Any, choices: Sequence[str]) -> str:
    """``value`` as one of ``choices``, ignoring case, surrounding spaces
    and a trailing ``-bound``/`` bound`` (``'Memory-bound'`` is
    ``'memory'``).

    Raises:
        WrongAnswer: not a string, or none of the choices.
    """
    if isinstance(value, str):
        word = value.strip().lower()
        for suffix in ("-bound", " bound", "_bound"):
            word = word.removesuffix(suffix)
        for choice in choices:
            if word == choice.lower():
                return choice
    listed = " or ".join(repr(c) for c in choices)
    raise WrongAnswer(f"returned {describe(value)}; answer {listed}")


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (numbers.Number, np.generic)) or \
        getattr(value, "ndim", None) == 0


def leaves(value: Any) -> list[np.ndarray]:
    """The arrays inside an answer, in a canonical order, as NumPy arrays.

    A list or tuple of scalars (``[True, False]``) is one array, like the
    NumPy array a learner might return instead; a pandas Series is its
    values; a dict's values come in the order of its sorted keys; other
    nests (tuples of arrays, pytrees) are walked by `jax.tree.leaves`.
    Booleans become 0/1 so differences can be measured.

    Raises:
        WrongAnswer: a leaf that is not numbers (a string, None ...).
    """
    import jax

    if isinstance(value, (list, tuple)) and value and \
            all(_is_scalar(v) for v in value):
        found = [np.asarray(value)]
    elif hasattr(value, "to_numpy") and not isinstance(value, Mapping):
        found = [value.to_numpy()]
    elif isinstance(value, Mapping):
        found = [a for k in sorted(value, key=str) for a in leaves(value[k])]
    else:
        found = [np.asarray(leaf) for leaf in jax.tree.leaves(value)]
        if value is None or not found:
            raise WrongAnswer(f"returned {describe(value)}; expected "
                              "numbers")
    for array in found:
        if array.dtype.kind not in "biuf":
            raise WrongAnswer(f"returned {describe(value)}; expected "
                              "numbers")
    return [a.astype(float) if a.dtype == bool else a for a in found]


def computes_nothing(description: str, fn: Callable[..., Any],
                     args: tuple[Any, ...]) -> Outcome | None:
    """A failed `Outcome` when ``fn(*args)`` returns no array (``None``,
    an empty tuple): a fact about its compiled program would hold of a
    program that computes nothing. ``None`` when it returns an array.

    Only shapes are traced (`jax.eval_shape`), so this costs no compile.
    """
    try:
        returned = jax.eval_shape(fn, *args)
    except Exception as err:
        return learner_error(description, err)
    if jax.tree.leaves(returned):
        return None
    return Outcome(description, "fail", "your function returned "
                   f"{describe(returned)}, and a program that computes "
                   "nothing passes no check of what it computes",
                   "Return the result: is a `return` missing?")
