"""Chapter 5's training-step utilisation: the FLOP count, the mixed
step's agreement with the float32 step, and the products XLA:GPU gives
each for an H100."""

import jax
import numpy as np
import pandas as pd
import pytest

from helpers.workbook.ch05_transformations import transforms, utilisation
from helpers.xla import crosscompile


def test_model_flops_count_three_products_a_layer():
    # one layer: 2*b*w^2 forward, twice that backward
    assert utilisation.model_flops(4, 3, depth=1) == 6 * 3 * 16
    assert utilisation.model_flops(8192, 8192) == pytest.approx(6.6e12,
                                                                rel=0.01)


def test_the_mixed_step_moves_the_weights_as_the_float32_step_does():
    params, x, y = utilisation.step_inputs(64, 32)
    want = transforms.sgd_step(params, x, y)
    got = utilisation.mixed_sgd_step(params, x, y)
    for name in params:
        update_want = np.asarray(want[name] - params[name])
        update_got = np.asarray(got[name] - params[name])
        # bf16 keeps 8 significant bits: the updates agree to a few %
        error = (np.linalg.norm(update_got - update_want)
                 / np.linalg.norm(update_want))
        assert error < 0.05
        assert got[name].dtype == params[name].dtype == np.float32


def test_mfu_table_rates_each_step_against_the_bf16_peak():
    table = utilisation.mfu_table(((32, 16),))
    assert list(table["step"]) == list(utilisation.STEPS)
    rate = table["GFLOP"] / table["device ms"] * 1e12
    assert np.allclose(table["MFU"], rate / utilisation.BF16_PEAK_FLOPS)
    assert (table["device ms"] > 0).all()
    assert isinstance(table, pd.DataFrame)


@pytest.mark.skipif(not crosscompile.available(),
                    reason="no XLA:GPU compiler here")
def test_on_an_h100_the_mixed_steps_products_are_all_bf16():
    types = crosscompile.run(utilisation.product_types_for_gpu, 1024, 512)
    assert types[utilisation.MIXED] == ["bf16 x bf16"]
    assert types[utilisation.FLOAT32] == ["f32 x f32"]


def test_the_mixed_step_is_differentiable_to_float32_gradients():
    params, x, y = utilisation.step_inputs(16, 8)
    grads = jax.grad(utilisation.mixed_loss)(params, x, y)
    assert all(g.dtype == np.float32 for g in grads.values())
