"""The how-to page's table of Colab's GPUs: the floors it adds up, the
programs each chapter lists, and the recording it reads, which must list
the same programs as the chapters' ``gpu_workload`` modules do now.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import re

import pandas as pd
import pytest

from helpers.measuring import datasheet
from helpers.page import claims
from helpers.workbook.ch00_how_to_use import colab_gpus
from helpers.workbook.ch01_measuring import gpu_workload as ch01
from helpers.workbook.ch02_fusion import gpu_workload as ch02
from helpers.workbook.ch03_launches import gpu_workload as ch03
from helpers.workbook.ch05_transformations import steps
from helpers.xla import crosscompile, gpu_floors

from book_paths import CHAPTERS

T4 = datasheet.peaks("Tesla T4")


def _workload(chapter: str) -> list[gpu_floors.Program]:
    target = colab_gpus.WORKLOADS[chapter]
    assert target is not None
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)()


def test_a_t4_multiplies_float32_on_its_cuda_cores():
    assert T4.tf32_flops_per_s is None and T4.bf16_flops_per_s is None
    assert datasheet.fastest_rate(T4, "float32") == 8.1e12
    assert datasheet.fastest_rate(T4, "bfloat16") == 8.1e12
    # float64 is not on the T4's datasheet: float32's rate bounds it
    assert datasheet.fastest_rate(T4, "float64") == 8.1e12
    a100 = datasheet.peaks("NVIDIA A100-SXM4-40GB")
    assert datasheet.fastest_rate(a100, "float64") == 19.5e12
    with pytest.raises(ValueError, match="name one of"):
        datasheet.fastest_rate(T4, "int8")


def test_a_floor_is_the_longer_of_bytes_and_flops():
    row = {"bytes": 320e9, "flops": 8.1e12, "dtype": "float32",
           "calls": 3, "highest": False}
    assert gpu_floors.floor_s(row, T4) == pytest.approx(1.0)
    assert gpu_floors.floor_s({**row, "bytes": 640e9}, T4) == \
        pytest.approx(2.0)
    assert gpu_floors.device_s(row, T4) == pytest.approx(3.0)


def test_a_timing_budget_cuts_a_slow_programs_calls():
    row = {"bytes": 0, "flops": 8.1e12, "dtype": "float32", "calls": 100,
           "highest": False, "budget_s": 2.0}
    # a first call, three samples, and the two the budget allows
    assert gpu_floors.device_s(row, T4) == pytest.approx(6.0)


def test_highest_precision_runs_at_the_float32_rate():
    h100 = datasheet.peaks("NVIDIA H100 80GB HBM3")
    row = {"bytes": 0, "flops": 66.9e12, "dtype": "float32"}
    assert gpu_floors.floor_s({**row, "highest": True}, h100) == \
        pytest.approx(1.0)
    assert gpu_floors.floor_s({**row, "highest": False}, h100) < 0.2


@pytest.mark.parametrize("chapter", [c for c, w in
                                     colab_gpus.WORKLOADS.items() if w])
def test_each_chapter_lists_its_programs_once_each(chapter):
    programs = _workload(chapter)
    names = [p.name for p in programs]
    assert programs and len(set(names)) == len(names)
    assert all(p.calls > 0 for p in programs)


def test_the_recording_lists_the_programs_the_chapters_list_now():
    costs = colab_gpus.load()
    assert costs is not None, "run scripts/colab_costs.py"
    for gpu in (*colab_gpus.COLAB, colab_gpus.REFERENCE):
        for chapter, target in colab_gpus.WORKLOADS.items():
            if target is None:
                continue
            listed = [(p.name, p.calls) for p in _workload(chapter)]
            kept = [(r["name"], r["calls"]) for r in costs[gpu][chapter]]
            assert kept == listed, (
                f"{chapter} on the {gpu}: the recording lists other "
                "programs than its gpu_workload: run "
                f"scripts/colab_costs.py {chapter}")


def _gpu_size(chapter: str, name: str) -> str:
    """The ``gpu=`` value the chapter's cell assigns to ``name``."""
    text = (CHAPTERS / f"{chapter}.md").read_text()
    found = re.search(rf"^{name} = machine\.sizes\(gpu=(.+?),\s*cpu=",
                      text, re.M | re.S)
    assert found, f"{chapter} no longer sets {name} by machine.sizes"
    return " ".join(found.group(1).split())


def test_the_workloads_use_the_chapters_gpu_sizes():
    assert _gpu_size("01_measuring", "m") == str(ch01.MATMUL_N)
    assert _gpu_size("01_measuring", "cache_sizes") == \
        "[2**k for k in range(20, 31, 2)]"
    assert eval(_gpu_size("02_fusion", "BATCH")) == ch02.BATCH
    assert eval(_gpu_size("02_fusion", "KS")) == ch02.KS
    text = (CHAPTERS / "03_launches.md").read_text()
    assert f"UNROLLS = {ch03.UNROLLS}" in text
    assert "recording.large_elements(" in (CHAPTERS / "01_measuring.md"
                                           ).read_text()


def test_a_t4_refuses_dot_algorithms_as_chapter_5_expects():
    """On a T4 XLA:GPU refuses the named dot algorithms; chapter 5's
    precision table skips exactly the errors it refuses them with."""
    rows = colab_gpus.load()["T4"]["05_transformations"]
    refused = [r for r in rows if not r["compiles"]]
    assert refused and all(r["name"].startswith("algorithm") for r in
                           refused)
    names = {cls.__name__ for cls in steps.UNSUPPORTED}
    assert {r["error"] for r in refused} <= names


def _rows() -> pd.DataFrame:
    costs = colab_gpus.load()
    assert costs is not None
    return colab_gpus.table(costs, colab_gpus.host_seconds())


def test_the_page_table_has_a_row_per_chapter_and_three_gpus():
    shown = colab_gpus.by_gpu(_rows())
    assert list(shown.columns) == ["T4 min", "L4 min", "A100 min",
                                   "compiled (T4, L4, A100)", "fits"]
    assert len(shown) == sum(1 for w in colab_gpus.WORKLOADS.values() if w)
    t4, l4, a100 = shown.loc["3 launches",
                             "compiled (T4, L4, A100)"].split(", ")
    assert t4.endswith("/39") and l4 == a100 == "38/39"  # Mosaic GPU
    assert shown.loc["1 measuring", "compiled (T4, L4, A100)"] == \
        "all, all, all"


def test_what_a_gpu_lacks_is_told_apart_from_this_machines_limits():
    lacking = colab_gpus.lacking(_rows())
    assert lacking.loc["Mosaic GPU, from compute capability 9.0",
                       "GPUs"] == "T4, L4, A100"
    triton = lacking.loc["Triton, from compute capability 8.0"]
    assert triton["GPUs"] == "T4"  # XLA's words and Pallas's, one row
    assert triton["chapters"] == ("2 fusion, 3 launches, 4 profiling, "
                                  "field guide")
    # cuDNN is missing here for every GPU, the H100 too: not a GPU's lack
    here = [why for why in lacking.index if "this machine" in why]
    assert here and all("H100" in lacking.loc[why, "GPUs"] for why in here)
    assert all(colab_gpus.here_only(sign) for sign in colab_gpus.HERE_ONLY)
    assert colab_gpus.reason("something new") == "something new"


def test_a_claim_the_data_contradict_fails_the_build():
    claims.check_here("2 < 3", 2 < 3)
    with pytest.raises(claims.ClaimContradicted, match="rewrite"):
        claims.check_here("3 < 2", 3 < 2)


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
def test_a_programs_cost_is_read_from_its_compilation_for_a_t4():
    rows = crosscompile.run(gpu_floors.costs_of,
                            colab_gpus.WORKLOADS["00_how_to_use"], gpu="T4")
    (row,) = rows  # x + 1 on a million float32 numbers
    assert row["compiles"] and row["flops"] == 1_000_000
    assert row["bytes"] == 2 * 4 * 1_000_000
    assert row["peak_bytes"] >= row["bytes"] and row["compile_s"] > 0


@pytest.mark.slow
@pytest.mark.skipif(not crosscompile.available(),
                    reason=str(crosscompile.why_unavailable()))
@pytest.mark.parametrize("gpu", colab_gpus.COLAB)
def test_every_chapters_programs_compile_for_colabs_gpus_as_recorded(gpu):
    """Every program each chapter runs on a GPU, compiled again for a
    T4, an L4 and an A100 (a child per chapter, two at a time): each
    compiles, or fails for what its GPU lacks (or this machine:
    `colab_gpus.HERE_ONLY`), as the recording the how-to page reads says,
    and moves the bytes it records."""
    costs = colab_gpus.load()
    assert costs is not None
    chapters = [c for c, w in colab_gpus.WORKLOADS.items() if w]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        compiled = dict(zip(chapters, pool.map(lambda c: crosscompile.run(
            gpu_floors.costs_of, colab_gpus.WORKLOADS[c], gpu=gpu),
            chapters)))
    for chapter, now in compiled.items():
        kept = costs[gpu][chapter]
        assert [(r["name"], r["compiles"], r.get("bytes")) for r in now] \
            == [(r["name"], r["compiles"], r.get("bytes")) for r in kept], \
            f"{chapter} on the {gpu}: run scripts/colab_costs.py {chapter}"
        for row in now:
            if not row["compiles"]:  # a reason the how-to page can name
                assert colab_gpus.reason(row["why not"]) != \
                    row["why not"], row["why not"]
