"""Chapter 4's fused attention: each implementation computes the einsum
block's numbers, refuses what it does not know, and (compiled for an
H100) keeps the scores out of memory."""

import jax
import numpy as np
import pytest

from helpers.workbook.ch04_profiling import (attention, fused,
                                             fused_for_h100)
from helpers.xla import crosscompile

SHAPE = dict(batch=2, seq=64, n_embd=128, n_head=4)


@pytest.fixture(scope="module")
def block():
    params, x = attention.init(jax.random.key(0), **SHAPE)
    want = attention.versions(SHAPE["n_head"])["einsum"](params, x)
    return params, x, np.asarray(want)


@pytest.mark.parametrize("implementation", ["xla", "pallas"])
def test_each_fused_block_computes_the_einsum_blocks_numbers(
        block, implementation):
    params, x, want = block
    got = fused.fused_block(params, x, n_head=SHAPE["n_head"],
                            implementation=implementation)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_an_unknown_implementation_is_refused_by_name(block):
    params, x, _ = block
    with pytest.raises(ValueError, match="one of"):
        fused.fused_block(params, x, n_head=4, implementation="flash")


def test_measure_compares_each_version_with_einsum(block):
    params, x, _ = block
    baseline = attention.versions(SHAPE["n_head"])["einsum"]
    result = fused.measure(params, x, SHAPE["n_head"], baseline, calls=6)
    assert set(result["median_us"]) == {"einsum", *fused.here()}
    for name in fused.here():
        verdict, ratio = result["against_einsum"][name]
        assert ratio > 0 and isinstance(verdict, str)
        assert len(result["device_us"][name]) >= 5


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_on_an_h100_pallas_keeps_the_scores_on_the_chip():
    rows = {r["version"]: r for r in crosscompile.run(
        fused_for_h100.structure)}
    assert rows["pallas"]["custom calls"] == ["__gpu$xla.gpu.triton"]
    scores_mb = 4 * 8 * 12 * 256 * 256 / 1e6
    assert (rows["einsum"]["temporary MB"]
            - rows["pallas"]["temporary MB"]) >= scores_mb * 0.99
