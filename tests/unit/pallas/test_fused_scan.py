"""fused_scan has lax.scan's meaning, values and gradients (checked in
Pallas interpret mode, which runs the same kernel program on a CPU)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.measuring import machine
from helpers.pallas import scan
from helpers.pallas.scan import fused_scan
from helpers.pallas.triton import ir
from helpers.pallas.triton.ir import unsupported_operations

W = jnp.linspace(-1.0, 1.0, 16).reshape(4, 4)
XS = jnp.sin(jnp.arange(40.0).reshape(10, 4))
INIT = jnp.full(4, 0.1)


def mlp_step(c, x):
    h = jnp.tanh(c @ W + x)
    return 0.5 * h + c, {"h": h, "total": h.sum()}


def pytree_step(c, x):
    new = {"sum": c["sum"] + x["a"], "prod": c["prod"] * jnp.cos(x["b"])}
    return new, new["sum"] * new["prod"]


def counter_step(c, x):
    count, value = c
    return (count + 1, value + x * count), value


def assert_trees_close(got, want, rtol=1e-6):
    jax.tree.map(lambda g, w: np.testing.assert_allclose(
        np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6), got, want)


@pytest.mark.parametrize("reverse", [False, True])
def test_matches_lax_scan_on_an_mlp_step(reverse):
    assert_trees_close(fused_scan(mlp_step, INIT, XS, reverse=reverse),
                       jax.lax.scan(mlp_step, INIT, XS, reverse=reverse))


def test_pytree_carry_and_inputs():
    init = {"sum": jnp.zeros(3), "prod": jnp.ones(3)}
    xs = {"a": jnp.arange(15.0).reshape(5, 3), "b": XS[:5, :3]}
    assert_trees_close(fused_scan(pytree_step, init, xs),
                       jax.lax.scan(pytree_step, init, xs))


def test_integer_state_runs_forward():
    init = (jnp.int32(0), jnp.float32(0))
    xs = jnp.arange(6.0)
    assert_trees_close(fused_scan(counter_step, init, xs),
                       jax.lax.scan(counter_step, init, xs))


def test_under_jit():
    run = jax.jit(lambda c, xs: fused_scan(mlp_step, c, xs))
    assert_trees_close(run(INIT, XS), jax.lax.scan(mlp_step, INIT, XS))


def _loss(scan, init, xs, w):
    def step(c, x):
        h = jnp.tanh(c @ w + x)
        return 0.5 * h + c, jnp.sum(h * h)

    carry, ys = scan(step, init, xs)
    return jnp.sum(carry**2) + ys.sum()


@pytest.mark.slow
def test_gradients_match_lax_scan_including_closed_over_weights():
    grad = jax.grad(_loss, argnums=(1, 2, 3))
    assert_trees_close(grad(fused_scan, INIT, XS, W),
                       grad(jax.lax.scan, INIT, XS, W), rtol=1e-5)


def test_gradient_of_a_reverse_scan():
    def loss(scan, init, xs, w):
        return _loss(lambda f, c, x: scan(f, c, x, reverse=True),
                     init, xs, w)

    grad = jax.grad(loss, argnums=(1, 2, 3))
    assert_trees_close(grad(fused_scan, INIT, XS, W),
                       grad(jax.lax.scan, INIT, XS, W), rtol=1e-5)


def test_unsupported_operations_are_named():
    assert unsupported_operations(lambda x: x[:2], jnp.ones(4)) == {"slice"}
    assert unsupported_operations(mlp_step, INIT, XS[0]) == set()
    with pytest.raises(NotImplementedError, match="the step uses slice, "):
        fused_scan(lambda c, x: (c + x[:2].sum(), c), INIT, XS)
    carry, _ = fused_scan(lambda c, x: (c + x[:2].sum(), c), INIT, XS,
                          check=False)
    np.testing.assert_allclose(carry, INIT + XS[:, :2].sum(), rtol=1e-5)


def test_bad_inputs_have_clear_errors():
    with pytest.raises(TypeError, match="step must be a function"):
        fused_scan("step", INIT, XS)
    with pytest.raises(ValueError, match="same leading dimension"):
        fused_scan(mlp_step, INIT, {"a": XS, "b": XS[:3]})
    with pytest.raises(ValueError, match="at least one array"):
        fused_scan(mlp_step, INIT, {})
    with pytest.raises(TypeError, match="carry shaped like init"):
        fused_scan(lambda c, x: (c.sum(), c), INIT, XS)
    with pytest.raises(TypeError, match=r"a pair \(carry, y\)"):
        fused_scan(lambda c, x: c + x, INIT, XS)


def test_integer_carry_cannot_be_differentiated():
    def loss(v):
        (_, value), _ = fused_scan(counter_step, (jnp.int32(0), v),
                                   jnp.arange(3.0))
        return value

    with pytest.raises(TypeError, match="floating-point carries"):
        jax.grad(loss)(jnp.float32(1.0))


# The source's shapes: a 1 -> 12 -> 1 MLP, which Triton only takes padded.
W_IN = jnp.linspace(-1.0, 1.0, 12).reshape(1, 12)
W_OUT = jnp.linspace(0.5, -0.5, 12).reshape(12, 1)
NOISE = jnp.cos(jnp.arange(30.0)).reshape(30, 1)


def thread_step(momentum, noise):
    hidden = jax.nn.sigmoid(momentum @ jax.nn.softplus(W_IN))
    force = jax.nn.sigmoid(hidden @ jax.nn.softplus(W_OUT))
    return force + noise, hidden.max()


@pytest.mark.slow
def test_padded_kernel_matches_lax_scan():
    assert_trees_close(fused_scan(thread_step, jnp.zeros(1), NOISE,
                                  pad=True),
                       jax.lax.scan(thread_step, jnp.zeros(1), NOISE))


@pytest.mark.slow
def test_padded_gradients_match_lax_scan():
    def loss(scan, w):
        def step(m, noise):
            hidden = jax.nn.sigmoid(m @ jax.nn.softplus(w))
            return hidden.mean(keepdims=True) + noise, hidden.sum()

        carry, ys = scan(step, jnp.zeros(1), NOISE)
        return carry.sum() + ys.sum()

    padded = functools.partial(fused_scan, pad=True)
    assert_trees_close(jax.grad(loss, 1)(padded, W_IN),
                       jax.grad(loss, 1)(jax.lax.scan, W_IN), rtol=1e-5)


@pytest.mark.slow
def test_padded_kernel_under_vmap():
    inits, noises = jnp.zeros((3, 1)), jnp.stack([NOISE, -NOISE, NOISE**2])
    got = jax.vmap(lambda i, n: fused_scan(thread_step, i, n, pad=True))(
        inits, noises)
    want = jax.vmap(lambda i, n: jax.lax.scan(thread_step, i, n))(
        inits, noises)
    assert_trees_close(got, want)


def gpu_kernels(fn, *args):
    try:
        return ir.triton_modules(fn, *args)
    except ir.LoweringUnavailable as err:
        pytest.skip(str(err))


def test_the_gpu_kernel_is_one_triton_loop():
    [module] = gpu_kernels(
        lambda i, n: fused_scan(thread_step, i, n, interpret=False),
        jnp.zeros(1), NOISE)
    assert module.count("scf.for") == 1  # the 30 steps run inside it
    assert "tensor<16xf32>" in module  # the hidden layer, padded


def test_the_backward_pass_is_one_more_kernel():
    def loss(w):
        def step(m, noise):
            return jnp.tanh(m @ w).sum(keepdims=True) + noise, m

        carry, _ = fused_scan(step, jnp.zeros(1), NOISE, interpret=False)
        return carry.sum()

    modules = gpu_kernels(jax.grad(loss), W_IN)
    assert [m.count("scf.for") for m in modules] == [1, 1]


def test_unpadded_odd_shapes_are_refused_with_triton_reason():
    gpu_kernels(lambda i, n: fused_scan(thread_step, i, n,
                                        interpret=False), jnp.zeros(1),
                NOISE)  # skips when this jax hides the lowering
    with pytest.raises(NotImplementedError, match=r"power of 2.*pad=True"):
        fused_scan(thread_step, jnp.zeros(1), NOISE, pad=False)


def test_triton_modules_needs_a_kernel():
    with pytest.raises(ValueError, match="no pallas_call"):
        ir.triton_modules(jnp.sin, jnp.ones(4))


def test_a_gpu_too_old_for_pallas_gets_the_interpreter(monkeypatch):
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "gpu_arch", lambda: (7, 5))  # a T4
    with pytest.warns(UserWarning, match=r"compute capability 8\.0.*7\.5"):
        got = fused_scan(mlp_step, INIT, XS)
    assert_trees_close(got, jax.lax.scan(mlp_step, INIT, XS))


def test_the_backward_kernel_is_checked_too(monkeypatch):
    checked = []
    real = scan._refuse_unlowerable

    def spy(plan, *arrays):
        checked.append(plan.loop.reverse)
        return real(plan, *arrays)

    monkeypatch.setattr(scan, "_refuse_unlowerable", spy)
    jax.grad(lambda w: _loss(fused_scan, INIT, XS, w))(W)
    assert checked == [False, True]  # the forward loop, then the reverse
    checked.clear()
    unchecked = functools.partial(fused_scan, check=False)
    jax.grad(lambda w: _loss(unchecked, INIT, XS, w))(W)
    assert checked == []


def test_a_step_s_operations_are_counted_by_what_they_do():
    module = ('%c = arith.constant 1.0 : f32\n'
              'scf.for %i = %a to %b step %c {\n'
              '  %0 = tt.load %p : tensor<16xf32>\n'
              '  %1 = arith.mulf %0, %0 : tensor<16xf32>\n'
              '  %2 = arith.addf %1, %0 : tensor<16xf32>\n'
              '  %3 = "tt.reduce"(%2) ({ }) : (tensor<16xf32>) -> f32\n'
              '  %4 = arith.addi %i, %c : i32\n'
              '  %5 = tt.splat %3 : f32 -> tensor<16xf32>\n'
              '  scf.yield %5\n}')
    table = ir.step_operations(module)
    assert table.loc["float arithmetic", "count"] == 2
    assert table.loc["float arithmetic", "operations"] == \
        "arith.addf, arith.mulf"
    assert table.loc["sum across lanes", "count"] == 1  # generic, quoted
    assert table.loc["index arithmetic", "count"] == 1
    assert table["count"].sum() == 5  # the splat sets up, not counted
