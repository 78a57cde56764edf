"""helpers.pallas.triton.chains: many chains side by side in each program
give vmap's results, lower to one Triton kernel, and refuse bad input
clearly."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.pallas.triton import ir
from helpers.pallas.triton.chains import fused_chains
from helpers.workbook.ch03_launches import for_h100, variants
from helpers.xla import crosscompile

POS = variants.positive(variants.init_weights(jax.random.key(0)))
STEP = variants.hoisted_step(POS)


def with_output(carry, x):
    carry = jnp.tanh(carry * 0.9 + x)
    return carry, {"twice": 2 * carry, "sum": carry.sum()}


@pytest.mark.slow
@pytest.mark.parametrize("chains, per_program", [(200, 64), (5, 8),
                                                 (64, 64)])
def test_equals_vmap_of_scan(chains, per_program):
    init = jax.random.normal(jax.random.key(1), (chains, 3))
    xs = jax.random.normal(jax.random.key(2), (chains, 17, 3))
    want = jax.vmap(lambda c, x: jax.lax.scan(with_output, c, x))(init, xs)
    got = fused_chains(with_output, init, xs,
                       chains_per_program=per_program)
    jax.tree.map(lambda g, w: np.testing.assert_allclose(
        g, w, rtol=1e-5, atol=1e-6), got, want)


@pytest.mark.slow
def test_the_chapter_model_matches_its_scan():
    keys = jax.random.split(jax.random.key(3), 70)
    weights = variants.init_weights(jax.random.key(0))
    got = variants.fused_side_by_side(weights, keys, 25)
    want = jax.vmap(lambda k: variants.scan_hoisted(weights, k, 25))(keys)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_one_triton_module_with_one_loop():
    init, xs = jnp.zeros((256, 1)), jnp.ones((256, 40, 1))
    modules = ir.triton_modules(lambda i, n: fused_chains(
        STEP, i, n, interpret=False), init, xs)
    assert [m.count("scf.for") for m in modules] == [1]


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_compiled_for_an_h100_it_is_one_kernel_of_one_warp():
    # The chapter's own call: a test run compiles it once.
    found = crosscompile.run(for_h100.side_by_side_for_gpu, 10_000,
                             variants.STEPS)
    assert found["custom calls"] == ["__gpu$xla.gpu.triton"]
    # 10,000 chains in programs of 64: 157, not one program per chain
    assert found["programs"] == 157
    assert found["warps per program"] == 1


def test_bad_input_is_refused_with_the_reason():
    init, xs = jnp.zeros((8, 1)), jnp.ones((8, 4, 1))
    with pytest.raises(ValueError, match="power of two"):
        fused_chains(STEP, init, xs, chains_per_program=48)
    with pytest.raises(ValueError, match="init has 8 chains but xs has 4"):
        fused_chains(STEP, init, xs[:4])


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_on_mosaic_gpu_the_chains_are_one_kernel_too():
    found = crosscompile.run(for_h100.side_by_side_for_gpu, 10_000, 100,
                             "mosaic")
    assert found["custom calls"] == ["mosaic_gpu_v2"]
