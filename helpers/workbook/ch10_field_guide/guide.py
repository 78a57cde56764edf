"""What the field guide shows of each case: the checker's findings in the
slow and the fixed version (`show`), and a before/after measured on the
machine that runs the page (`show_measured`).

`before_after` measures what the case is about on this machine: run time
by `helpers.measuring.bench` (the wall clock, blocked, median of repeats),
the temporaries and the peak of live buffers from XLA's memory analysis,
or compilations over the case's sequence of calls.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import jax
import pandas as pd

from helpers.examine import Report, examine
from helpers.measuring import bench, machine
from helpers.workbook.ch10_field_guide import readings
from helpers.workbook.ch10_field_guide.cases import CASES, Case


@contextlib.contextmanager
def types_for(case: Case) -> Iterator[None]:
    """64-bit types on for a case that needs them, and off again after."""
    if case.x64:
        with jax.enable_x64(True):
            yield
    else:
        yield


def reports(case: Case, gpu: bool = True) -> tuple[Report, Report]:
    """`examine` of the slow and of the fixed version."""
    with types_for(case):
        args = case.arguments()
        if case.calls is None:
            return (examine(case.slow, *args, gpu=gpu),
                    examine(case.fixed, *args, gpu=gpu))
        slow_calls, fixed_calls = (make() for make in case.calls)
        return (examine(case.slow, *args, calls=slow_calls, gpu=gpu),
                examine(case.fixed, *args, calls=fixed_calls, gpu=gpu))


def before_after(case: Case, repeat: int = 20) -> dict[str, Any]:
    """The case's measure, slow and fixed, here: ``{'measure', 'unit',
    'slow', 'fixed'}``."""
    with types_for(case):
        if case.measure == "compiles":
            assert case.calls is not None
            return {"measure": "compilations", "unit": "",
                    "slow": _compilations(case.slow, case.calls[0]()),
                    "fixed": _compilations(case.fixed, case.calls[1]())}
        args = case.arguments()
        if case.measure == "memory":
            return {"measure": "temporaries + outputs", "unit": "MiB",
                    "slow": _memory_mib(case.slow, args),
                    "fixed": _memory_mib(case.fixed, args)}
        return {"measure": "median time", "unit": "ms",
                "slow": _median_ms(case.slow, args, repeat),
                "fixed": _median_ms(case.fixed, args, repeat),
                "interpreted": case.pallas_fix and not machine.on_gpu()}


def _median_ms(fn: Any, args: tuple[Any, ...], repeat: int) -> float:
    jitted = fn if hasattr(fn, "trace") else jax.jit(fn)
    return bench.benchmark(jitted, *args, repeat=repeat).median * 1e3


def _memory_mib(fn: Any, args: tuple[Any, ...]) -> float:
    """Temporaries plus outputs not written into a donated input."""
    jitted = fn if hasattr(fn, "trace") else jax.jit(fn)
    analysis = jitted.lower(*args).compile().memory_analysis()
    if analysis is None:
        raise RuntimeError("XLA gave no memory analysis for this backend.")
    extra = (analysis.temp_size_in_bytes + analysis.output_size_in_bytes
             - analysis.alias_size_in_bytes)
    return extra / 2**20


def _compilations(fn: Any, calls: list[tuple[Any, ...]]) -> int:
    jitted: Any = jax.jit(lambda *a: fn(*a))  # a cache of its own
    for args in calls:
        jax.block_until_ready(jitted(*args))
    return int(jitted._cache_size())


def summary(gpu: bool = True) -> list[dict[str, Any]]:
    """One row per case: the pattern (as the checker's report names it),
    whether the checker finds it in the slow version, and what it finds
    in the fixed one."""
    from helpers.examine.findings import PATTERNS
    rows = []
    for name, case in CASES.items():
        slow, fixed = reports(case, gpu)
        rows.append({"pattern": PATTERNS[name].title,
                     "found in the slow version":
                         "yes" if name in slow.patterns else "no",
                     "found in the fixed version": ", ".join(
                         PATTERNS[p].title for p in fixed.patterns)
                     or "nothing"})
    return rows


def code_shown(case: Case) -> tuple[Any, Any]:
    """The two functions a case's section shows: the slow and the fixed
    version, or, for a fix in the calls rather than the function (padding
    the lengths), the two ways of calling it."""
    if case.calls and case.slow is case.fixed:
        return case.calls
    return case.slow, case.fixed


def show(case: Case, gpu: bool = True) -> None:
    """Display a case as its section shows it: the two versions' code and
    what `examine` finds in each (loops and reductions read from the
    module compiled for an H100, memory and donation from the one compiled
    on this machine)."""
    from IPython.display import display

    from helpers.page import tables

    display(tables.show_code(*code_shown(case)))
    slow, fixed = reports(case, gpu)
    display(slow)
    display(fixed)


def show_measured(case: Case, recording: Any = None) -> None:
    """Measure a case's before/after on this machine (`before_after`) and
    display it as a one-row table (`readings.row`). A time or a compiled
    program's memory names the machine that measured it by its short name
    ('CPU', 'H100'); a count of compilations, the same on every machine,
    names none.

    ``recording`` (a `helpers.measuring.results.Recording`) keeps the
    measurement under the case's pattern: on the reference GPU, `examine`
    quotes it as the pattern's measured cost
    (`helpers.examine.costs.measured_case`).
    """
    from IPython.display import display

    from helpers.page import tables

    measured = before_after(case)
    if recording is not None:
        recording.add(**{case.pattern: measured})
    device = machine.short_name(machine.describe()["device"])
    row = readings.row(case.pattern, measured, device)
    display(tables.tidy(pd.DataFrame([row])).hide(axis="index"))


# --- what the reference GPU recorded of the same patterns -----------------

def _per_step_us(variants_data: dict[str, Any], *names: str) -> list[Any]:
    """Chapter 3's float32 µs a step on the GPU (wall clock over the
    whole loop) of each variant named."""
    from helpers.workbook.ch03_launches import verdicts as launches

    table = launches.variants_table(variants_data)
    per_step = table[table["dtype"] == "float32"].set_index("variant")[
        "us_per_step GPU"]
    missing = set(names) - set(per_step.index)
    if missing:
        raise KeyError(f"chapter 3's recording has no variant "
                       f"{sorted(missing)}; it has {list(per_step.index)}")
    return [per_step[name] for name in names]


def loop_pair_numbers(variants_data: dict[str, Any], slow: str,
                      fast: str) -> dict[str, float]:
    """Two of chapter 3's loop variants on the reference GPU (float32, µs
    a step by the wall clock over the whole loop): the pattern as users
    wrote it (``slow_us``) against the fix the section names
    (``fast_us``), and how many times less the fix took (``ratio``)."""
    a, b = _per_step_us(variants_data, slow, fast)
    return {"slow_us": a, "fast_us": b, "ratio": a / b}


def one_kernel_numbers(goals_data: dict[str, Any],
                       variants_data: dict[str, Any]) -> dict[str, float]:
    """Chapter 3's loop on the reference GPU as a scan (``scan_us``)
    against one kernel, with the Triton backend this guide's example asks
    for (``triton_us``) and with Mosaic GPU, Pallas's default on Hopper
    (``mosaic_us``): µs a step by the wall clock over the whole loop,
    float32, and the scan's time over each."""
    steps = goals_data["steps"]
    one_chain = goals_data["one_chain_s"]
    (scan,) = _per_step_us(variants_data, "scan, softplus hoisted")
    triton = one_chain["gpu fused_scan, triton"] / steps * 1e6
    mosaic = one_chain["gpu fused_scan"] / steps * 1e6
    return {"scan_us": scan, "triton_us": triton, "mosaic_us": mosaic,
            "scan_over_triton": scan / triton,
            "scan_over_mosaic": scan / mosaic}


def dtype_numbers(sweep_data: dict[str, Any]) -> dict[str, float]:
    """Chapter 2's product `a @ b` at its largest K in float32 and in
    float64 on the reference GPU, by device time: each type's ms and
    float64's over float32's (twice the bytes predict 2 for a kernel at
    memory speed)."""
    rows = pd.DataFrame(sweep_data["rows"])
    rows = rows[(rows["version"] == "a @ b") & (rows["K"] == rows["K"].max())]
    ms = rows.set_index("dtype")["device ms"]
    return {"k": int(rows["K"].iloc[0]), "float64_ms": ms["float64"],
            "float32_ms": ms["float32"],
            "ratio": ms["float64"] / ms["float32"]}


def product_numbers(fixes_data: dict[str, Any]) -> dict[str, Any]:
    """Chapter 2's product at K = 25, float32, on the reference GPU: the
    share of the copy bandwidth `a @ b` reached and its fusion, and the
    same for the fastest of its versions, by device time."""
    from helpers.workbook.ch02_fusion import verdicts as fusion_verdicts
    rows = fusion_verdicts.table(fixes_data)
    at = rows[(rows["K"] == 25) & (rows["dtype"] == "float32")].set_index(
        "version")
    best = at["achieved"].idxmax()
    return {"plain_fusion": at.loc["a @ b", "fusions"],
            "plain_share": at.loc["a @ b", "achieved"], "best": best,
            "best_fusion": at.loc[best, "fusions"] or "no fusion",
            "best_share": at.loc[best, "achieved"]}


def precision_numbers(claims_data: dict[str, Any]) -> dict[str, float]:
    """Chapter 5's relative error of a float32 product at the default
    precision and at 'highest', at its largest size, on the reference GPU,
    in millionths."""
    table = pd.DataFrame(claims_data["precision"])
    big = table[table["n"] == table["n"].max()].set_index("precision")
    default = big.loc["float32, default precision", "rel error"]
    highest = big.loc["float32, precision='highest'", "rel error"]
    return {"n": int(table["n"].max()), "default_millionths": default * 1e6,
            "highest_millionths": highest * 1e6, "ratio": default / highest}
