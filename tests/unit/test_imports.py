"""Importing helpers does no JAX work: no module compiles a program or
makes an array at import time (test data is made on first use), so a
chapter's imports are quick and a broken exercise fails when checked, not
when imported."""

import subprocess
import sys

import pytest

# Runs in a fresh interpreter: JAX reports each compilation through
# jax.monitoring, and the listener is registered before any helpers import.
PROBE = """
import importlib, pkgutil, jax
events = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, secs, **kw: events.append(event)
    if event.endswith("backend_compile_duration") else None)
import helpers
found = {}
for info in pkgutil.walk_packages(helpers.__path__, "helpers."):
    if info.name.endswith("__main__"):
        continue
    before = len(events)
    importlib.import_module(info.name)
    if len(events) > before:
        found[info.name] = len(events) - before
print(len(list(pkgutil.walk_packages(helpers.__path__, "helpers."))))
print(found)
"""


@pytest.mark.slow
def test_importing_any_helpers_module_compiles_nothing():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    modules, compiled = done.stdout.strip().splitlines()[-2:]
    assert int(modules) > 40  # the whole package was imported
    assert compiled == "{}", f"modules that compile on import: {compiled}"
