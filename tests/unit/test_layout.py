"""The helpers package's layout: no import circle, no module reaching into
another's private names (`scripts/import_graph.py` prints both), and the
layout the package's docstring maps, which the unit tests mirror."""

import importlib
import pkgutil
from pathlib import Path

import pytest

import helpers

from book_paths import ROOT
from scripts import import_graph


def test_the_import_graph_has_no_circle():
    assert import_graph.circle(import_graph.graph()) is None


def test_a_circle_is_found_and_named():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    found = import_graph.circle(edges)
    assert found is not None and set(found) == {"a", "b", "c"}


def test_no_module_uses_another_modules_private_names():
    assert import_graph.private_uses() == {}


def test_private_uses_are_found(tmp_path, monkeypatch):
    package = tmp_path / "helpers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def _hidden(): pass\n")
    (package / "b.py").write_text(
        "from helpers.a import _hidden\nfrom helpers import a\n"
        "def f():\n    return a._hidden()\n")
    monkeypatch.setattr(import_graph, "ROOT", tmp_path)
    monkeypatch.setattr(import_graph, "PACKAGE", package)
    assert import_graph.private_uses() == {
        "helpers.b": ["1: from helpers.a import _hidden", "4: a._hidden"]}
    assert import_graph.graph()["helpers.b"] == {"helpers.a"}


def test_every_part_the_package_docstring_maps_exists():
    parts = {info.name for info in pkgutil.iter_modules(helpers.__path__)}
    assert parts == {"measuring", "page", "xla", "profiler", "multi_device",
                     "pallas", "grading", "examine", "workbook"}
    for part in parts:
        assert f"- `{part}`" in helpers.__doc__
        assert importlib.import_module(f"helpers.{part}").__doc__


def test_each_chapter_has_one_folder_named_after_it():
    import helpers.workbook as workbook
    chapters = sorted(p.stem for p in (Path(helpers.__path__[0]).parent
                                       / "chapters").glob("[0-9]*.md"))
    folders = sorted(info.name for info in
                     pkgutil.iter_modules(workbook.__path__) if info.ispkg)
    assert folders == [f"ch{name}" for name in chapters]


# What tests/unit holds outside the packages' folders: the tests of the
# package as a whole, at the top, and the scripts' folder.
_TOP = {"test_layout.py", "test_imports.py"}
_NOT_A_PACKAGE = {Path("scripts")}


def test_the_unit_tests_mirror_the_package():
    """A module's tests sit in the folder named as its package is
    (helpers/xla/hlo -> tests/unit/xla), so a reader finds them."""
    unit = ROOT / "tests" / "unit"
    for test in unit.rglob("test_*.py"):
        folder = test.parent.relative_to(unit)
        if folder == Path(".") and test.name in _TOP or \
                folder in _NOT_A_PACKAGE:
            continue
        package = ROOT / "helpers" / folder
        assert (package / "__init__.py").exists(), (
            f"{test.relative_to(ROOT)} is in a folder no package of helpers "
            f"has: move it to the folder of the package it tests")


def test_no_test_imports_another_test_module():
    """What tests share lives in tests/support, which pytest puts on the
    path wherever a test sits; a test module is found only from its own
    folder."""
    for test in (ROOT / "tests").rglob("test_*.py"):
        for line in test.read_text().splitlines():
            words = line.split()
            assert not (words[:1] in (["from"], ["import"])
                        and words[1].startswith("test_")), (
                f"{test.relative_to(ROOT)}: {line.strip()} (move what it "
                f"needs to tests/support)")


def test_no_two_test_files_share_a_name():
    """pytest and mypy import each test file by its name alone."""
    names = [test.name for test in (ROOT / "tests").rglob("test_*.py")]
    assert len(names) == len(set(names)), sorted(
        name for name in set(names) if names.count(name) > 1)


@pytest.mark.parametrize("path", sorted(
    Path(helpers.__path__[0]).rglob("*.py")), ids=str)
def test_no_module_is_over_400_lines(path):
    lines = len(path.read_text().splitlines())
    assert lines <= 400, f"{path} has {lines} lines: split it by job"


def _functions(path):
    """``(name, lines of code, docstring)`` of every function in a file,
    nested ones included; its docstring's lines are not counted."""
    import ast
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node) or ""
            first = node.body[1 if doc and len(node.body) > 1 else 0]
            yield node.name, node.end_lineno - first.lineno + 1, doc


@pytest.mark.parametrize("path", sorted(
    Path(helpers.__path__[0]).rglob("*.py")), ids=str)
def test_no_function_is_over_50_lines_without_a_reason(path):
    long = [f"{name} ({lines} lines)" for name, lines, doc in
            _functions(path) if lines > 50 and "Long because" not in doc]
    assert not long, (f"{path}: split {long} into named parts, or say in "
                      "the docstring why not ('Long because ...')")
