"""``python -m helpers.examine module:function [--args module:name]
[--calls module:name]``: examine a function from a terminal.

The function's example arguments come from ``--args``, a callable that
returns a tuple of them; without it, from ``<function>_args`` in the same
module. ``--calls`` names a callable that returns a list of argument
tuples, one per call of a sequence (retracing, an output fed back in).
Example::

    python -m helpers.examine mymodel:train_step --args mymodel:batch \
        --calls mymodel:three_steps
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from helpers.examine.checker import ExamineError, examine


def resolve(target: str) -> Any:
    """The object ``module:name`` names, with a clear error otherwise."""
    module_name, _, name = target.partition(":")
    if not module_name or not name:
        raise ExamineError(f"{target!r}: write module:name, e.g. "
                           "mymodel:train_step.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ExamineError(f"cannot import {module_name!r} ({error}); run "
                           "from the folder that holds it.") from error
    if not hasattr(module, name):
        raise ExamineError(f"{module_name} has no {name!r}.")
    return getattr(module, name)


def produce(target: str, what: str) -> Any:
    """What the callable ``module:name`` returns, with a clear error
    when it is not callable or raises."""
    make = resolve(target)
    if not callable(make):
        raise ExamineError(f"{target} is a {type(make).__name__}, not a "
                           f"function: name a function that returns the "
                           f"{what}.")
    try:
        return make()
    except Exception as error:  # the reader's code
        said = str(error).splitlines()[0] if str(error) else ""
        raise ExamineError(f"{target}() raised {type(error).__name__}: "
                           f"{said}; it should return the {what}."
                           ) from error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.examine",
        description="Find slow JAX patterns in a function.")
    parser.add_argument("function", help="module:function")
    parser.add_argument("--args", help="module:name of a callable returning "
                        "the example arguments as a tuple (default: "
                        "<function>_args in the same module)")
    parser.add_argument("--calls", help="module:name of a callable "
                        "returning a list of argument tuples, one per call")
    parser.add_argument("--no-gpu", action="store_true",
                        help="skip the H100 compilation")
    options = parser.parse_args(argv)
    try:
        fn = resolve(options.function)
        source = options.args or f"{options.function}_args"
        args = produce(source, "example arguments as a tuple")
        if not isinstance(args, tuple):
            raise ExamineError(f"{source} must return a tuple of "
                               "arguments.")
        calls = (produce(options.calls, "argument tuples of the calls, as "
                         "a list") if options.calls else None)
        print(examine(fn, *args, calls=calls, gpu=not options.no_gpu))
    except ExamineError as error:
        print(f"examine: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
