"""The programs chapter 6 runs on a GPU, and how often
(`helpers.xla.gpu_floors`), for the how-to page's table of Colab's GPUs.
Each setting runs in a fresh process (`flag_runs.measure_on_gpu`), so
its start-up and its compilation are paid once a setting.
"""

from __future__ import annotations

from helpers.workbook.ch01_measuring.gpu_workload import MEASURE
from helpers.workbook.ch06_xla_flags import flag_runs
from helpers.xla.gpu_floors import Program

# The default twice, then each other setting: one process each.
RUNS = {name: 1 + len(settings)
        for name, settings in flag_runs.GPU_SETTINGS.items()}
# Automatic PGLE's three processes at 5 + 2 x 20 calls, three at 5 + 2 x 10.
PGLE_CALLS = 3 * 45 + 3 * 25


def programs() -> list[Program]:
    """Every program chapter 6 runs on a GPU, over all its processes."""
    size = flag_runs.SIZES["gpu"]
    found = []
    for name, runs in RUNS.items():
        fn, args = flag_runs.PROGRAMS[name](size)
        calls = runs * MEASURE + (PGLE_CALLS if name == "small_kernels"
                                  else 0)
        found.append(Program(name, fn, args, calls,
                             dtype=str(args[0].dtype)))
    return found
