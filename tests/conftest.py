"""Shared test settings: every test runs on the CPU unless marked gpu."""

import os

import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


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
