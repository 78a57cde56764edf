"""Test settings shared by the unit tests and the notebook runs.

- Everything runs on the CPU unless marked `gpu`; such tests are skipped
  with the reason when JAX has no GPU.
- Each notebook's total execution time is printed at the end, so a chapter
  that grows slow is noticed before CI's time limit is (with pytest-xdist
  too: the workers' reports reach this process's hooks).
- With ``BOOK_DRY_RUN=1`` (set by `make test`) the chapters take their GPU
  code paths here, at this machine's sizes, saving nothing.
- Compilations for an H100 are kept for the run, so a chapter and a unit
  test asking for the same one share it.
- Tests that read the built book in Chromium ask for `needs_browser`:
  skipped where there is none, with the command that installs it.
"""

import collections
import os
import shutil
import tempfile

import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

# Chapter 7's helpers run on 8 devices; a machine without them gets
# simulated CPU devices, which must be asked for before JAX starts.
from helpers.multi_device import meshes  # noqa: E402

meshes.simulate(8)

# The chapters and the unit tests compile several of the same programs for
# an H100 (helpers.xla.crosscompile.run): one folder per test run keeps each
# result once. Made here, before pytest-xdist starts its workers, so that
# they, the notebooks' kernels and their children all share it.
from helpers.xla import crosscompile  # noqa: E402

_CROSSCOMPILE_CACHE = None
if crosscompile.CACHE_ENV not in os.environ:
    _CROSSCOMPILE_CACHE = tempfile.mkdtemp(prefix="crosscompile-")
    os.environ[crosscompile.CACHE_ENV] = _CROSSCOMPILE_CACHE


@pytest.fixture
def needs_browser():
    """Skip a test that reads pages in Chromium where there is none,
    saying how to install it; fail instead where one is required (CI sets
    ``BOOK_REQUIRE_BROWSER``)."""
    from scripts import chromium

    try:
        chromium.find()
    except chromium.Missing as missing:
        if chromium.required():
            pytest.fail(f"{missing} ({chromium.REQUIRED_VARIABLE} is set: "
                        f"this machine must read the book in a browser.)")
        pytest.skip(str(missing))


_NOTEBOOK_SECONDS: dict[str, float] = collections.defaultdict(float)
# `make test` sets BOOK_DRY_RUN=1 so that the chapters run every GPU code
# path here (helpers.measuring.recorded); the unit tests run without it, since
# they
# test live_or_recorded's other paths too. It is read, not removed, here:
# pytest-xdist's workers start after this file is imported and inherit
# the environment; each test sets or clears it below.
_DRY_RUN = os.environ.get("BOOK_DRY_RUN")


def pytest_runtest_setup(item):
    """Dry-run mode for the chapters' kernels only (they start with the
    first cell of each notebook and inherit this environment)."""
    if _DRY_RUN and item.nodeid.split("::")[0].endswith(".ipynb"):
        os.environ["BOOK_DRY_RUN"] = _DRY_RUN
    else:
        os.environ.pop("BOOK_DRY_RUN", None)


def pytest_unconfigure(config):
    """Remove the run's cache of H100 compilations (in the process that
    made it, after its workers have finished)."""
    if _CROSSCOMPILE_CACHE:
        shutil.rmtree(_CROSSCOMPILE_CACHE, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Skip tests marked `gpu` when JAX has no GPU, saying why."""
    import jax

    if jax.default_backend() == "gpu":
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; run `make test-gpu` "
                            "on a GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_runtest_logreport(report):
    """Add up the time of every cell of each notebook."""
    path = report.nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        _NOTEBOOK_SECONDS[path] += report.duration


def pytest_terminal_summary(terminalreporter):
    if not _NOTEBOOK_SECONDS:
        return
    terminalreporter.section("notebook execution time")
    for path, seconds in sorted(_NOTEBOOK_SECONDS.items()):
        terminalreporter.write_line(f"{seconds:7.1f} s  {path}")
    terminalreporter.write_line(
        f"{sum(_NOTEBOOK_SECONDS.values()):7.1f} s  all notebooks")


@pytest.fixture(autouse=True)
def _doctest_names(request):
    """The names every docstring example of `helpers` may use without
    importing them: JAX, NumPy and pandas as the chapters import them."""
    if type(request.node).__name__ != "DoctestItem":
        return
    import jax
    import jax.numpy as jnp
    import numpy as np
    import pandas as pd

    request.getfixturevalue("doctest_namespace").update(
        jax=jax, jnp=jnp, lax=jax.lax, np=np, pd=pd)
