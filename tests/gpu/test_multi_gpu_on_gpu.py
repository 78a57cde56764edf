"""Chapter 7 on a GPU: compile-only GPUs show what the combine thresholds
do, and psend/precv programs run where there are four GPUs."""

import jax
import numpy as np
import pytest

from helpers import meshes
from helpers.workbook import collectives, pipeline, scaling

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def combine():
    return collectives.combine_on_gpu(devices=8, layers=6)


def test_compile_only_gpus_form_a_mesh_of_eight():
    mesh = collectives.compile_only_gpus(8)
    assert mesh.devices.shape == (4, 2)


def test_a_zero_threshold_keeps_every_gradient_all_reduce_apart(combine):
    rows = {(r["plan"], r["threshold_bytes"]): r for r in combine["rows"]}
    apart = rows["data parallel", 0].get("all-reduce", 0)
    default = rows["data parallel", None].get("all-reduce", 0)
    # 6 blocks x 2 weights: one all-reduce each when nothing is combined.
    assert apart == 12
    assert default <= apart


def test_fsdp_gathers_each_weight_when_nothing_is_combined(combine):
    rows = {(r["plan"], r["threshold_bytes"]): r for r in combine["rows"]}
    assert rows["fully sharded (FSDP)", 0].get("all-gather", 0) >= 12


@pytest.mark.skipif(len(jax.devices()) < 4, reason="needs four GPUs to run "
                    "psend/precv; one GPU checks only the lowered program")
def test_the_psend_pipeline_runs_and_matches_one_device():
    mesh = meshes.mesh((4,), ("stage",))
    w, x = pipeline.init(jax.random.key(0), 4, 5, 4, 8)
    run = pipeline.pipeline(mesh, repeats=2, layers=2,
                            edges=pipeline.psend_edges(4))
    np.testing.assert_allclose(run(w, x)[-1],
                               pipeline.reference(w, x, 2, 2), rtol=1e-4)
    assert scaling.UNTANGLE_RING.check(scaling.pass_along_solution).passed
