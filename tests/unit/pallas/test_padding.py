"""helpers.pallas.triton.padding: functions run on power-of-two padded
arrays give the same logical results as on the originals, or are refused by
name."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.pallas.triton import padding

KEYS = jax.random.split(jax.random.key(0), 4)
W1 = jax.random.normal(KEYS[0], (1, 12))
W2 = jax.random.normal(KEYS[1], (12, 3))
X = jnp.array([0.3])


def run_padded(fn, *args):
    padded = padding.pad_function(fn, *args)(
        *jax.tree.map(padding.pad_array, args))
    want = fn(*args)
    return jax.tree.map(lambda p, w: padding.unpad_array(p, w.shape),
                        padded, want), want


def test_padded_shape_rounds_each_dimension_up():
    assert padding.padded_shape((1, 2, 3, 12, 16, 17)) == \
        (1, 2, 4, 16, 16, 32)
    assert padding.padded_shape(()) == ()


def test_padded_shape_refuses_empty_dimensions():
    with pytest.raises(ValueError, match="at least one element"):
        padding.padded_shape((4, 0))


def test_pad_array_keeps_leading_axes_and_round_trips():
    x = jnp.arange(30.0).reshape(5, 6)
    padded = padding.pad_array(x, leading=1)
    assert padded.shape == (5, 8)
    assert float(padded[:, 6:].sum()) == 0.0
    np.testing.assert_array_equal(padding.unpad_array(padded, (6,)), x)


@pytest.mark.parametrize("name, fn", [
    # softplus(0) = log 2: zero padding alone would corrupt these sums
    ("softplus dot", lambda x, w1, w2: jax.nn.sigmoid(
        jax.nn.sigmoid(x @ jax.nn.softplus(w1)) @ jax.nn.softplus(w2))),
    ("sum of exp", lambda x, w1, w2: jnp.exp(w1).sum(axis=1)),
    ("max of negatives", lambda x, w1, w2: (-jnp.abs(w2)).max(axis=0)),
    ("min", lambda x, w1, w2: jnp.abs(w2).min()),
    ("argmax", lambda x, w1, w2: jnp.argmax(-jnp.abs(w2), axis=0)),
    ("batched einsum", lambda x, w1, w2: jnp.einsum(
        "ij,ik->ijk", w2, jnp.cos(w2))),
    ("matrix product", lambda x, w1, w2: jnp.exp(w2.T) @ jnp.exp(w2)),
    ("size-1 reshapes", lambda x, w1, w2: jnp.exp(w1.reshape(12))[None]),
    ("transpose and iota", lambda x, w1, w2: w2.T + jnp.arange(12.0)),
    # derivatives: since jax 0.11.2 those of tanh, asin, acos and atanh
    # emit the primitive one_minus_square
    ("gradient of tanh", lambda x, w1, w2: jax.grad(
        lambda w: jnp.tanh(w @ w2).sum())(w1)),
    ("gradients of asin, acos, atanh", lambda x, w1, w2: jax.grad(
        lambda w: (jnp.arcsin(w) + jnp.arccos(w) + jnp.arctanh(w)).sum()
    )(jnp.tanh(w1) / 2)),
])
@pytest.mark.slow
def test_logical_results_match(name, fn):
    got, want = run_padded(fn, X, W1, W2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                               err_msg=name)


@pytest.mark.slow
def test_pytrees_and_closed_over_arrays():
    def fn(tree):
        return {"y": jnp.tanh(tree["a"] @ W2).sum(), "z": tree["a"] * 2}

    got, want = run_padded(fn, {"a": jnp.ones((5, 12))})
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5)
    np.testing.assert_allclose(got["z"], want["z"])


def test_small_dots_become_multiply_and_sum():
    fn = padding.pad_function(lambda x, w: x @ w, X, W1)
    jaxpr = str(jax.make_jaxpr(fn)(padding.pad_array(X),
                                   padding.pad_array(W1)))
    assert "dot_general" not in jaxpr and "reduce_sum" in jaxpr


def test_large_square_dots_stay_dots():
    a = jnp.ones((20, 24))
    fn = padding.pad_function(lambda a: a @ a.T, a)
    jaxpr = str(jax.make_jaxpr(fn)(padding.pad_array(a)))
    assert "dot_general" in jaxpr


def test_refuses_reshapes_that_move_elements():
    with pytest.raises(NotImplementedError, match=r"reshape from \(12,\)"):
        run_padded(lambda v: v.reshape(3, 4), jnp.ones(12))


def test_refuses_unknown_operations_by_name():
    with pytest.raises(NotImplementedError, match="'cumsum'"):
        run_padded(lambda v: jnp.cumsum(v), jnp.ones(12))
