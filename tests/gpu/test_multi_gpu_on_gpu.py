"""Chapter 7 on GPUs: psend/precv programs run where there are four.
(What the combine thresholds do is compiled for eight H100s on any machine:
tests/unit/workbook/ch07_multi_gpu/test_combine_on_gpu.py.)"""

import jax
import numpy as np
import pytest

from helpers.multi_device import meshes
from helpers.workbook.ch07_multi_gpu import exercises, pipeline

pytestmark = pytest.mark.gpu


@pytest.mark.skipif(len(jax.devices()) < 4, reason="needs four GPUs to run "
                    "psend/precv; one GPU checks only the lowered program")
def test_the_psend_pipeline_runs_and_matches_one_device():
    mesh = meshes.mesh((4,), ("stage",))
    w, x = pipeline.init(jax.random.key(0), 4, 5, 4, 8)
    run = pipeline.pipeline(mesh, repeats=2, layers=2,
                            edges=pipeline.psend_edges(4))
    np.testing.assert_allclose(run(w, x)[-1],
                               pipeline.reference(w, x, 2, 2), rtol=1e-4)
    assert exercises.untangle_ring.check(exercises.pass_along_solution).passed
