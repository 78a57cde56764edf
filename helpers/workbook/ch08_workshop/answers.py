"""Answers pasted into the workshop page, graded as their chapter would.

An answer written in a chapter uses the names that chapter imported
(``exercises``, ``variants``, ``jnp``, ``time``...). Pasted into the
workshop page, where those imports are not, it would fail with a
``NameError`` that says nothing about the answer. `in_its_chapter` gives
the answer the names it uses and the page lacks, from its chapter's own
import statements (`chapter_names`), on a copy: the participant's
session is not changed.
"""

from __future__ import annotations

import ast
import builtins
import functools
import types
from pathlib import Path
from typing import Any

import jupytext

from helpers.measuring import machine


@functools.cache
def chapter_names(chapter: str) -> dict[str, Any]:
    """The names a chapter's import statements define, by name.

    Args:
        chapter: the chapter's file name without suffix
            (``'03_launches'``), as `Exercise.chapter` gives it.

    Raises:
        FileNotFoundError: the chapter is not in the book's ``chapters``.
    """
    path = Path(machine.repo_root()) / "chapters" / f"{chapter}.md"
    if not path.exists():
        raise FileNotFoundError(
            f"no chapter {chapter!r} in {path.parent}: name it as "
            "Exercise.chapter does, e.g. '03_launches'.")
    names: dict[str, Any] = {}
    code = [cell.source for cell in jupytext.read(path).cells
            if cell.cell_type == "code"][1:]  # the setup cell clones
    for source in code:
        for statement in _imports(source):
            exec(compile(statement, str(path), "exec"), names)
    names.pop("__builtins__", None)
    return names


def _imports(source: str) -> list[ast.Module]:
    """The top-level import statements of a cell, each as a module to
    run; a cell that is not Python (a magic) has none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [ast.Module(body=[node], type_ignores=[]) for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))]


def in_its_chapter(fn: Any, chapter: str) -> Any:
    """``fn`` with the names it uses and cannot find (its own module's
    globals, then builtins) taken from ``chapter``'s imports; ``fn``
    itself when it lacks none. The functions of the same session it
    calls are given them too."""
    if not isinstance(fn, types.FunctionType):
        return fn
    session = fn.__globals__
    related = same_session(fn)
    wanted = {name for f in related for name in _names(f.__code__)
              if name not in session and not hasattr(builtins, name)}
    found = {name: value for name, value in chapter_names(chapter).items()
             if name in wanted}
    if not found:
        return fn
    scope = {**session, **found}
    for helper in related[1:]:
        scope[helper.__name__] = _rebound(helper, scope)
    return _rebound(fn, scope)


def same_session(fn: Any) -> list[types.FunctionType]:
    """``fn`` and the functions it calls by a global name defined in the
    same session (same globals), recursively, in a fixed order: what a
    grade of ``fn`` depends on. Empty for what is not a function."""
    found: list[types.FunctionType] = []

    def visit(f: Any) -> None:
        if not isinstance(f, types.FunctionType) or \
                any(f is seen for seen in found):
            return
        found.append(f)
        for name in sorted(_names(f.__code__)):
            value = f.__globals__.get(name)
            if getattr(value, "__globals__", None) is fn.__globals__:
                visit(value)

    visit(fn)
    return found


def _names(code: types.CodeType) -> set[str]:
    """The global names a code object, and the code nested in it, looks
    up."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _rebound(fn: types.FunctionType, scope: dict[str, Any]
             ) -> types.FunctionType:
    """A copy of ``fn`` that looks its globals up in ``scope``."""
    copy = types.FunctionType(fn.__code__, scope, fn.__name__,
                              fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__doc__ = fn.__doc__
    return copy
