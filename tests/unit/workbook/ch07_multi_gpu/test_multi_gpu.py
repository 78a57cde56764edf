"""Chapter 7 on simulated devices: meshes, collectives, shardings, the
all-reduce combiner and the circular pipeline (conftest asks for 8 CPU
devices before JAX starts)."""

import jax
import numpy as np
import pytest

from helpers.multi_device import meshes
from helpers.workbook.ch07_multi_gpu import collectives, pipeline
from helpers.xla import hlo


@pytest.fixture(scope="module")
def grid():
    return meshes.mesh((2, 4), ("data", "model"))


def test_meshes_use_simulated_cpu_devices_here(grid):
    assert grid.devices.shape == (2, 4)
    assert meshes.platform(grid) == "8 simulated CPU devices"
    assert len(meshes.devices(3)) == 3
    meshes.simulate(4)  # fewer than the backend has: harmless


@pytest.mark.parametrize("call, error, message", [
    (lambda: meshes.devices(64), RuntimeError, "simulate\\(64\\)"),
    (lambda: meshes.simulate(64), RuntimeError, "Restart the kernel"),
    (lambda: meshes.simulate(0), ValueError, "positive int"),
    (lambda: meshes.mesh((2, 2), ("a",)), ValueError, "one name per axis"),
])
def test_bad_requests_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.slow
@pytest.mark.parametrize("n", [4, 8])
def test_each_collective_compiles_to_its_op_and_matches_numpy(n):
    table = collectives.collective_table(meshes.mesh((n,), ("d",)), "d")
    assert table["matches NumPy"].all()
    assert list(table["hlo"]) == ["all-reduce", "all-gather",
                                  "reduce-scatter", "collective-permute",
                                  "all-to-all"]
    shift = table.set_index("jax").loc["ppermute (ring shift)"]
    assert shift["groups or pairs"] == tuple(collectives.ring(n))


def test_who_holds_what_reads_each_result_back_as_its_chunks():
    held = collectives.who_holds_what(meshes.mesh((3,), ("d",)), "d")
    assert held["before"][1] == [(1, "B0"), (1, "B1"), (1, "B2")]
    assert held["psum → all-reduce"][2] == [(None, "Σ0"), (None, "Σ1"),
                                            (None, "Σ2")]
    assert len(held["all_gather → all-gather"][0]) == 9
    assert held["psum_scatter → reduce-scatter"] == [
        [(None, "Σ0")], [(None, "Σ1")], [(None, "Σ2")]]
    assert held["ppermute (ring shift) → collective-permute"][0] == \
        held["before"][2]
    assert held["all_to_all → all-to-all"][1] == [(0, "A1"), (1, "B1"),
                                                  (2, "C1")]


def test_who_holds_what_refuses_an_axis_it_cannot_name():
    with pytest.raises(ValueError, match="2 to 5 devices, not 8"):
        collectives.who_holds_what(meshes.mesh((8,), ("d",)), "d")


def test_plan_counts_are_predicted():
    predicted = collectives.predicted_collectives(2)
    assert {plan: round(count.value) for plan, (_, count)
            in predicted.items()} == {"data parallel": 4,
                                      "tensor parallel (Megatron)": 3,
                                      "fully sharded (FSDP)": 4}
    # each count is read from the column of `plan_table` it predicts
    assert {plan: column for plan, (column, _) in predicted.items()} == {
        "data parallel": "all-reduce",
        "tensor parallel (Megatron)": "all-reduce",
        "fully sharded (FSDP)": "all-gather"}


def test_groups_follow_the_mesh_axis(grid):
    assert collectives.groups_of(grid, "model") == ((0, 1, 2, 3),
                                                    (4, 5, 6, 7))
    assert collectives.groups_of(grid, "data") == ((0, 4), (1, 5), (2, 6),
                                                   (3, 7))


@pytest.mark.slow
def test_each_plan_compiles_to_its_collectives_and_right_gradients(grid):
    params = collectives.init_mlp(2, 32, 64, jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (16, 32))
    table = collectives.plan_table(grid, params, x)
    assert table["gradients match one device"].all()
    dp, fsdp = table.loc["data parallel"], table.loc["fully sharded (FSDP)"]
    assert dp["all-reduce"] == 1 and dp.get("all-gather", 0) == 0
    assert fsdp["all-gather"] == 4  # every weight gathered where it is used
    assert table.loc["tensor parallel (Megatron)", "all-reduce"] >= 1


@pytest.mark.slow
def test_the_cpu_combiner_merges_every_gradient_all_reduce(grid):
    # 2 weights per block: 12 gradients, one all-reduce on the CPU backend,
    # which does not read the GPU's combine threshold.
    assert collectives.combined_all_reduces(grid, 6) == [12]
    assert collectives.combined_all_reduces(
        grid, 6, {"xla_gpu_all_reduce_combine_threshold_bytes": 0}) == [12]


def test_psum_sweep_has_the_columns_the_fit_reads():
    table = collectives.psum_sweep((2, 4), (1024, 65536),
                                   lambda p: meshes.mesh((p,), ("d",)),
                                   repeat=3)
    assert list(table.columns) == ["collective", "devices", "bytes",
                                   "seconds"]
    assert len(table) == 4 and (table["seconds"] > 0).all()


@pytest.mark.slow
def test_circular_pipeline_matches_one_device():
    mesh = meshes.mesh((4,), ("stage",))
    w, x = pipeline.init(jax.random.key(0), 4, 5, 4, 8)
    run = pipeline.pipeline(mesh, repeats=2, layers=2)
    got = run(w, x)
    assert got.shape == (4, 5, 4, 8)
    np.testing.assert_allclose(got[-1], pipeline.reference(w, x, 2, 2),
                               rtol=1e-5, atol=1e-6)
    pairs = [c.pairs for c in hlo.collectives(run, w, x)]
    assert pairs == [((0, 1), (1, 2), (2, 3)), ((3, 0),)]


@pytest.mark.slow
def test_pipeline_refuses_too_few_microbatches_and_wrong_axes():
    mesh = meshes.mesh((4,), ("stage",))
    w, x = pipeline.init(jax.random.key(0), 4, 3, 4, 8)
    with pytest.raises(ValueError, match="at least as many microbatches"):
        pipeline.pipeline(mesh, repeats=2, layers=1)(w, x)
    with pytest.raises(ValueError, match="axis 'stage'"):
        pipeline.pipeline(meshes.mesh((4,), ("d",)), repeats=1, layers=1)


def test_the_psend_pipeline_breaks_no_deadlock_rule():
    from helpers.multi_device import sendrecv
    mesh = meshes.mesh((4,), ("stage",))
    w, x = pipeline.init(jax.random.key(0), 4, 5, 4, 8)
    run = pipeline.pipeline(mesh, repeats=2, layers=1,
                            edges=pipeline.psend_edges(4))
    lowered = sendrecv.lowered_for_gpu(run, w, x)
    assert sorted(t.kind for t in sendrecv.transfers(lowered)) == [
        "permute", "recv", "send"]
    assert sendrecv.deadlocks(lowered) == []


def test_the_single_device_reference_runs_on_the_meshs_kind_of_device():
    m = meshes.mesh((2,), ("d",))
    x = np.ones((4, 4), np.float32)
    placed = meshes.on_one_device(m, {"x": x})
    assert placed["x"].devices() == {m.devices.flat[0]}
