"""Every chapter's GPU programs compile for the GPUs Colab lends (a T4, an
L4, an A100), as they do for the H100; those that need a newer GPU fail
with an error that says what the GPU lacks.

The cases are the chapters' own calls of ``crosscompile.run_or_explain``
(grep ``run_or_explain(`` in ``chapters/``), with the arguments the
chapters pass. Each is compiled once per GPU, in a fresh child as in the
chapters, several children at once; the run's cache
(``BOOK_CROSSCOMPILE_CACHE``, `conftest.py`) keeps the results for any
other test that asks again.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
from typing import Any, Callable, NamedTuple, cast

import pytest

from helpers.profiler import xprof_tables
from helpers.workbook.ch02_fusion import fixes, reductions
from helpers.workbook.ch03_launches import for_h100
from helpers.workbook.ch03_launches.variants import STEPS
from helpers.workbook.ch04_profiling import attention, fused_for_h100
from helpers.workbook.ch05_transformations import (claims, transforms,
                                                   utilisation)
from helpers.workbook.ch06_xla_flags import flag_runs
from helpers.workbook.ch07_multi_gpu import collectives, schedules
from helpers.xla import crosscompile, fresh_process

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not crosscompile.available(),
                       reason=str(crosscompile.why_unavailable()))]

GPUS = ("T4", "L4", "A100")


class Case(NamedTuple):
    """A chapter's call: ``fn(*args)`` in the child."""

    name: str  # chapter:what
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()


CASES = [
    Case("02_fusion:dot strength reduction", fixes.strength_reduction_for_gpu),
    # kinds_for_h100's two calls (float32, float64) as one child
    Case("02_fusion:reduce kinds", reductions.kinds_for_gpu,
         (list(reductions.PREDICT_KS), ["float32", "float64"])),
    Case("02_fusion:fixes K=25", fixes.structure_for_gpu, (25,)),
    Case("02_fusion:fixes K=32", fixes.structure_for_gpu, (32,)),
    Case("03_launches:launches", for_h100.launches_for_gpu, (STEPS,)),
    Case("03_launches:graphs", for_h100.graphs_for_gpu, (STEPS,)),
    Case("03_launches:graphs, minimum 1", for_h100.graphs_for_gpu,
         (STEPS, 1)),
    Case("03_launches:fused backends", for_h100.fused_backends_for_gpu,
         (STEPS,)),
    Case("03_launches:side by side", for_h100.side_by_side_for_gpu,
         (10_000, STEPS)),
    # at the H100's recorded block size (the chapter's `gpu_shape`)
    Case("04_profiling:thunks", attention.launches_for_gpu,
         (None, attention.GPU_SHAPE)),
    Case("04_profiling:thunks, command buffers off",
         attention.launches_for_gpu,
         (xprof_tables.NO_COMMAND_BUFFERS, attention.GPU_SHAPE)),
    Case("04_profiling:fused attention", fused_for_h100.structure),
    Case("05_transformations:remat passes", transforms.remat_passes,
         (64, 256, 32, True)),
    Case("05_transformations:remat", transforms.remat_for_gpu,
         cast(tuple[int, int, int], claims.GPU_SIZES["remat"])),
    Case("05_transformations:product types",
         utilisation.product_types_for_gpu),
    Case("06_xla_flags:gemm_any digests", flag_runs.modules_for_gpu,
         ("matmul_epilogue", {"default": {},
                              "--xla_gpu_triton_gemm_any=false":
                              {"xla_gpu_triton_gemm_any": False}})),
    Case("06_xla_flags:loop body", flag_runs.loop_body_for_gpu,
         ("small_kernels",)),
    Case("06_xla_flags:schedules", schedules.schedule_for_gpu),
    Case("07_multi_gpu:combine", collectives.combine_for_gpu),
]

# What a GPU lacks for a case, as its error must say it, by GPU and case;
# every other case compiles.
HOPPER = r"mosaic backend needs compute capability 9\.0 or newer \(Hopper\)"
AMPERE = r"triton backend needs compute capability 8\.0 or newer \(Ampere\)"
XLA_AMPERE = (r"Triton support is only enabled for Ampere GPUs \(compute "
              r"capability 8\.0\) and up, but got compute capability 7\.5")
LACKS = {
    # the Pallas row kernel is a Triton kernel
    ("T4", "02_fusion:fixes K=25"): XLA_AMPERE,
    ("T4", "02_fusion:fixes K=32"): XLA_AMPERE,
    ("T4", "03_launches:fused backends"): HOPPER,
    ("L4", "03_launches:fused backends"): HOPPER,
    ("A100", "03_launches:fused backends"): HOPPER,
    ("T4", "03_launches:side by side"): AMPERE,
}
# Chapter 4's fused attentions report what does not compile, row by row:
# Pallas's flash attention is a Triton kernel, and cuDNN's needs the cuDNN
# library, which a machine without a GPU may lack (for the H100 too).
ROWS_LACK = {("T4", "pallas"): XLA_AMPERE}

_COMPILED: dict[tuple[str, str], Any] = {}  # a result or a ChildFailed


def _compile(gpu: str, case: Case) -> Any:
    try:
        return crosscompile.run(case.fn, *case.args, gpu=gpu)
    except fresh_process.ChildFailed as failed:
        return failed


def _params(item: Any) -> dict[str, Any]:
    """A test's parameters (none for a test not parametrized)."""
    return getattr(getattr(item, "callspec", None), "params", {})


@pytest.fixture
def compiled(request: pytest.FixtureRequest, gpu: str) -> Any:
    """What compiling the test's case for ``gpu`` gave. The first test of
    a GPU compiles every case selected for it, in children side by side
    (as many as the machine has cores, at most four)."""
    case: Case = _params(request.node)["case"]
    if (gpu, case.name) not in _COMPILED:
        todo = [params["case"] for params in map(_params,
                                                 request.session.items)
                if params.get("gpu") == gpu
                and isinstance(params.get("case"), Case)
                and (gpu, params["case"].name) not in _COMPILED]
        workers = max(1, min(4, os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for done, result in zip(todo, pool.map(
                    lambda c: _compile(gpu, c), todo)):
                _COMPILED[gpu, done.name] = result
    if (gpu, case.name) not in _COMPILED:  # a case not selected at first
        _COMPILED[gpu, case.name] = _compile(gpu, case)
    return _COMPILED[gpu, case.name]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("gpu", GPUS)
def test_each_chapters_programs_compile_for_colabs_gpus(gpu, case,
                                                        compiled):
    lacks = LACKS.get((gpu, case.name))
    if lacks is None:
        assert not isinstance(compiled, fresh_process.ChildFailed), \
            compiled.reason
        assert compiled  # XLA:GPU's program, read back
    else:
        assert isinstance(compiled, fresh_process.ChildFailed), \
            f"compiled for the {gpu}, though it needs what it lacks"
        assert re.search(lacks, compiled.reason), compiled.reason
    if case.fn is fused_for_h100.structure:
        for row in compiled:
            if row["compiles"]:
                assert (gpu, row["version"]) not in ROWS_LACK, row
            elif row["version"] == "cudnn":
                assert "cuDNN" in row["why not"], row
            else:
                assert re.search(ROWS_LACK[gpu, row["version"]],
                                 row["why not"]), row
