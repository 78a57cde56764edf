"""helpers.pallas.mosaic.chains and helpers.pallas.backends: the Mosaic GPU
path of fused_scan, one chain per thread. Its numbers are checked in Mosaic
GPU's interpreter (jax 0.12 and newer); its compilation for an H100 on every
version."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.measuring import machine
from helpers.pallas import backends
from helpers.pallas.loop import Loop
from helpers.pallas.mosaic import chains as mosaic_chains
from helpers.pallas.mosaic import scalarise
from helpers.pallas.scan import fused_scan
from helpers.workbook.ch03_launches import for_h100, variants
from helpers.xla import crosscompile

needs_interpreter = pytest.mark.skipif(
    mosaic_chains.interpreter_missing(),
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
    got = mosaic_chains.launch(Loop(mlp, steps, reverse), init, xs, (W, V),
                               interpret=True)
    want = jax.vmap(lambda c, x: jax.lax.scan(
        lambda c, x: mlp(c, x, W, V), c, x, reverse=reverse))(init, xs)
    close(got, want)


@needs_interpreter
def test_fused_scan_on_mosaic_matches_scan_and_its_gradient():
    def loss(scan, w):
        step = variants.hoisted_step({"w_in": w, "w_out": V})
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
    # The chapter's own call: a test run compiles it once.
    found = crosscompile.run(for_h100.fused_backends_for_gpu,
                             variants.STEPS)
    assert found["chosen"] == "mosaic"
    assert found["mosaic"]["custom calls"] == ["mosaic_gpu_v2"]
    assert found["triton"]["custom calls"] == ["__gpu$xla.gpu.triton"]


def test_the_scalariser_names_what_it_cannot_run():
    assert scalarise.unsupported_operations(mlp, jnp.zeros(1), jnp.zeros(1),
                                        W, V) == set()
    assert scalarise.unsupported_operations(
        lambda x: jnp.cumsum(x), jnp.ones(4)) == {"cumsum"}
    with pytest.raises(NotImplementedError, match="cumsum"):
        fused_scan(lambda c, x: (jnp.cumsum(c) + x, c), jnp.zeros(4),
                   jnp.ones((3, 4)), backend="mosaic",
                   interpret=not mosaic_chains.interpreter_missing())


@pytest.mark.parametrize("arch, backend, interpret", [
    ((9, 0), "mosaic", False),   # H100
    ((8, 0), "triton", False),   # A100
    (None, "triton", True),      # no GPU: Triton's interpreter
])
def test_the_backend_follows_the_capability(monkeypatch, arch, backend,
                                            interpret):
    monkeypatch.setattr(machine, "on_gpu", lambda: arch is not None)
    monkeypatch.setattr(machine, "gpu_arch", lambda: arch)
    assert backends.choose(None, None) == (backend, interpret)


def test_a_t4_gets_the_interpreter_with_a_warning(monkeypatch):
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "gpu_arch", lambda: (7, 5))
    with pytest.warns(UserWarning, match=r"8\.0 or newer.*7\.5"):
        assert backends.choose(None, None) == ("triton", True)


def test_a_step_mosaic_cannot_run_falls_back_to_triton_on_hopper(
        monkeypatch):
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "gpu_arch", lambda: (9, 0))
    assert backends.choose(None, None, lambda: False).backend == "triton"


def test_bad_backends_are_named():
    with pytest.raises(ValueError, match="'mosaic', 'triton'"):
        backends.choose("cuda", None)
    if mosaic_chains.interpreter_missing():
        with pytest.raises(NotImplementedError, match="from 0.12 on"):
            backends.choose("mosaic", True)


def test_stand_ins_replace_what_mosaic_gpu_cannot_lower():
    from helpers.pallas.mosaic import scalarise
    lacks = scalarise.mosaic_lacks()
    assert "log1p" not in lacks and "add_any" not in lacks
    assert "lgamma" in lacks  # no lowering and no stand-in: named
    x = jnp.array([1e-30, 1e-7, 1e-3, 0.5, -0.5, 3.0, 30.0, -0.9999])
    np.testing.assert_allclose(scalarise._log1p(x), jnp.log1p(x), rtol=3e-7)
    np.testing.assert_allclose(scalarise._expm1(x), jnp.expm1(x), rtol=3e-7)
    assert float(scalarise._log1p(jnp.float32(-1.0))) == -np.inf
    assert float(scalarise._expm1(jnp.float32(-200.0))) == -1.0
    # softplus uses log1p, a gradient add_any: both scalarise now
    assert scalarise.unsupported_operations(
        lambda c, x: (jax.nn.softplus(c) + x, c), jnp.zeros(1),
        jnp.zeros(1)) == set()
    assert scalarise.unsupported_operations(
        lambda c: jax.lax.lgamma(c), jnp.ones(1)) == {"lgamma"}


def test_float64_and_steps_too_big_for_shared_memory_are_not_for_lanes():
    with jax.enable_x64(True):
        assert scalarise.unsupported_operations(
            mlp, jnp.zeros(1, jnp.float64), jnp.zeros(1, jnp.float64),
            W, V) == {"float64"}
    assert mosaic_chains.can_run(mlp, jnp.zeros(1), jnp.zeros(1), W, V)
    # A 16x16 carry: 256 lane vectors of 512 bytes each, twice over for
    # a gradient, beside the 16x16 weights' cotangents: over 200 KiB.
    w16 = jnp.ones((16, 16))
    assert not mosaic_chains.can_run(
        lambda c, x, w: (jnp.tanh(c @ w + x), c.sum()),
        jnp.zeros((16, 16)), jnp.zeros((16, 16)), w16)


def test_chunks_shrink_to_fit_shared_memory():
    small = mosaic_chains._steps_per_chunk(
        1000, jnp.zeros((4, 1)), jnp.zeros((4, 1000, 1)),
        jax.ShapeDtypeStruct((1,), jnp.float32), ())
    assert small == mosaic_chains.STEPS_PER_CHUNK
    wide = mosaic_chains._steps_per_chunk(
        1000, jnp.zeros((4, 1)), jnp.zeros((4, 1000, 40)),
        jax.ShapeDtypeStruct((40,), jnp.float32), ())
    assert 1 <= wide < mosaic_chains.STEPS_PER_CHUNK
    assert wide * 80 * mosaic_chains.LANES * 4 <= mosaic_chains.SMEM_BUDGET
    with pytest.raises(ValueError, match="backend='triton'"):
        mosaic_chains._steps_per_chunk(10, jnp.zeros((4, 1)),
                               jnp.zeros((4, 10, 400)),
                               jax.ShapeDtypeStruct((400,), jnp.float32), ())


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_the_gpu_tests_steps_compile_for_an_h100():
    """The dry run of tests/gpu/test_fused_on_gpu.py: on the first GPU
    visit Mosaic GPU refused three of these (shared memory, float64,
    log1p); each now compiles, Mosaic GPU taking what it can run."""
    found = crosscompile.run(for_h100.fused_cases_for_gpu)
    # Every case on every jax (on 0.12 the tanh layer and its gradient
    # failed while the child's abstract mesh had jax 0.12's Explicit axes).
    assert {name: case.get("error") for name, case in found.items()} == \
        dict.fromkeys(["tanh layer", "gradient", "mlp float32",
                       "mlp float64"])
    assert found["mlp float32"]["custom calls"] == ["mosaic_gpu_v2"]
    for name in ("tanh layer", "mlp float64"):
        assert found[name]["custom calls"] == ["__gpu$xla.gpu.triton"]
    assert found["gradient"]["custom calls"] == ["__gpu$xla.gpu.triton"] * 2
    assert all(case["while loops"] == 0 for case in found.values())


def test_a_chains_sums_are_trees_not_lines():
    from helpers.pallas.mosaic.scalarise import tree_sum

    class Depth:
        """A value that remembers how many dependent steps made it."""

        def __init__(self, depth=0):
            self.depth = depth

    def combine(a, b):
        return Depth(max(a.depth, b.depth) + 1)

    # the step's second layer sums 12 hidden units: 4 levels, not 11
    assert tree_sum([Depth() for _ in range(12)], combine).depth == 4
    assert tree_sum([Depth()], combine).depth == 0
    assert tree_sum(list(range(1, 13)), lambda a, b: a + b) == 78
