"""Bring the notebook tools to a GPU host that has no package index.

A GPU host often has JAX with its CUDA plugin, NumPy, SciPy, pandas,
matplotlib and CuPy, but not the tools that execute and test notebooks
(a Jupyter kernel, nbclient, nbval, jupytext, ipywidgets, Perfetto,
NVML's Python binding), and
no way to download them. Two steps:

* ``download DIR`` (where pip reaches PyPI): the wheels of `TOOLS` and of
  everything they depend on, for the host's Python and platform;
* ``install DIR`` (on the host): installs into a side folder only the
  wheels whose project the host lacks, so its own JAX, NumPy and CuPy
  stay as they are, and prints the ``export PYTHONPATH=...`` line.

Usage (the folder ``.whl`` is ignored by git)::

    python3 scripts/offline_wheels.py download .whl        # online
    eval "$(python3 scripts/offline_wheels.py install .whl)"  # on the host
    BOOK_RECORD=1 python3 scripts/notebooks.py execute

Only the standard library and ``packaging`` (which matplotlib requires)
are used, so the script runs on a bare host.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import sys
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename

# What `make record` and `make test-gpu` need beyond JAX's own stack.
TOOLS = ("ipykernel", "nbclient", "nbval", "jupytext", "ipywidgets",
         "perfetto", "pyyaml", "absl-py", "flatbuffers", "xprof",
         "nvidia-ml-py")
# Dependencies the book never imports on the host, left out so that the
# folder fits a device call's 64 MiB (with the working tree): duckdb
# (24 MB) serves only a command-line tool of xprof's, debugpy ipykernel's
# debugger and jedi IPython's completion, both optional there.
LEAVE_OUT = frozenset({"duckdb", "debugpy", "jedi"})
# manylinux tags a current x86-64 Linux host accepts, newest first. pip
# matches each exactly, so a wheel tagged only manylinux_2_27 (xprof
# 2.24) is missed unless 2_27 is named: pip then fell back to xprof
# 2.22.1, whose platform-free wheel holds Windows binaries only.
PLATFORMS = ("manylinux_2_34_x86_64", "manylinux_2_31_x86_64",
             "manylinux_2_28_x86_64", "manylinux_2_27_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "linux_x86_64")


def download_command(folder: Path, python_version: str) -> list[str]:
    """The ``pip download`` call: binary wheels for another interpreter."""
    if not python_version.replace(".", "").isdigit():
        raise ValueError(f"python_version looks like '3.12'; got "
                         f"{python_version!r}.")
    command = [sys.executable, "-m", "pip", "download", "--only-binary",
               ":all:", "--python-version", python_version,
               "--implementation", "cp", "--dest", str(folder)]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    return command + list(TOOLS)


def installed_projects() -> set[str]:
    """Canonical names of the distributions this interpreter can import."""
    return {canonicalize_name(d.metadata["Name"])
            for d in importlib.metadata.distributions()
            if d.metadata["Name"]}


def windows_only(wheel: Path) -> bool:
    """True for a wheel whose compiled modules are Windows ones (``.pyd``)
    and none for Linux (``.so``): useless on the GPU host."""
    import zipfile
    names = zipfile.ZipFile(wheel).namelist()
    return any(n.endswith(".pyd") for n in names) and not any(
        n.endswith(".so") for n in names)


def prune(folder: Path, host_has: set[str]) -> list[Path]:
    """Delete the wheels of projects the host already has (``host_has``,
    canonical names) and of `LEAVE_OUT`, so that the folder travels light
    (a device call carries at most 64 MiB); returns what was deleted.

    Raises:
        ValueError: a wheel holds Windows binaries only (see `PLATFORMS`).
    """
    bad = [w.name for w in folder.glob("*.whl") if windows_only(w)]
    if bad:
        raise ValueError(f"{bad} hold Windows binaries only; name the "
                         "host's manylinux tag in PLATFORMS and download "
                         "again.")
    removed = wheels_to_install(folder, set())
    removed = [w for w in removed if w not in wheels_to_install(
        folder, host_has | LEAVE_OUT)]
    for wheel in removed:
        wheel.unlink()
    return removed


def read_names(path: Path) -> set[str]:
    """Canonical project names from a ``pip freeze`` or ``pip list``
    listing, or one name per line."""
    names: set[str] = set()
    for line in path.read_text().splitlines():
        name = line.split("==")[0].split()[0] if line.strip() else ""
        if name and not name.startswith(("#", "-", "Package")):
            names.add(canonicalize_name(name))
    return names


def wheels_to_install(folder: Path, installed: set[str]) -> list[Path]:
    """The wheels in ``folder`` whose project is not in ``installed``.

    Raises:
        FileNotFoundError: the folder is missing or holds no wheels.
    """
    wheels = sorted(folder.glob("*.whl"))
    if not wheels:
        raise FileNotFoundError(
            f"no wheels in {folder}: run `python3 scripts/offline_wheels.py "
            f"download {folder}` on a machine that reaches PyPI, then copy "
            f"the folder here.")
    return [w for w in wheels
            if canonicalize_name(parse_wheel_filename(w.name)[0])
            not in installed]


def install(folder: Path, site: Path) -> str:
    """Install the missing wheels into ``site``; the line to export."""
    missing = wheels_to_install(folder, installed_projects())
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        "--no-index", "--no-deps", "--no-compile",
                        "--upgrade", "--target", str(site),
                        *map(str, missing)], check=True,
                       stdout=sys.stderr)
    print(f"installed {len(missing)} wheels into {site}", file=sys.stderr)
    return f"export PYTHONPATH={site}${{PYTHONPATH:+:$PYTHONPATH}}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    get = steps.add_parser("download", help="fetch the wheels (online)")
    get.add_argument("folder", type=Path)
    get.add_argument("--python-version", default="3.12",
                     help="the GPU host's Python (default 3.12)")
    get.add_argument("--host-has", type=Path,
                     help="a `pip freeze` of the GPU host: its projects' "
                          "wheels are deleted after downloading")
    put = steps.add_parser("install", help="install them (on the host)")
    put.add_argument("folder", type=Path)
    put.add_argument("--site", type=Path, default=Path("/tmp/book-site"),
                     help="the side folder (default /tmp/book-site)")
    args = parser.parse_args(argv)
    if args.step == "download":
        args.folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(download_command(args.folder, args.python_version),
                       check=True)
        have = read_names(args.host_has) if args.host_has else set()
        removed = prune(args.folder, have)
        print(f"kept {len(list(args.folder.glob('*.whl')))} wheels; "
              f"{len(removed)} the host has were deleted", file=sys.stderr)
    else:
        print(install(args.folder, args.site))


if __name__ == "__main__":
    main()
