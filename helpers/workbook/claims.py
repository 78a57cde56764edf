"""Chapter 5's closing table: each of the source's claims, the numbers
measured for it here and on the reference GPU, and a verdict computed from
those numbers (never typed)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers.workbook import steps, transforms

CPU_SIZES = {"width": 64, "batches": (4, 16, 64), "lengths": (8, 32, 128),
             "remat": (256, 1024, 256), "forward": (256, 64),
             "matmuls": (128, 512)}
GPU_SIZES = {"width": 512, "batches": (16, 64, 256),
             "lengths": (16, 64, 256), "remat": (1024, 4096, 4096),
             "forward": (1024, 1024), "matmuls": (1024, 4096, 8192)}
EXPECTED_RETRACES = [True, False, True, True, True, False, False]


def measure(sizes: dict[str, Any]) -> dict[str, Any]:
    """Every experiment of the chapter at the given sizes, as JSON-ready
    data (the reference recording runs it with `GPU_SIZES`)."""
    width = sizes["width"]
    return {
        "retraces": transforms.retrace_table()["traced again"].tolist(),
        "compile_vs_run": transforms.compile_vs_run(2 * width, 32),
        "donation": transforms.donation(8 * width),
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
    and the verdict: 'holds', 'holds with caveats' or 'does not hold'."""
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
        f"jit {inside / vmap:.1f}x the time of vmap",
        "holds" if loop > vmap and inside > vmap else
        "holds with caveats" if loop > vmap else "does not hold")
    frame = pd.DataFrame(data["scan"])
    longest = frame[frame["length"] == frame["length"].max()].set_index(
        "version")
    compile_ratio = (longest.loc["unrolled", "compile ms"]
                     / longest.loc["scan", "compile ms"])
    run_ratio = longest.loc["unrolled", "run ms"] / longest.loc["scan",
                                                                "run ms"]
    out["scan instead of a Python loop for long loops"] = (
        f"longest: unrolled compiles {compile_ratio:.0f}x slower, runs "
        f"{run_ratio:.2f}x the scan's time",
        "holds" if compile_ratio > 1 and run_ratio >= 1 else
        "holds with caveats" if compile_ratio > 1 else "does not hold")
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
    out["value_and_grad(has_aux=True) runs the forward once"] = (
        f"{one} matmuls against {two} in two calls ({cse} if both are in "
        f"one jit); time x{f['ms'].iloc[1] / f['ms'].iloc[0]:.2f} for two "
        "calls",
        "holds" if one < two else "does not hold")
    p = pd.DataFrame(data["precision"])
    big = p[p["n"] == p["n"].max()].set_index("precision")
    speed = (big.loc["float32, precision='highest'", "ms"]
             / big.loc["bfloat16 inputs", "ms"])
    error = big.loc["bfloat16 inputs", "rel error"]
    why = ("" if speed > 1.1 else ": without bf16 matrix units the "
           "inputs are converted for the product, which gains nothing")
    out["bf16 matmuls: fast, and accurate enough"] = (
        f"n={p['n'].max()}: bf16 {speed:.2f}x as fast as full f32, "
        f"relative error {error:.1e}{why}",
        # Within 10% is no speed-up worth the lost precision.
        "holds" if speed > 1.5 else "holds with caveats" if speed > 1.1
        else "does not hold")
    return out


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
