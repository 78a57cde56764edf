"""Chapter 2's fixes: equal numbers here, and what XLA:GPU compiles them to
for an H100 (the corrected facts of the chapter's explanation)."""

import jax.numpy as jnp
import numpy as np
import pytest

from helpers.workbook.ch02_fusion import fixes
from helpers.xla import crosscompile


@pytest.mark.slow
def test_every_version_computes_a_times_b():
    rng = np.random.default_rng(0)
    for k in (5, 25, 32):
        a = jnp.asarray(rng.standard_normal((7, 3, 3, k)), jnp.float32)
        b = jnp.asarray(rng.standard_normal((7, 3, k, 1)), jnp.float32)
        want = np.asarray(a @ b)
        for name, fn in fixes.VERSIONS.items():
            np.testing.assert_allclose(np.asarray(fn(a, b)), want,
                                       rtol=2e-5, atol=2e-5, err_msg=name)


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_what_xla_gpu_makes_of_each_fix():
    rows = {r["version"]: r for r in crosscompile.run(
        fixes.structure_for_gpu, 25, "float32", 100_000)}
    same = rows["batch-minor + transposes"]
    # XLA cancels transposes within one program: the same kernel as a @ b
    assert same["kernels"] == rows["a @ b"]["kernels"] == 1
    assert same["reductions"] == rows["a @ b"]["reductions"]
    assert same["bytes / floor"] == pytest.approx(1.0, abs=0.01)
    # a real layout change and the segment matmul write intermediates:
    # more than 1/0.85 of the floor's bytes, so the goal is out of reach
    for name in ("batch-minor + layout change", "segment matmul"):
        assert rows[name]["kernels"] >= 2
        assert rows[name]["bytes / floor"] > 1 / 0.85
    assert rows["pad K"]["reductions"] == "kInput"
    # the Pallas row kernel: one kernel moving exactly the floor's bytes
    assert rows["Pallas row kernel"]["kernels"] == 1
    assert rows["Pallas row kernel"]["bytes / floor"] == pytest.approx(
        1.0, abs=0.001)


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_xla_gpu_keeps_large_matrix_vector_products_as_products():
    kept = {r["dot"]: r["matrix product kept"]
            for r in crosscompile.run(fixes.strength_reduction_for_gpu)}
    assert kept == {
        "3xK matrix times K-vector, batched (the source, K=25)": False,
        "large matrix times vector (4096x4096 by 4096)": True,
        "vector times vector (4096)": False}


def test_by_version_gives_each_versions_worst_and_median_over_the_goal():
    import pandas as pd

    table = pd.DataFrame({
        "version": ["pad K", "pad K", "pad K", "a @ b", "a @ b", "a @ b"],
        "dtype": ["float32"] * 6, "K": [5, 10, 50] * 2,
        "achieved": [0.1, 0.9, 0.8, 0.95, 0.2, 0.6]})
    summary = fixes.by_version(table)
    assert list(summary.columns) == ["float32 worst", "float32 median"]
    assert summary.index.tolist() == ["pad K", "a @ b"]  # K = 5 left out
    assert summary.loc["pad K"].tolist() == [0.8, pytest.approx(0.85)]


def test_a_right_prediction_says_what_judged_it(monkeypatch):
    from helpers.workbook.ch02_fusion import exercises
    from helpers.xla import crosscompile
    monkeypatch.setattr(crosscompile, "available", lambda: False)
    exercises._compiled_for_h100.cache_clear()
    try:
        report = exercises.predict_kind.check(exercises.predict_solution)
    finally:
        exercises._compiled_for_h100.cache_clear()
    (outcome,) = report.outcomes
    assert outcome.status == "pass"
    assert outcome.detail.endswith(
        "judged by the chapter's rule: this machine has neither a GPU nor "
        "JAX's CUDA plugin to ask XLA:GPU")
