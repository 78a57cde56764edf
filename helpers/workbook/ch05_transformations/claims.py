"""Chapter 5's closing table: each of the source's claims, the numbers
measured for it here and on the reference GPU, and a verdict computed from
those numbers (never typed)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.workbook.ch05_transformations import steps, transforms

CPU_SIZES = {"width": 64, "batches": (4, 16, 64), "lengths": (8, 32, 128),
             "remat": (256, 1024, 256), "forward": (256, 64),
             "matmuls": (128, 512)}
GPU_SIZES = {"width": 512, "batches": (16, 64, 256),
             "lengths": (16, 64, 256), "remat": (1024, 4096, 4096),
             "forward": (1024, 1024), "matmuls": (1024, 4096, 8192)}
EXPECTED_RETRACES = [True, False, True, True, True, False, False]
# The H100 SXM5's peak rates in FLOP/s without sparsity, from NVIDIA's
# H100 whitepaper (2022): the chapter's prediction, not a measurement.
H100_SXM_PEAK_FLOPS = {"float32": 66.9e12, "tf32": 494.7e12,
                       "bfloat16": 989.4e12}


def donation_width(sizes: dict[str, Any]) -> int:
    """The width of the MLP whose step donation is measured on: eight
    times the chapter's width, so its parameters show in the live bytes."""
    return 8 * sizes["width"]


def measure(sizes: dict[str, Any]) -> dict[str, Any]:
    """Every experiment of the chapter at the given sizes, as JSON-ready
    data (the reference recording runs it with `GPU_SIZES`)."""
    width = sizes["width"]
    return {
        "sizes": sizes,
        "retraces": transforms.retrace_table()["traced again"].tolist(),
        "compile_vs_run": transforms.compile_vs_run(2 * width, 32),
        "donation": transforms.donation(donation_width(sizes)),
        "vmap": transforms.vmap_vs_loop(width, sizes["batches"])
        .to_dict("list"),
        "scan": transforms.scan_vs_unrolled(width, sizes["lengths"])
        .to_dict("list"),
        "remat": transforms.remat_table(*sizes["remat"]).reset_index()
        .to_dict("list"),
        "forward": steps.forward_counts(*sizes["forward"]).reset_index()
        .to_dict("list"),
        "precision": steps.precision_table(sizes["matmuls"])
        .to_dict("list"),
    }


def sizes_of(data: dict[str, Any]) -> dict[str, Any]:
    """The sizes a recording of `measure` ran at. The first H100 recording
    (2026-11-23) predates the ``sizes`` key; it ran at `GPU_SIZES`, which
    have not changed since the chapter was written."""
    return data.get("sizes", GPU_SIZES)


def sizes_in_words(sizes: dict[str, Any]) -> str:
    """The sizes a run of `measure` uses, as a line for the page."""
    from helpers.page import prose

    width, hidden, batch = sizes["remat"]
    forward_width, forward_batch = sizes["forward"]
    return (f"width {sizes['width']}; vmap batches "
            f"{prose.and_list(sizes['batches'])}; scan lengths "
            f"{prose.and_list(sizes['lengths'])}; remat width {width}, "
            f"hidden {hidden}, batch {batch}; forward width "
            f"{forward_width}, batch {forward_batch}; matmuls of n = "
            f"{prose.and_list(sizes['matmuls'])}")


def measure_on_gpu() -> dict[str, Any]:
    """`measure` at the reference GPU's sizes."""
    return measure(GPU_SIZES)


def _last(table: dict[str, list], key: str, version: str, column: str
          ) -> float:
    frame = pd.DataFrame(table)
    frame = frame[frame[key] == frame[key].max()]
    return float(frame.set_index("version").loc[version, column])


def findings(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """For each claim: what the numbers in ``data`` (from `measure`) say,
    and the verdict: 'holds', 'holds in part' or 'does not hold'."""
    out = {}
    ok = data["retraces"] == EXPECTED_RETRACES
    c = data["compile_vs_run"]
    out["jit: trace once per shape, dtype and static value"] = (
        f"retraced exactly on those changes: {ok}; first call "
        f"{c['first call s'] / c['later calls s']:.0f}x a later one",
        "holds" if ok else "does not hold")
    d = data["donation"]
    saved = d["kept"]["live MB"] - d["donated"]["live MB"]
    out["donate_argnums reuses the input buffers"] = (
        f"{d['donated']['aliased outputs']} outputs aliased, "
        f"{saved:.2f} MB fewer live after the step",
        "holds" if d["donated"]["old params deleted"] and saved > 0
        else "does not hold")
    loop = _last(data["vmap"], "batch", "Python loop of jitted calls", "ms")
    inside = _last(data["vmap"], "batch", "Python loop inside jit", "ms")
    vmap = _last(data["vmap"], "batch", "vmap", "ms")
    out["vmap instead of a Python loop"] = (
        f"largest batch: loop of calls {loop / vmap:.1f}x, loop inside "
        f"jit {inside / vmap:.1f}x the time of vmap"
        + _dispatch(data["vmap"], "batch", "Python loop of jitted calls"),
        "holds" if loop > vmap and inside > vmap else
        "holds in part" if loop > vmap else "does not hold")
    out["scan instead of a Python loop for long loops"] = _scan(data["scan"])
    r = pd.DataFrame(data["remat"]).set_index("remat")
    memory = r.loc[True, "temp MB"] / r.loc[False, "temp MB"]
    extra = r.loc[True, "dots"] - r.loc[False, "dots"]
    why = ("" if extra > 0 else ": the compiler removed the remat "
           "barriers and recomputed nothing (see which pass, above)")
    out["remat trades compute for memory"] = (
        f"temporary memory x{memory:.2f}, {extra:d} extra matmuls, time "
        f"x{r.loc[True, 'ms'] / r.loc[False, 'ms']:.2f}{why}",
        "holds" if extra > 0 and memory < 0.9 else "does not hold")
    f = pd.DataFrame(data["forward"]).set_index("version")
    one, two, cse = f["dots"].iloc[0], f["dots"].iloc[1], f["dots"].iloc[2]
    kernels = ""
    if "kernel ms" in f:
        kernels = (f"; the kernels alone x"
                   f"{f['kernel ms'].iloc[1] / f['kernel ms'].iloc[0]:.2f}")
    out["value_and_grad(has_aux=True) runs the forward once"] = (
        f"{one} matmuls against {two} in two calls ({cse} if both are in "
        f"one jit); time x{f['ms'].iloc[1] / f['ms'].iloc[0]:.2f} for two "
        f"calls{kernels}",
        "holds" if one < two else "does not hold")
    out["bf16 matmuls: fast, and accurate enough"] = _bf16(data["precision"])
    return out


def _dispatch(table: dict[str, list], key: str, version: str) -> str:
    """How much of a version's wall time its kernels were, at the largest
    ``key``, when the recording has kernel times (else nothing)."""
    frame = pd.DataFrame(table)
    if "kernel ms" not in frame:
        return ""
    busy = _last(table, key, version, "kernel ms")
    wall = _last(table, key, version, "ms")
    return (f"; the loop of calls kept the device busy {busy / wall:.0%} of "
            "its time (the rest is dispatch, one call per example)")


def _scan(table: dict[str, list]) -> tuple[str, str]:
    """The scan claim: compile and run time of scan against an unrolled
    loop at the longest length."""
    frame = pd.DataFrame(table)
    longest = frame[frame["length"] == frame["length"].max()].set_index(
        "version")
    compile_ratio = (longest.loc["unrolled", "compile ms"]
                     / longest.loc["scan", "compile ms"])
    run_ratio = longest.loc["unrolled", "run ms"] / longest.loc["scan",
                                                                "run ms"]
    text = (f"length {frame['length'].max()}: unrolled compiles "
            f"{compile_ratio:.0f}x slower")
    if run_ratio < 1 / 1.1:
        text += (f", but runs {1 / run_ratio:.1f}x faster: scan runs its "
                 "loop step by step (chapter 3: on a GPU, a launch or more "
                 "each step), where the unrolled program is one straight "
                 "sequence of kernels; a trade of compile time for run "
                 "time")
    else:
        text += f", and runs {run_ratio:.2f}x the scan's time"
    verdict = ("holds" if compile_ratio > 1 and run_ratio >= 1 / 1.1 else
               "holds in part" if compile_ratio > 1 else
               "does not hold")
    return text, verdict


def _bf16(table: dict[str, list]) -> tuple[str, str]:
    """The bf16 claim at the largest n: bf16 against float32 at JAX's
    default precision (TF32 on tensor cores), and against full float32;
    device time where recorded."""
    p = pd.DataFrame(table)
    big = p[p["n"] == p["n"].max()].set_index("precision")
    column = "device ms" if "device ms" in big else "ms"
    bf16 = big.loc["bfloat16 inputs", column]
    default = big.loc["float32, default precision", column] / bf16
    highest = big.loc["float32, precision='highest'", column] / bf16
    error = big.loc["bfloat16 inputs", "rel error"]
    why = ("" if default > 1.1 else ": without faster bf16 matrix units "
           "than the default float32 path, the conversion gains nothing")
    text = (f"n={p['n'].max()}: bf16 {default:.2f}x as fast as float32 at "
            f"the default precision, {highest:.1f}x as fast as full "
            f"float32; relative error {error:.1e}{why}")
    # Within 10% of the default path is no speed-up worth the precision.
    verdict = ("holds" if default > 1.5 else "holds in part"
               if default > 1.1 else "does not hold")
    return text, verdict


def bf16_against_peaks(data: dict[str, Any], device: str,
                       predicted: float) -> str:
    """The bf16 speed-up over the default float32 path at the largest
    product, against ``predicted`` (the ratio of peak rates), and the
    clock that timed it."""
    p = pd.DataFrame(data["precision"])
    big = p[p["n"] == p["n"].max()].set_index("precision")
    column = "device ms" if "device ms" in big else "ms"
    measured = (big.loc["float32, default precision", column]
                / big.loc["bfloat16 inputs", column])
    share = measured / predicted
    reach = ("reached the prediction" if share >= 0.9 else
             f"reached {share:.0%} of the predicted speed-up")
    clock = ("by the device's clock" if column == "device ms" else
             "by the wall clock, the host's part of each call included")
    return (f"Against the peak rates: bf16's {measured:.2f} times the "
            f"default float32 path at n = {p['n'].max()} ({clock}) "
            f"{reach} of {predicted:.2g} times.")


def on_reference(data: dict[str, Any], device: str, claim: str) -> str:
    """One claim as the reference GPU's recording decides it, in a
    sentence for the section that measures it."""
    measured, verdict = findings(data)[claim]
    return f"On the {device}: {measured}. The claim {verdict}."


def claims_table(here: dict[str, Any], gpu: dict[str, Any] | None,
                 here_name: str) -> pd.DataFrame:
    """The closing table: one row per claim, the measurements and
    verdicts on this machine and, when there is a recording, on the
    reference GPU (without one the GPU's columns are left out, not
    filled with blanks: the chapter says what they will show)."""
    mine = findings(here)
    theirs = findings(gpu) if gpu else None
    rows = []
    for claim, (measured, verdict) in mine.items():
        row = {"claim": claim, here_name: measured, "verdict here": verdict}
        if theirs is not None:
            row["reference GPU"], row["verdict on the GPU"] = theirs[claim]
        rows.append(row)
    return pd.DataFrame(rows).set_index("claim")


def verdicts_and_evidence(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """`claims_table` split for the page: the verdicts as a narrow table,
    and the numbers behind them as a Markdown list (a sentence per claim
    and machine), so no table cell holds a paragraph."""
    verdicts = table[[c for c in table.columns if c.startswith("verdict")]]
    measured = [c for c in table.columns if not c.startswith("verdict")]
    lines = []
    for claim, row in table.iterrows():
        said = "; ".join(f"{where}: {row[where]}" for where in measured
                         if isinstance(row[where], str) and row[where])
        lines.append(f"- **{claim}**. {said}.")
    return verdicts, "\n".join(lines)
