"""The import graph of the helpers package, and what it must not hold.

    python scripts/import_graph.py

prints every module of ``helpers`` with the ``helpers`` modules it imports
(at the top or inside a function: both run), then any import circle and
any use of another module's private name (``from m import _x`` or
``m._x``). It exits with 1 when it finds either; `tests/unit/test_layout.py`
runs the same checks.
"""

from __future__ import annotations

import ast
import graphlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "helpers"


def module_name(path: Path) -> str:
    """``helpers/xla/hlo/__init__.py`` -> ``helpers.xla.hlo``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _target(name: str, known: dict[str, Path]) -> str | None:
    """The module ``name`` refers to: itself, or the module holding it."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(path: Path, known: dict[str, Path]
            ) -> tuple[set[str], list[str]]:
    """The helpers modules ``path`` imports, and its uses of another
    module's private names, each as ``'line: what'``."""
    tree = ast.parse(path.read_text())
    edges: set[str] = set()
    private: list[str] = []
    aliases: dict[str, str] = {}  # local name -> helpers module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("helpers"):
                    edges.add(_target(alias.name, known) or alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("helpers"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in known:  # a module: ``from helpers.x import y``
                    edges.add(full)
                    aliases[alias.asname or alias.name] = full
                else:
                    edges.add(_target(node.module, known) or node.module)
                    if alias.name.startswith("_"):
                        private.append(f"{node.lineno}: from {node.module} "
                                       f"import {alias.name}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            private.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    edges.discard(module_name(path))
    return edges, private


def graph() -> dict[str, set[str]]:
    """``{module: the helpers modules it imports}``."""
    known = modules()
    return {name: imports(path, known)[0] for name, path in known.items()}


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the modules along it, or None."""
    try:
        tuple(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as err:
        return list(err.args[1])
    return None


def private_uses() -> dict[str, list[str]]:
    """``{module: its uses of other modules' private names}``."""
    known = modules()
    found = {name: imports(path, known)[1] for name, path in known.items()}
    return {name: uses for name, uses in found.items() if uses}


def main() -> int:
    edges = graph()
    for name, targets in edges.items():
        print(f"{name}: {', '.join(sorted(targets)) or '-'}")
    found = circle(edges)
    private = private_uses()
    print(f"\nimport circle: {' -> '.join(found) if found else 'none'}")
    print("private names of other modules used: "
          + ("none" if not private else ""))
    for name, uses in private.items():
        print(f"  {name}: {'; '.join(uses)}")
    return 1 if found or private else 0


if __name__ == "__main__":
    sys.exit(main())
