"""helpers.lanes and helpers.backends: the Mosaic GPU path of fused_scan,
one chain per thread. Its numbers are checked in Mosaic GPU's interpreter
(jax 0.12 and newer); its compilation for an H100 on every version."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers import backends, crosscompile, env, lanes
from helpers.fused import fused_scan
from helpers.workbook import launches, launches_gpu

needs_interpreter = pytest.mark.skipif(
    lanes.interpreter_missing(),
    reason=f"Mosaic GPU has no interpreter in jax {jax.__version__} "
    "(from 0.12 on); its compilation is checked instead")
W = jnp.linspace(-1.0, 1.0, 12).reshape(1, 12) * 0.5
V = jnp.linspace(0.5, -0.5, 12).reshape(12, 1)


def mlp(m, n, w, v):
    h = jax.nn.sigmoid(m @ w)
    return jax.nn.sigmoid(h @ v) + n, {"h": h.sum(), "m": m}


def close(got, want, rtol=1e-5):
    jax.tree.map(lambda g, w: np.testing.assert_allclose(
        np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6), got, want)


@needs_interpreter
@pytest.mark.parametrize("chains, steps, reverse",
                         [(200, 100, False), (3, 70, True)])
def test_chains_in_lanes_equal_vmap_of_scan(chains, steps, reverse):
    init = jax.random.normal(jax.random.key(0), (chains, 1))
    xs = jax.random.normal(jax.random.key(1), (chains, steps, 1))
    got = lanes.launch(mlp, steps, reverse, init, xs, (W, V),
                       interpret=True)
    want = jax.vmap(lambda c, x: jax.lax.scan(
        lambda c, x: mlp(c, x, W, V), c, x, reverse=reverse))(init, xs)
    close(got, want)


@needs_interpreter
def test_fused_scan_on_mosaic_matches_scan_and_its_gradient():
    def loss(scan, w):
        step = launches.hoisted_step({"w_in": w, "w_out": V})
        carry, _ = scan(step, jnp.zeros(1), jnp.sin(jnp.arange(30.0))[:,
                                                                     None])
        return carry.sum()

    mosaic = lambda f, c, x: fused_scan(f, c, x, backend="mosaic",  # noqa
                                        interpret=True)
    close(loss(mosaic, W), loss(jax.lax.scan, W))
    close(jax.grad(lambda w: loss(mosaic, w))(W),
          jax.grad(lambda w: loss(jax.lax.scan, w))(W))


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_compiled_for_an_h100_fused_scan_picks_mosaic_gpu():
    found = crosscompile.run(launches_gpu.fused_backends_on_gpu, 1000)
    assert found["chosen"] == "mosaic"
    assert found["mosaic"]["custom calls"] == ["mosaic_gpu_v2"]
    assert found["triton"]["custom calls"] == ["__gpu$xla.gpu.triton"]


def test_the_scalariser_names_what_it_cannot_run():
    assert lanes.unsupported_operations(mlp, jnp.zeros(1), jnp.zeros(1),
                                        W, V) == set()
    assert lanes.unsupported_operations(
        lambda x: jnp.cumsum(x), jnp.ones(4)) == {"cumsum"}
    with pytest.raises(NotImplementedError, match="cumsum"):
        fused_scan(lambda c, x: (jnp.cumsum(c) + x, c), jnp.zeros(4),
                   jnp.ones((3, 4)), backend="mosaic",
                   interpret=not lanes.interpreter_missing())


@pytest.mark.parametrize("arch, backend, interpret", [
    ((9, 0), "mosaic", False),   # H100
    ((8, 0), "triton", False),   # A100
    (None, "triton", True),      # no GPU: Triton's interpreter
])
def test_the_backend_follows_the_capability(monkeypatch, arch, backend,
                                            interpret):
    monkeypatch.setattr(env, "on_gpu", lambda: arch is not None)
    monkeypatch.setattr(env, "gpu_arch", lambda: arch)
    assert backends.choose(None, None) == (backend, interpret)


def test_a_t4_gets_the_interpreter_with_a_warning(monkeypatch):
    monkeypatch.setattr(env, "on_gpu", lambda: True)
    monkeypatch.setattr(env, "gpu_arch", lambda: (7, 5))
    with pytest.warns(UserWarning, match=r"8\.0 or newer.*7\.5"):
        assert backends.choose(None, None) == ("triton", True)


def test_a_step_mosaic_cannot_run_falls_back_to_triton_on_hopper(
        monkeypatch):
    monkeypatch.setattr(env, "on_gpu", lambda: True)
    monkeypatch.setattr(env, "gpu_arch", lambda: (9, 0))
    assert backends.choose(None, None, lambda: False).backend == "triton"


def test_bad_backends_are_named():
    with pytest.raises(ValueError, match="'mosaic', 'triton'"):
        backends.choose("cuda", None)
    if lanes.interpreter_missing():
        with pytest.raises(NotImplementedError, match="from 0.12 on"):
            backends.choose("mosaic", True)
