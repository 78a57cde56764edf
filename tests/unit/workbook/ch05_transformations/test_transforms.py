"""Chapter 5's experiments on small sizes, and the verdict rules."""

import copy

import jax
import numpy as np
import pytest

from helpers.measuring import recorded
from helpers.multi_device import meshes
from helpers.workbook.ch05_transformations import claims, steps, transforms
from helpers.xla import crosscompile


def test_retraces_happen_exactly_on_shape_dtype_and_static_changes():
    table = transforms.retrace_table()
    assert table["traced again"].tolist() == claims.EXPECTED_RETRACES


def test_donation_aliases_and_frees_the_old_parameters():
    out = transforms.donation(64)
    assert out["kept"]["aliased outputs"] == 0
    assert out["donated"]["aliased outputs"] == 2
    assert out["donated"]["old params deleted"]
    assert not out["kept"]["old params deleted"]


@pytest.mark.slow
def test_vmap_keeps_the_kernel_count_while_loops_grow_it():
    table = transforms.vmap_vs_loop(16, (2, 8))
    kernels = table.pivot(index="batch", columns="version",
                          values="kernels")
    assert kernels.loc[8, "vmap"] <= kernels.loc[2, "vmap"]
    assert kernels.loc[8, "Python loop of jitted calls"] == \
        4 * kernels.loc[2, "Python loop of jitted calls"]
    assert kernels.loc[8, "Python loop inside jit"] > \
        kernels.loc[2, "Python loop inside jit"]


@pytest.mark.slow
def test_unrolled_compile_time_grows_with_length_and_results_agree():
    w = jax.random.normal(jax.random.key(0), (8, 8)) / 3
    xs = jax.random.normal(jax.random.key(1), (5, 8))
    h = jax.numpy.zeros(8)
    np.testing.assert_allclose(transforms.rnn_scan(w, h, xs),
                               transforms.rnn_unrolled(w, h, xs), rtol=1e-5)
    table = transforms.scan_vs_unrolled(8, (4, 64)).set_index(
        ["length", "version"])
    assert table.loc[(64, "unrolled"), "compile ms"] > \
        table.loc[(4, "unrolled"), "compile ms"]
    # one matrix-vector product a step, written out T times or looped once
    assert table["products"].tolist() == [1, 4, 1, 64]


@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_xla_gpu_products_are_reductions_counted_by_their_source():
    # On an H100 each product is a reduction fusion: no dot, no GEMM call.
    counts = crosscompile.run(transforms.scan_products_for_gpu, 512, (4, 16))
    assert counts == {"scan 4": 1, "unrolled 4": 4, "scan 16": 1,
                      "unrolled 16": 16}


@pytest.mark.slow
def test_remat_survives_unless_a_pass_after_the_barriers_merges_it():
    # Which happens depends on the jaxlib (0.10.2 merges, 0.12 keeps);
    # the mechanism the chapter states holds on every version.
    table = transforms.remat_table(32, 64, 16)
    passes = transforms.remat_passes(32, 64, 16)
    products = passes["products"]
    removed = passes["barriers removed at"]
    assert products[0]["count"] == table.loc[False, "dots"] + 6  # lowered
    assert products[-1]["count"] == table.loc[True, "dots"]
    merged = table.loc[True, "dots"] == table.loc[False, "dots"]
    drops = [p["step"] for p in products[1:]
             if p["count"] < products[0]["count"]]
    assert bool(drops) == merged
    if merged:  # the copies merge only once the barriers are gone
        assert removed is not None and drops[0] > removed["step"]


@pytest.mark.slow
def test_the_verbatim_pmap_body_overshoots_by_the_device_count():
    grid = meshes.mesh((2, 4), ("dp", "mp"))
    table = steps.parallel_versions(grid, width=16, batch=16)
    assert table.iloc[0]["update / one device's"] == pytest.approx(8.0,
                                                                  rel=1e-3)
    assert table.iloc[1:]["matches one device"].all()


@pytest.mark.slow
def test_has_aux_forward_counts():
    table = steps.forward_counts(16, 8)
    dots = table["dots"].tolist()
    assert dots[0] < dots[1] and dots[2] == dots[0]


def test_bf16_error_is_about_a_thousandth():
    table = steps.precision_table((64,)).set_index("precision")
    # bf16 rounds the inputs, whether cast inside the call or before it
    assert table.loc[steps.BF16_INPUTS, "rel error"] > 1e-4
    assert table.loc[steps.BF16_CAST, "rel error"] > 1e-4
    assert table.loc[steps.HIGHEST, "rel error"] < 1e-5
    # the algorithms XLA:CPU runs are timed too; the TF32 ones it refuses
    assert "algorithm BF16_BF16_F32_X6" in table.index
    assert "algorithm TF32_TF32_F32" not in table.index


def test_api_status_names_a_replacement_for_each_old_api():
    table = steps.api_status()
    assert table["use instead"].str.len().gt(0).all()
    assert not table.iloc[:, 1].isna().any()


@pytest.fixture(scope="module")
def measured():
    return claims.measure({"width": 16, "batches": (2, 4),
                           "lengths": (2, 8), "remat": (16, 32, 8),
                           "forward": (16, 8), "matmuls": (32,),
                           "mfu": ((16, 8),)})


@pytest.mark.slow
def test_findings_decide_each_claim_from_the_numbers(measured):
    found = claims.findings(measured)
    assert len(found) == 7
    assert found[claims.JIT].verdict == "holds"
    assert "True" not in found[claims.JIT].summary  # words, not a repr
    folded = copy.deepcopy(measured)  # remat merged away (jaxlib 0.10)
    folded["remat"]["dots"] = [35, 35]
    remat = claims.findings(folded)[claims.REMAT]
    assert remat.verdict == "does not hold"
    assert "merged the recomputation away" in remat.summary  # and says why
    faster_bf16 = copy.deepcopy(measured)
    # On this CPU the verdict reads the wall clock, the profiler's span
    # being slowed by the profiler itself.
    assert claims.bf16_clock(measured) == "ms"
    ms = faster_bf16["precision"]["ms"]
    for i, kind in enumerate(faster_bf16["precision"]["precision"]):
        if kind == claims.BFLOAT16:
            ms[i] = min(ms) / 4
    assert claims.findings(faster_bf16)[claims.BF16].verdict == "holds"
    slower_bf16 = copy.deepcopy(measured)
    ms = slower_bf16["precision"]["ms"]
    for i, kind in enumerate(slower_bf16["precision"]["precision"]):
        if kind == claims.BFLOAT16:
            ms[i] = max(ms) * 2
    bf16 = claims.findings(slower_bf16)[claims.BF16]
    assert bf16.verdict == "does not hold"


def test_the_reference_recording_judges_bf16_against_the_default():
    """bf16 is judged against the default precision (TF32 tensor cores),
    not full float32, by device time on the H100."""
    data = recorded.load("05_transformations/claims")["data"]
    text, verdict = claims.findings(data)[claims.BF16]
    assert text.startswith("1.56 times as fast as default float32 by "
                           "device time")
    assert "relative error 0.29%" in text
    assert verdict == "holds"
    # the recording's bf16 row is the casts inside the call, by the name
    # it carries there
    assert claims.bf16_numbers(data)["kind"] == claims.BFLOAT16_CAST
    assert not claims.measured_on_cpu(data)


def test_an_unrolled_loop_that_runs_faster_is_said_to():
    data = recorded.load("05_transformations/claims")["data"]
    text, verdict = claims.findings(data)[claims.SCAN]
    assert "runs 3.74 times as fast by the wall clock" in text
    assert verdict == "holds in part"
    slow = copy.deepcopy(data)
    scan = slow["scan"]
    for i, version in enumerate(scan["version"]):
        if version == "unrolled":
            scan["run ms"][i] *= 10
    text, verdict = claims.findings(slow)[claims.SCAN]
    assert verdict == "holds" and "times as long by the wall clock" in text


@pytest.mark.slow
def test_claims_table_names_where_it_was_measured(measured):
    table = claims.claims_table(measured)
    assert list(table.columns) == ["claim", "measured here", "verdict"]
    assert table.index[0] == "jit" and table.index.name == "transformation"
    assert set(table["verdict"]) <= {"holds", "holds in part",
                                     "does not hold"}
    there = claims.claims_table(measured, "on the H100")
    assert list(there.columns) == ["claim", "measured on the H100",
                                   "verdict"]


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_xla_gpu_keeps_the_recomputation_that_xla_cpu_drops():
    rows = {r["remat"]: r for r in crosscompile.run(
        transforms.remat_for_gpu, 1024, 4096, 4096)}
    # one product per block computed again, fewer bytes kept per example
    assert rows[True]["dots"] - rows[False]["dots"] == 6
    assert rows[True]["temp MB"] < rows[False]["temp MB"]
    assert rows[True]["bytes per example"] < rows[False][
        "bytes per example"]


def test_the_sizes_read_as_a_line():
    line = claims.sizes_in_words(claims.CPU_SIZES)
    assert line.startswith("width 64; vmap batches 4, 16 and 64; ")
    assert "remat width 256, hidden 1024, batch 256" in line
    assert "{" not in line and "(" not in line
