"""Chapter 4's fused attention on a GPU: cuDNN's and Pallas's kernels
compute the einsum block's numbers (cuDNN's to bf16's precision) and each
compiles to one fused kernel."""

import jax
import numpy as np
import pytest

from helpers.workbook.ch04_profiling import attention, fused
from helpers.xla import hlo

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def block():
    params, x = attention.init(jax.random.key(0), **attention.GPU_SHAPE)
    n_head = attention.GPU_SHAPE["n_head"]
    want = attention.versions(n_head)["einsum"](params, x)
    return params, x, n_head, np.asarray(want)


@pytest.mark.parametrize("implementation,tolerance",
                         [("pallas", 2e-2), ("cudnn", 1e-1)])
def test_fused_blocks_compute_the_einsum_blocks_numbers(
        block, implementation, tolerance):
    params, x, n_head, want = block
    fn = fused.versions(n_head, (implementation,))[implementation]
    got = np.asarray(fn(params, x))
    # relative to the output's scale: TF32 and bf16 products round
    assert np.abs(got - want).max() <= tolerance * np.abs(want).max()
    targets = {c.target for c in hlo.custom_calls(fn, params, x)}
    assert any("triton" in t or "cudnn" in t for t in targets), targets
