"""Chapter 3's latency kernel for one chain (chain_kernel): the folded
step is the thread's step, the kernel agrees with lax.scan in Pallas's
interpreter, bad inputs are refused; compiled for an H100, its loop has
no shuffle and a critical path under half the padded kernel's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.workbook.ch03_launches import chain_kernel, for_h100, variants
from helpers.xla import crosscompile

WEIGHTS = variants.init_weights(jax.random.key(0))
POS = variants.positive(WEIGHTS)


def test_the_folded_step_is_the_threads_step():
    a, c, d = chain_kernel.folded(POS)
    for m, noise in ((0.0, 0.3), (1.7, -1.2), (-4.0, 0.0)):
        ours = chain_kernel.step(jnp.float32(m), jnp.float32(noise), a, c,
                                 d, jnp.tanh)
        theirs, _ = variants.hoisted_step(POS)(jnp.full((1,), m),
                                               jnp.full((1,), noise))
        np.testing.assert_allclose(ours, theirs[0], rtol=1e-6)


@pytest.mark.parametrize("steps, seed", [(1, 0), (257, 1), (1000, 2)])
def test_the_kernel_agrees_with_the_scan_in_the_interpreter(steps, seed):
    noise = variants.noise_for(jax.random.key(seed), steps, jnp.float32)
    m0 = jnp.full((1,), 0.25, jnp.float32)
    expected, _ = jax.lax.scan(variants.hoisted_step(POS), m0, noise)
    got = chain_kernel.one_chain(POS, m0, noise, interpret=True)
    np.testing.assert_allclose(got, expected, rtol=2e-5)


def test_the_jitted_kernel_draws_the_fused_variants_noise():
    np.testing.assert_allclose(
        chain_kernel.latency_kernel(WEIGHTS, jax.random.key(1), 300),
        variants.fused(WEIGHTS, jax.random.key(1), 300), rtol=2e-5)


def test_float64_and_wrong_shapes_are_refused_with_what_to_do():
    noise = jnp.zeros((10, 1), jnp.float32)
    m0 = jnp.zeros((1,), jnp.float32)
    with jax.enable_x64(True):
        with pytest.raises(ValueError, match="float32 only.*fused_scan"):
            chain_kernel.one_chain(POS, m0, noise.astype(jnp.float64))
    with pytest.raises(ValueError, match=r"noise \(steps, 1\)"):
        chain_kernel.one_chain(POS, m0, jnp.zeros((10,), jnp.float32))
    with pytest.raises(ValueError, match="at least one step"):
        chain_kernel.one_chain(POS, m0, jnp.zeros((0, 1), jnp.float32))


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason="no CUDA plugin to compile for an H100 here")
def test_compiled_for_an_h100_the_loop_waits_through_no_shuffle():
    loops = crosscompile.run(for_h100.chain_loops_for_gpu, 64)
    padded, latency = loops["padded kernel"], loops["latency kernel"]
    assert padded["path"]["shuffle"] == 4  # the output's 16-lane sum
    assert "shuffle" not in latency["loop"]
    assert latency["path"] == {"arithmetic": latency["path length"] - 2,
                               "special function": 2}
    assert latency["path opcodes"].count("tanh.approx.f32") == 2
    assert latency["loop"]["special function"] == 13  # 12 units + 1
    assert latency["path length"] < padded["path length"] / 2
