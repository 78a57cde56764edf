"""Chapter 2's Pallas row kernel: the numbers of a @ b at every K and
batch, the errors that say what to pass, and Triton's acceptance of it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.pallas.triton import ir
from helpers.workbook.ch02_fusion import row_kernel


@pytest.mark.parametrize("batch,k", [((1000,), 25), ((5,), 10),
                                      ((7, 3), 33), ((64,), 64),
                                      ((130,), 1)])
@pytest.mark.parametrize("pieces", [False, True])
def test_it_computes_a_times_b(batch, k, pieces):
    key_a, key_b = jax.random.split(jax.random.key(k))
    a = jax.random.normal(key_a, (*batch, 3, k))
    b = jax.random.normal(key_b, (*batch, k, 1))
    got = row_kernel.row_product(a, b, pieces=pieces)
    assert got.shape == (*batch, 3, 1)
    np.testing.assert_allclose(np.asarray(got), np.asarray(a @ b),
                               rtol=1e-5, atol=1e-5)


def test_a_row_splits_into_its_binary_digits():
    assert row_kernel.power_of_two_pieces(1) == ((0, 1),)
    assert row_kernel.power_of_two_pieces(32) == ((0, 32),)
    assert row_kernel.power_of_two_pieces(50) == ((0, 32), (32, 16),
                                                  (48, 2))
    for k in range(1, 81):
        pieces = row_kernel.power_of_two_pieces(k)
        assert sum(width for _, width in pieces) == k
        # each piece starts where the one before ends
        assert [o for o, _ in pieces] == [
            sum(w for _, w in pieces[:i]) for i in range(len(pieces))]
        assert all(w & (w - 1) == 0 for _, w in pieces)
    with pytest.raises(ValueError, match="at least one number"):
        row_kernel.power_of_two_pieces(0)


def test_it_refuses_shapes_it_does_not_multiply():
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, K\) by"):
        row_kernel.row_product(jnp.ones((4, 2, 5)), jnp.ones((4, 5, 1)))
    with pytest.raises(ValueError, match="power of two"):
        row_kernel.row_product(jnp.ones((4, 3, 5)), jnp.ones((4, 5, 1)),
                               rows=48)


def test_programs_cover_the_batch_exactly_where_they_can():
    assert row_kernel._whole_programs(1_000_000, 128) == 64
    assert row_kernel._whole_programs(1024, 128) == 128
    assert row_kernel._whole_programs(1000, 128) == 128  # padded


def test_triton_takes_the_kernel_for_an_h100():
    a = jax.ShapeDtypeStruct((4096, 3, 25), jnp.float32)
    b = jax.ShapeDtypeStruct((4096, 25, 1), jnp.float32)
    try:
        (module,) = ir.triton_modules(
            lambda a, b: row_kernel.row_product(a, b, interpret=False), a, b)
    except ir.LoweringUnavailable as why:
        pytest.skip(str(why))
    # tiles of 32 columns (25 rounded up), masked loads, no shared memory
    assert "tensor<128x32xf32>" in module or "tensor<64x32xf32>" in module
    assert "tt.load" in module
    # in pieces, 25 = 16 + 8 + 1: three tiles, none wider than 16
    (pieces,) = ir.triton_modules(lambda a, b: row_kernel.row_product(
        a, b, pieces=True, interpret=False), a, b)
    assert "x32xf32>" not in pieces
    assert all(f"x{w}xf32>" in pieces for w in (16, 8, 1))
