"""Put JAX's CUDA plugin for the running jaxlib into a side folder.

`helpers.xla.crosscompile` compiles for an H100 without a GPU through JAX's
CUDA plugin, kept in ``<venv>/cross`` so the main environment never looks
for a GPU. The plugin must be the same version as jaxlib; `make install`
runs this script every time, so a folder left by another jaxlib (after an
upgrade, or a venv rebuilt on a newer Python) is replaced, not trusted.

Usage: python scripts/cross_plugin.py FOLDER
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

PACKAGES = ("jax-cuda12-plugin", "jax-cuda12-pjrt")


def installed_version(folder: Path) -> str | None:
    """The plugin version in ``folder``, or None when there is none."""
    found = sorted(folder.glob("jax_cuda12_plugin-*.dist-info"))
    if not found:
        return None
    return found[0].name.removeprefix("jax_cuda12_plugin-").removesuffix(
        ".dist-info")


def pip_install(folder: Path, version: str) -> bool:
    """pip-install the plugin of ``version`` into ``folder``; False when
    no wheel exists for this machine."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps",
         "--target", str(folder),
         *(f"{name}=={version}" for name in PACKAGES)])
    return done.returncode == 0


def ensure(folder: Path, version: str,
           install: Callable[[Path, str], bool] = pip_install) -> str:
    """Make ``folder`` hold the plugin of ``version``.

    Returns:
        "kept" (it already did), "installed", or "unavailable" (no wheel
        for this machine; the folder is then left empty).
    """
    if installed_version(folder) == version:
        return "kept"
    shutil.rmtree(folder, ignore_errors=True)  # another jaxlib's plugin
    if install(folder, version):
        return "installed"
    shutil.rmtree(folder, ignore_errors=True)  # a half-finished install
    return "unavailable"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    import jaxlib
    folder, version = Path(argv[0]), jaxlib.__version__
    outcome = ensure(folder, version)
    if outcome == "installed":
        print(f"cross_plugin: CUDA plugin {version} installed in {folder}")
    elif outcome == "unavailable":
        print(f"cross_plugin: no CUDA plugin {version} for this machine: "
              "the chapters will skip compiling for a GPU")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
