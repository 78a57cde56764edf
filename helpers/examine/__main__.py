"""``python -m helpers.examine module:function [--args module:name]``:
examine a function from a terminal.

The function's example arguments come from ``--args``, a callable that
returns a tuple of them; without it, from ``<function>_args`` in the same
module. Example::

    python -m helpers.examine mymodel:train_step --args mymodel:batch
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.examine",
        description="Find slow JAX patterns in a function.")
    parser.add_argument("function", help="module:function")
    parser.add_argument("--args", help="module:name of a callable returning "
                        "the example arguments as a tuple (default: "
                        "<function>_args in the same module)")
    parser.add_argument("--no-gpu", action="store_true",
                        help="skip the H100 compilation")
    options = parser.parse_args(argv)
    try:
        fn = resolve(options.function)
        make_args = resolve(options.args or f"{options.function}_args")
        args = make_args()
        if not isinstance(args, tuple):
            raise ExamineError(f"{options.args or 'the args callable'} "
                               "must return a tuple of arguments.")
        print(examine(fn, *args, gpu=not options.no_gpu))
    except ExamineError as error:
        print(f"examine: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
