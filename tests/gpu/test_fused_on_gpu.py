"""fused_scan on a GPU: the whole loop is one kernel launch (one custom
call in the compiled program, no while loop) and it agrees with lax.scan."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.pallas.scan import fused_scan
from helpers.xla import hlo

pytestmark = pytest.mark.gpu

W = jnp.linspace(-1.0, 1.0, 256).reshape(16, 16) / 4
XS = jnp.sin(jnp.arange(8 * 16 * 16.0).reshape(8, 16, 16))


def step(c, x):
    h = jnp.tanh(c @ W + x)
    return h, h.sum()


def test_one_kernel_and_no_while_loop():
    run = jax.jit(lambda c, xs: fused_scan(step, c, xs))
    c0 = jnp.zeros((16, 16))
    assert len(hlo.custom_calls(run, c0, XS)) == 1
    assert hlo.while_loops(run, c0, XS) == []
    got, want = run(c0, XS), jax.lax.scan(step, c0, XS)
    jax.tree.map(lambda g, w: np.testing.assert_allclose(
        g, w, rtol=1e-4, atol=1e-5), got, want)


def test_gradient_on_the_gpu():
    def loss(scan, w):
        def s(c, x):
            h = jnp.tanh(c @ w + x)
            return h, h.sum()
        return scan(s, jnp.zeros((16, 16)), XS)[1].sum()

    got = jax.grad(lambda w: loss(fused_scan, w))(W)
    want = jax.grad(lambda w: loss(jax.lax.scan, w))(W)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


W_IN = jnp.linspace(-1.0, 1.0, 12).reshape(1, 12)
W_OUT = jnp.linspace(0.5, -0.5, 12).reshape(12, 1)


def thread_step(momentum, noise):
    """The source's 1 -> 12 -> 1 MLP: odd shapes, padded for Triton."""
    hidden = jax.nn.sigmoid(momentum @ jax.nn.softplus(W_IN))
    return jax.nn.sigmoid(hidden @ jax.nn.softplus(W_OUT)) + noise, None


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_odd_shapes_in_one_kernel_single_and_many_chains(dtype):
    with jax.enable_x64(dtype == jnp.float64):
        noise = jnp.sin(jnp.arange(2000.0, dtype=dtype)).reshape(4, 500, 1)
        inits = jnp.zeros((4, 1), dtype)

        def run(scan):
            return jax.jit(jax.vmap(lambda i, n: scan(thread_step, i, n)[0])
                           )(inits, noise)

        fused = jax.jit(jax.vmap(
            lambda i, n: fused_scan(thread_step, i, n)[0]))
        assert len(hlo.custom_calls(fused, inits, noise)) == 1
        np.testing.assert_allclose(run(fused_scan), run(jax.lax.scan),
                                   rtol=1e-5)
