"""Every chapter's setup cell, run the way Colab runs it: from an empty
working folder, as a Colab runtime (``COLAB_RELEASE_TAG``), with no copy
of the book beside it. It must clone the book, import `helpers` from that
clone, install nothing the environment already has, and say how to keep
one's edits. The clone comes from this checkout (``BOOK_REPOSITORY``), so
the test needs no network; the suite runs it at both JAX ends.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import notebooks  # noqa: E402

REPORT = ("\nimport json\nimport helpers\n"
          "print(json.dumps({'helpers': helpers.__file__, "
          "'installed': installed}))")


def test_the_setup_cell_clones_the_book_and_imports_it_there(tmp_path):
    folder = notebooks.repository_url().split("/")[-1]
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "XLA_FLAGS")}
    env.update(COLAB_RELEASE_TAG="test", JAX_PLATFORMS="cpu",
               BOOK_REPOSITORY=f"file://{ROOT}")
    ran = subprocess.run(
        [sys.executable, "-c", notebooks.setup_cell_source() + REPORT],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    said = ran.stdout.strip().splitlines()
    report = json.loads(said[-1])
    clone = tmp_path / folder
    assert (clone / "helpers").is_dir() and (clone / "chapters").is_dir()
    assert Path(report["helpers"]).resolve().is_relative_to(clone)
    assert report["installed"] == []  # the environment has them all
    assert "To keep your edits, save a copy: File > Save a copy in " \
        "Drive." in said


# What a Colab runtime ships that the setup cell does not install: JAX and
# the scientific stack, and the notebook machinery (IPython, nbformat,
# jinja2 for pandas' styled tables), each at its newest release.
COLAB_SHIPS = ("jax", "numpy", "scipy", "pandas", "matplotlib", "ipython",
               "nbformat", "jinja2")
# A chapter's imports after the setup cell, and one measurement.
FIRST_STEPS = """
import jax, jax.numpy as jnp
from helpers.measuring import bench, device_time
from helpers.page import widgets
from helpers.profiler import xprof_tables
timing = bench.benchmark(jax.jit(lambda a: a + 1), jnp.ones(1000))
print(json.dumps({"median": timing.median, "jax": jax.__version__}))
"""


def _registry_reachable(folder: Path) -> bool:
    ran = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q",
         "--dest", str(folder), "six"], capture_output=True, timeout=120)
    return ran.returncode == 0


def test_the_setup_cell_sets_up_a_fresh_colab_like_environment(tmp_path):
    """A new virtual environment with only what Colab ships, at the
    newest releases: the setup cell clones the book, installs what Colab
    lacks, and a chapter's imports and a first measurement then work."""
    if not _registry_reachable(tmp_path / "probe"):
        pytest.skip("no package registry to install from")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", *COLAB_SHIPS],
                   check=True, timeout=900)
    folder = tmp_path / "content"  # Colab's working folder, empty
    folder.mkdir()
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "XLA_FLAGS", "VIRTUAL_ENV")}
    env.update(COLAB_RELEASE_TAG="test", JAX_PLATFORMS="cpu",
               BOOK_REPOSITORY=f"file://{ROOT}")
    ran = subprocess.run(
        [python, "-c", notebooks.setup_cell_source() + REPORT + FIRST_STEPS],
        cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    said = ran.stdout.strip().splitlines()
    report, measured = json.loads(said[-2]), json.loads(said[-1])
    clone = folder / notebooks.repository_url().split("/")[-1]
    assert Path(report["helpers"]).resolve().is_relative_to(clone)
    assert sorted(report["installed"]) == ["ipywidgets", "jupytext", "xprof"]
    assert any(line.startswith("Installing ipywidgets") for line in said)
    assert measured["median"] > 0
