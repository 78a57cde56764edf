"""Chapter 5's worked predictions, and the sentences that hold them
against a measurement."""

import pytest

from helpers.workbook.ch05_transformations import claims, predictions


def _scan_table(unrolled_ms, scan_ms=(50.0, 50.0, 60.0),
                run_ms=((1.0, 0.5), (2.0, 0.6), (4.0, 0.8))):
    rows = {"length": [], "version": [], "compile ms": [], "run ms": []}
    for length, unrolled, scan, (scan_run, unrolled_run) in zip(
            (8, 32, 128), unrolled_ms, scan_ms, run_ms):
        for version, c, r in (("scan", scan, scan_run),
                              ("unrolled", unrolled, unrolled_run)):
            rows["length"].append(length)
            rows["version"].append(version)
            rows["compile ms"].append(c)
            rows["run ms"].append(r)
    return rows


def test_donation_should_free_the_old_parameters():
    line = predictions.donation_saving(4096, 2)
    assert line.value == 2 * 4096 ** 2 * 4
    assert line.value / 1e6 == pytest.approx(134.217728)


def test_unrolled_compile_extrapolates_from_the_second_longest_length():
    table = _scan_table(unrolled_ms=(100.0, 370.0, 1200.0))
    per_step, line = predictions.unrolled_compile(table)
    # scan at 128 (60 ms) + 128 x (370 - 50) / 32 ms = 1340 ms
    assert per_step.value == pytest.approx(0.010)
    assert line.value == pytest.approx(1.34)


def test_one_length_cannot_be_extrapolated():
    table = {"length": [8, 8], "version": ["scan", "unrolled"],
             "compile ms": [1.0, 2.0], "run ms": [1.0, 1.0]}
    with pytest.raises(ValueError, match="two lengths"):
        predictions.unrolled_compile(table)


def test_scan_run_range_comes_from_chapter_3s_xla_loops_only():
    chapter_3 = [
        {"variant": "while, static bound", "dtype": "float32",
         "us_per_step": 6.0},
        {"variant": "scan, noise outside", "dtype": "float32",
         "us_per_step": 12.0},
        {"variant": "scan, noise outside", "dtype": "float64",
         "us_per_step": 50.0},
        {"variant": "fused_scan (one kernel)", "dtype": "float32",
         "us_per_step": 0.2}]
    steps = predictions.loop_steps(chapter_3)
    assert sorted(steps * 1e6) == pytest.approx([6.0, 12.0])
    low, high = predictions.scan_run_range(128, steps, 150e-6)
    assert low.value == pytest.approx(150e-6 + 128 * 6e-6)
    assert high.value == pytest.approx(150e-6 + 128 * 12e-6)


def test_remat_predictions_match_the_products_xla_gpu_compiles():
    plain, remat = predictions.remat_products(6)
    assert (plain.value, remat.value) == (35, 41)
    memory = predictions.remat_bytes(1024, 4096, 6)
    assert memory[0].value == 6 * (1024 + 2 * 4096) * 4
    assert memory[1].value == (6 * 1024 + 2 * 4096) * 4


def test_a_recording_says_the_sizes_it_ran_at():
    from helpers.measuring import recorded
    reference = recorded.load("05_transformations/claims")["data"]
    assert max(claims.sizes_of(reference)["lengths"]) == 256
    assert claims.sizes_of({"sizes": {"width": 3}}) == {"width": 3}


def test_host_part_is_chapter_1s_first_call_less_its_kernels():
    from helpers.workbook.ch01_measuring import recording
    chapter_1 = {"profile": [{"wall_us": 200.0, "kernel_us": 45.0},
                             {"wall_us": 90.0, "kernel_us": 45.0}]}
    assert recording.host_part_us(chapter_1) == pytest.approx(155.0)
