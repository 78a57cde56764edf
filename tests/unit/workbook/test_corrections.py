"""Statements the book once got wrong, each checked against what shows
them wrong: XLA's behaviour, the recordings, the installed jaxlib. Each
test fails on the old statement."""

from __future__ import annotations


import pytest

from helpers.measuring import device_time
from helpers.profiler import trace
from helpers.workbook.ch04_profiling import attention
from helpers.xla import flag_registry

from book_paths import CHAPTERS


def prose(chapter: str) -> str:
    """A chapter's text with its line breaks and runs of spaces folded."""
    return " ".join((CHAPTERS / f"{chapter}.md").read_text().split())


# --- 1. chapter 3: the profiling flag, the right way round --------------

PROFILING = "--xla_enable_command_buffers_during_profiling"


def test_the_profiling_flag_is_read_the_right_way_round():
    """False, the default, falls back to one operation at a time under a
    profiler; true keeps the graphs (XLA's command_buffer_thunk.cc)."""
    text = prose("03_launches")
    assert "has a flag to run its graphs op by op" not in text
    assert ("While a profiler session is active and the flag is false, "
            "XLA's command-buffer thunk runs each graph's operations one "
            "by one instead; at true the graphs stay.") in text
    assert "{cite}`xla_command_buffer_thunk`" in text
    description = flag_registry.FLAGS[PROFILING][0]
    assert description.startswith("keep CUDA graphs while a profiler runs")
    assert "when false" in description


def test_the_h100_profile_kept_its_graphs():
    """What 3.5 says happened: every kernel event of chapter 4's kept H100
    profile carries the CUDA graph it ran in."""
    folder = attention.fixture_folder()
    if not folder.exists():
        pytest.skip("chapter 4's H100 profile is not in recorded/")
    events = device_time.kernel_events(trace.load(folder))
    assert len(events) > 0
    assert events["args"].map(lambda a: device_time.GRAPH_ARG in a).all()


# --- 2. chapter 2: the transposes do not measure a @ b again ------------

def test_the_transposes_row_is_not_a_at_b_again():
    """Same fusion kind, different kernel: batch-minor + transposes ran
    more than a tenth slower than a @ b at some K on the H100."""
    from helpers.measuring import results
    from helpers.workbook.ch02_fusion import fixes
    from helpers.workbook.ch02_fusion import verdicts as fusion_verdicts

    assert "measures `a @ b` again" not in prose("02_fusion")
    assert "The same kind is not the same kernel." in prose("02_fusion")
    recording = results.reference("02_fusion/fixes")
    if not recording.available:
        pytest.skip("chapter 2's H100 recording is not in recorded/")
    table = fusion_verdicts.table(recording.data)
    rows = fixes.against_default(table, "batch-minor + transposes").loc[
        10:50]
    assert rows["same kind"].all()
    assert rows["ratio"].max() > 1.1


# --- 3. chapter 1: the first calls drift -------------------------------

def test_the_first_calls_are_not_called_the_steady_state():
    """Calls 2-10 against 21-30 of the H100's recording: a drift of more
    than 5%, growing with the call number."""
    from helpers.measuring import results
    from helpers.workbook.ch01_measuring import first_calls, verdicts

    assert not hasattr(verdicts, "warmup")  # wrote "already the steady state"
    text = prose("01_measuring")
    assert "already the steady state" not in text
    assert "The program had reached its steady state; the device had not." \
        in text
    # linked to chapter 4's blocked A/A test by its number, not "far more
    # often"
    assert "04_profiling.ipynb::aa_blocked" in text
    assert "far more often when its runs come in two blocks" not in text
    recording = results.reference("01_measuring/summary")
    if not recording.available:
        pytest.skip("chapter 1's H100 recording is not in recorded/")
    drift = first_calls.drift(recording.data["first_30_calls_ms"])
    assert drift["change"] > 0.05 and drift["correlation"] > 0.5


# --- 4. chapter 1: each ceiling beside the datasheet's peak ------------

def test_the_ceilings_stand_beside_the_datasheet():
    """'At its ceiling' is true by construction against a ceiling measured
    a moment before; the datasheet says how far that is from the part's
    peak: copy 89.7% of 3.35 TB/s, TF32 80% of 494.7 TFLOP/s."""
    from helpers.measuring import datasheet, results
    from helpers.workbook.ch01_measuring import recording

    text = prose("01_measuring")
    assert "{cite}`nvidia_h100_datasheet`" in text
    assert "reached {glue:text}`copy_of_datasheet` of the first" in text
    h100 = datasheet.peaks("NVIDIA H100 80GB HBM3")
    assert h100.memory_bytes_per_s == 3.35e12
    assert h100.tf32_flops_per_s == 494.7e12
    assert datasheet.peaks("NVIDIA H200").memory_bytes_per_s == 4.8e12
    summary = results.reference("01_measuring/summary")
    if not summary.available:
        pytest.skip("chapter 1's H100 recording is not in recorded/")
    copy = recording.copy_rates(summary.data).device * 1e9
    tf32 = recording.matmul_rates(summary.data).default * 1e12
    assert copy / h100.memory_bytes_per_s == pytest.approx(0.897, abs=0.001)
    assert tf32 / h100.tf32_flops_per_s == pytest.approx(0.80, abs=0.005)
    # the H200's copy beside its own datasheet: 88.5% of 4.8 TB/s (its
    # recording of 2026-11-28; 89.0% in that of 2026-11-26)
    assert "of which the copy reached " \
        "{glue:text}`h200_copy_of_datasheet`" in text
    from helpers.workbook.ch01_measuring import across_gpus
    h200, = [r for r in results.other_gpus("01_measuring/summary")
             if r.short_name == "H200"]
    pair = across_gpus.comparison_numbers(summary.data, h200.data)
    assert pair["other_copy_gbps"] * 1e9 / 4.8e12 == pytest.approx(
        0.885, abs=0.001)


# --- 5. chapter 5: bf16's speed-up, casts included or not ---------------

def test_bf16_is_timed_with_its_inputs_made_beforehand():
    """The recorded 1.56x timed two casts to bf16 and a rounding of the
    product inside the call: the sentence says so, and the measurement now
    also times bf16 inputs made before the call, accumulated in float32,
    and XLA's named algorithms."""
    import jax
    import jax.numpy as jnp

    from helpers.measuring import results
    from helpers.workbook.ch05_transformations import claims, steps

    assert steps.BF16_INPUTS in steps.PRECISIONS
    assert "algorithm TF32_TF32_F32_X3" in steps.PRECISIONS
    a = jnp.ones((8, 8))
    inputs = steps._inputs(steps.BF16_INPUTS, a, a)
    assert all(x.dtype == jnp.bfloat16 for x in inputs)
    jaxpr = jax.make_jaxpr(lambda a, b: steps.matmul_at(
        steps.BF16_INPUTS, a, b))(*inputs)
    # no cast in the timed call: one product, returned in float32
    assert [e.primitive.name for e in jaxpr.eqns] == ["dot_general"]
    assert jaxpr.out_avals[0].dtype == jnp.float32
    recording = results.reference("05_transformations/claims")
    if not recording.available:
        pytest.skip("chapter 5's H100 recording is not in recorded/")
    # the page names the recorded bf16 row as the words of its kind
    kind = claims.bf16_numbers(recording.data)["kind"]
    if kind == claims.BFLOAT16_CAST:
        assert "casts inside the timed call" in claims.BF16_WORDS[kind]
    page = prose("05_transformations")
    assert "{glue:text}`bf16_kind` ran" in page


# --- 6. chapter 4: XProf's tensor-core column and its peak -------------

def test_xprofs_tensor_core_column_and_peak_are_explained():
    """The column is a match on kernel names (Triton GEMMs read no), and
    the roofline's peak is 989.4 TFLOP/s at 1.98 GHz, not 1.83."""
    import pandas as pd

    from helpers.measuring import results

    text = prose("04_profiling")
    assert "{cite}`xprof_kernel_stats`" in text
    assert "is the H100's dense bf16 rate at its highest clock, 1.98 GHz" \
        in text
    recording = results.reference("04_profiling/gpu")
    if not recording.available:
        pytest.skip("chapter 4's H100 recording is not in recorded/")
    kernels = pd.DataFrame(recording.data["xprof"]["kernel_stats"])
    uses = kernels.set_index("kernel_name")["is_kernel_using_tensor_core"]
    assert uses[uses.index.str.contains("xmma")].all()
    assert not uses[uses.index.str.startswith("gemm_fusion")].any()
    roofline = pd.DataFrame(recording.data["xprof"]["roofline_model"])
    peak = roofline["optimal_flop_rate_GFLOP_s"].max() / 1e3
    assert peak == pytest.approx(989.4 * 1.98 / 1.83, rel=1e-3)


# --- 7. chapter 6: a setting is decided only where digests can tell ----

def test_a_setting_with_an_unknown_module_is_not_decided():
    """On the H100's recording the small-kernel loop's default compiled
    two different modules: its two settings read "same HLO: unknown" and
    no longer count as decided."""
    from helpers.measuring import results
    from helpers.workbook.ch06_xla_flags import flag_runs, verdicts

    recording = results.reference("06_xla_flags/effects")
    if not recording.available:
        pytest.skip("chapter 6's H100 recording is not in recorded/")
    data = recording.data
    for program, flags in flag_runs.GPU_SETTINGS.items():
        for flag in filter(None, flags):
            if verdicts.decided(data, program, flag):
                assert verdicts.digests_agree(data, program) is True
    assert not verdicts.decided(data, "small_kernels",
                                "--xla_gpu_enable_command_buffer=")


def test_each_programs_processes_share_one_autotune_cache(monkeypatch):
    """The fix: the default's two processes and every setting load one
    set of autotuning choices, so equal programs get equal digests."""
    from helpers.workbook.ch06_xla_flags import flag_runs

    seen = []
    monkeypatch.setattr(flag_runs, "in_child", lambda name, flags: (
        seen.append((name, flags)) or {"program": name}))
    monkeypatch.setattr(flag_runs.fresh_process, "call",
                        lambda *args, **kwargs: {})
    flag_runs.measure_on_gpu({"small_kernels": ["", "--xla_x=1"]})
    folders = {flags.split(flag_runs.PIN)[1] for _, flags in seen}
    assert len(seen) == 3 and len(folders) == 1
    assert seen[2][1].startswith("--xla_x=1 " + flag_runs.PIN)
    assert "`--xla_gpu_per_fusion_autotune_cache_dir`" in prose(
        "06_xla_flags")


def test_the_graphs_off_setting_is_tried_on_a_loop_that_forms_graphs():
    """`small_kernels` had 3 operations a step, under the 5 a CUDA graph
    needs, so turning graphs off changed nothing it could show."""
    from helpers.workbook.ch06_xla_flags import flag_runs
    from helpers.xla import crosscompile

    if crosscompile.why_unavailable() is not None:
        pytest.skip(f"needs XLA:GPU's compiler: "
                    f"{crosscompile.why_unavailable()}")
    body = crosscompile.run(flag_runs.loop_body_for_gpu, "small_kernels")
    assert body["body is a CUDA graph"]
    assert body["body operations"] >= body["fewest in a graph"]


def test_the_h100s_loop_is_said_to_be_below_a_graphs_size():
    """The H100 ran the chapter's first loop, 3 kernels a step, fewer than
    the 5 a graph needs: the page says that, not that jaxlib "most likely"
    compiled the loop otherwise."""
    from helpers.measuring import results
    from helpers.workbook.ch06_xla_flags import flag_runs

    text = prose("06_xla_flags")
    assert "most likely left its kernels outside any graph" not in text
    assert "because the profiler cannot see inside CUDA graphs" not in text
    assert "fewer than the {glue:text}`graphs_fewest` operations XLA:GPU " \
        "puts into a graph" in text
    effects = results.reference("06_xla_flags/effects")
    if not effects.available:
        pytest.skip("chapter 6's H100 recording is not in recorded/")
    default, = [r for r in effects.data["rows"]
                if r["program"] == "small_kernels" and r["flags"] == "(none)"]
    assert int(default["kernels"]) // flag_runs.LOOP_STEPS == 3


# --- 8. field guide: float64 tensor cores; what the scatter hints do ---

def test_the_field_guide_gets_float64_and_the_scatter_hints_right():
    """Hopper and Ampere data-centre GPUs have float64 tensor cores; the
    scatter section says what each declaration changes in XLA's emitter,
    and the hint reaches the compiled module for an H100."""
    import jax
    import jax.numpy as jnp

    from helpers.measuring import datasheet
    from helpers.xla import crosscompile, gpu_export

    text = prose("10_field_guide")
    assert "has no tensor cores" not in text
    assert "have float64 tensor cores" in text
    assert "{cite}`xla_scatter_emitter`" in text
    assert "each update is a plain store, no atomic at all" in text
    assert datasheet.peaks("NVIDIA H100 80GB HBM3"
                           ).fp64_tensor_flops_per_s == 66.9e12
    if crosscompile.why_unavailable() is not None:
        return
    spec = (jax.ShapeDtypeStruct((2**16,), jnp.float32),
            jax.ShapeDtypeStruct((2**16,), jnp.int32))
    hlo = gpu_export.compiled_text(lambda x, i: jax.ops.segment_sum(
        x, i, 64, indices_are_sorted=True), *spec)
    scatter = next(line for line in hlo.splitlines() if " scatter(" in line)
    assert "indices_are_sorted=true" in scatter


# --- 9. chapter 3: the vmap row ran Mosaic GPU; one deprecation version -

def test_chapter_3_names_the_backend_the_h100_ran():
    """The one-call profile's kernel is Mosaic GPU's; Triton's deprecation
    is given once (0.11.0, the Pallas changelog), and the fastest
    one-chain kernel recorded is Triton's."""
    from pathlib import Path as _Path

    from helpers.measuring import recorded, results
    from helpers.pallas import backends

    text = prose("03_launches")
    assert "run by a block of Triton's default four warps" not in text
    assert "`kernel_mosaic_gpu_kernel`" in text
    assert backends.TRITON_DEPRECATED_IN == "0.11.0"
    for source in (_Path(backends.__file__).parent).rglob("*.py"):
        for line in source.read_text().splitlines():
            assert not ("deprecated" in line and "0.11.2" in line), line
    folder = recorded.profile_folder(
        "03_launches/profile-fused-scan-one-kernel")
    goals = results.reference("03_launches/goals")
    if not folder.exists() or not goals.available:
        pytest.skip("chapter 3's H100 recording is not in recorded/")
    names = set(device_time.kernel_events(trace.load(folder))["name"])
    assert "kernel_mosaic_gpu_kernel" in names
    device = goals.data["device_s"]
    assert device["gpu fused_scan, triton"] < device["gpu fused_scan"]


# --- 10, 11. chapter 2: the H200 and the Hopper cliff --------------------

def test_xlas_own_emitter_is_flat_from_k_35_and_the_log_is_read():
    """With the autotuner off, K = 35-64 took about 0.35 ms whatever the
    bytes: bound per row. The autotuning log that says why the autotuner
    kept it at some K is read by `autotune_logs`."""
    import pandas as pd

    from helpers.measuring import results
    from helpers.workbook.ch02_fusion import on_gpu
    from helpers.xla import autotune_logs

    assert "--xla_gpu_dump_autotune_logs_to" in prose("02_fusion")
    assert on_gpu.LOGGED_KS == (35, 40, 45)
    log = ('logs { fusion_name: "input_reduce_fusion" '
           'selected_backend: "native" results { run_time { nanos: 349000 }'
           ' other { name: "native" } } results { failure { kind: '
           'DISQUALIFIED } triton { block_m: 4 } } }')
    rows = autotune_logs.candidates(log)
    assert rows == [
        {"fusion": "input_reduce_fusion", "kind": "native", "ms": 0.349,
         "failed": False, "kept": "native"},
        {"fusion": "input_reduce_fusion", "kind": "triton", "ms": None,
         "failed": True, "kept": "native"}]
    recording = results.reference("02_fusion/autotuner")
    if not recording.available:
        pytest.skip("chapter 2's H100 recording is not in recorded/")
    rows = pd.DataFrame(recording.data["rows"])
    native = rows[(rows["dtype"] == "float32") & (rows["K"] >= 35)
                  & (rows["setting"] == "autotuner off")]["device ms"]
    assert native.max() / native.min() < 1.15


def test_the_h200_paragraph_says_the_kernels_are_bound_on_the_chip():
    """batch-minor ran 2.9-3.0 TB/s on the H200 against 2.6-2.8 on the
    H100 where it was slow, and XLA's kInput at K = 35 0.344 against
    0.349 ms: the same absolute rate on memory 1.42 times as fast."""
    from helpers.measuring import results
    from helpers.workbook.ch02_fusion import across_gpus

    assert ("what holds them back is on the chip, which the two GPUs "
            "share") in prose("02_fusion")
    h100 = results.reference("02_fusion/fixes")
    h200 = results.reference("02_fusion/fixes", "nvidia-h200")
    if not (h100.available and h200.available):
        pytest.skip("chapter 2's H100 and H200 recordings are not here")
    held = across_gpus.held_back(h100.data, h200.data)
    assert held.loc["float32"].index.min() == 20
    assert held.loc["float64"].index.min() == 35
    assert 2.8 < held["other TB/s"].min() and held["other TB/s"].max() < 3.1
    assert 2.6 < held["reference TB/s"].min()
