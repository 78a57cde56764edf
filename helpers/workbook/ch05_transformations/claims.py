"""Chapter 5's claims: each of the source's claims, the numbers measured
for it, and a verdict computed from those numbers (never typed), with the
closing table of one machine's verdicts and the claims on which this
machine's differ from the H100's. The sections' paragraphs on the GPU's
numbers are in `reference`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import numpy as np
import pandas as pd

from helpers.page.tables import number
from helpers.workbook.ch05_transformations import (steps, transforms,
                                                   utilisation)

CPU_SIZES = {"width": 64, "batches": (4, 16, 64), "lengths": (8, 32, 128),
             "remat": (256, 1024, 256), "forward": (256, 64),
             "matmuls": (128, 512), "mfu": ((64, 128), (256, 256))}
# On a GPU the largest batch and the longest scan are 128: the loop inside
# jit and the unrolled loop compile one body per example or step, and at
# 128 each claim's verdict is already decided (vmap's and the loops' ratios
# are tens of times; the unrolled loop's compile time several times the
# scan's). The bf16 verdict needs n = 8192, and chapter 6 reads n = 4096.
# The step's utilisation is read at the chapter's own size (width 512,
# batch 128) and at a width and batch of 8192, where the products' work
# (6.6 TFLOP a step) dwarfs the launches.
GPU_SIZES = {"width": 512, "batches": (16, 64, 128),
             "lengths": (16, 64, 128), "remat": (1024, 4096, 4096),
             "forward": (1024, 1024), "matmuls": (1024, 4096, 8192),
             "mfu": ((512, 128), (8192, 8192))}
EXPECTED_RETRACES = [True, False, True, True, True, False, False]
# The H100 SXM5's peak rates in FLOP/s without sparsity, from NVIDIA's
# H100 whitepaper (2022): the chapter's prediction, not a measurement.
H100_SXM_PEAK_FLOPS = {"float32": 66.9e12, "tf32": 494.7e12,
                       "bfloat16": 989.4e12}
# Each claim as a sentence whose first word names the transformation (the
# closing table's row label, short so that the claim itself can wrap).
JIT = "jit traces once per shape, dtype and static value"
DONATION = "donate_argnums reuses the input buffers"
VMAP = "vmap is faster than a Python loop"
SCAN = "scan beats a Python loop for long loops"
REMAT = "remat trades compute for memory"
FORWARD = "value_and_grad with has_aux=True runs the forward pass once"
BF16 = "bf16 matmuls are fast, and accurate enough"
LOOP = "Python loop of jitted calls"
INSIDE = "Python loop inside jit"
DEFAULT = steps.DEFAULT
HIGHEST = steps.HIGHEST
# bf16 inputs made before the call: the fair comparison. The H100's
# recording has only the casts inside the call, named "bfloat16 inputs";
# `largest` reads that name as `BFLOAT16_CAST`.
BFLOAT16 = steps.BF16_INPUTS
BFLOAT16_CAST = steps.BF16_CAST
_OLD_NAMES = {"bfloat16 inputs": BFLOAT16_CAST}
# How a sentence names each bf16 version.
BF16_WORDS = {BFLOAT16: "bf16 inputs made before the call, accumulated in "
                        "float32,",
              BFLOAT16_CAST: "bf16 with the casts inside the timed call "
                             "(both float32 inputs converted, the product "
                             "rounded to bf16 and back)"}
# The clocks of the timed tables, as a sentence names them.
CLOCK_WORDS = {"ms": "by the wall clock", "device ms": "by device time"}
# Column headers as a reader sees them.
HEADERS = {"ms": "wall ms", "run ms": "run wall ms", "temp MB":
           "temporary MB", "dots": "matrix products", "rel error":
           "relative error"}
class Finding(NamedTuple):
    """What the numbers say about one claim: a short phrase for a table
    cell, and the verdict ('holds', 'holds in part', 'does not hold')."""

    summary: str
    verdict: str


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
        # Which clock the verdicts may trust depends on it: `bf16_clock`.
        "platform": jax.devices()[0].platform,
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
        "mfu": utilisation.mfu_table(
            tuple(map(tuple, sizes["mfu"]))).to_dict("list"),
    }


def sizes_of(data: dict[str, Any]) -> dict[str, Any]:
    """The sizes a recording of `measure` ran at (its ``sizes``)."""
    return data["sizes"]


def sizes_in_words(sizes: dict[str, Any]) -> str:
    """The sizes a run of `measure` uses, as a line for the page."""
    from helpers.page import prose

    width, hidden, batch = sizes["remat"]
    forward_width, forward_batch = sizes["forward"]
    steps_ = [f"{w} x {b}" for w, b in sizes.get("mfu", ())]
    return (f"width {sizes['width']}; vmap batches "
            f"{prose.and_list(sizes['batches'])}; scan lengths "
            f"{prose.and_list(sizes['lengths'])}; remat width {width}, "
            f"hidden {hidden}, batch {batch}; forward width "
            f"{forward_width}, batch {forward_batch}; matmuls of n = "
            f"{prose.and_list(sizes['matmuls'])}"
            + (f"; training steps of width x batch "
               f"{prose.and_list(steps_)}" if steps_ else ""))


def measure_on_gpu() -> dict[str, Any]:
    """`measure` at the reference GPU's sizes."""
    return measure(GPU_SIZES)


def times(ratio: float) -> str:
    """A ratio as prose writes it before "times": two decimals below 10,
    whole numbers with thousands separators above.

    Example:
        >>> [times(r) for r in (0.386, 1.5555, 28.9, 12962.4)]
        ['0.39', '1.56', '29', '12,962']
    """
    return f"{ratio:.2f}" if abs(ratio) < 10 else f"{ratio:,.0f}"


def largest(table: dict[str, list], key: str) -> pd.DataFrame:
    """The rows of a measured table at the largest ``key`` (batch,
    length, n), indexed by version (a precision by its present name)."""
    frame = pd.DataFrame(table)
    index = "precision" if "precision" in frame else "version"
    frame[index] = frame[index].replace(_OLD_NAMES)
    return frame[frame[key] == frame[key].max()].set_index(index)


def bf16_kind(big: pd.DataFrame) -> str:
    """The bf16 version a verdict reads: inputs made before the call
    where the table has it, else the casts inside the call."""
    return BFLOAT16 if BFLOAT16 in big.index else BFLOAT16_CAST


def _about(ratio: float) -> str:
    """A large ratio to two significant figures, as a reader rounds it.

    Example:
        >>> _about(12962.4), _about(3.74)
        ('13,000', '3.7')
    """
    rounded = float(f"{ratio:.2g}")
    return f"{rounded:,.0f}" if rounded >= 100 else f"{rounded:.2g}"


def _jit(data: dict[str, Any]) -> Finding:
    retraced = sum(data["retraces"])
    c = data["compile_vs_run"]
    first = c["first call s"] / c["later calls s"]
    if data["retraces"] == EXPECTED_RETRACES:
        return Finding(f"retraced on exactly the {retraced} expected "
                       f"calls; the first call, which compiles, "
                       f"{_about(first)} times as long as a later one",
                       "holds")
    return Finding(f"retraced on {retraced} of {len(data['retraces'])} "
                   "calls, not on exactly the "
                   f"{sum(EXPECTED_RETRACES)} expected", "does not hold")


def _donation(data: dict[str, Any]) -> Finding:
    d = data["donation"]
    saved = d["kept"]["live MB"] - d["donated"]["live MB"]
    return Finding(
        f"{number(saved)} MB fewer alive after a step, "
        f"{d['donated']['aliased outputs']} outputs aliased",
        "holds" if d["donated"]["old params deleted"] and saved > 0
        else "does not hold")


def _vmap(data: dict[str, Any]) -> Finding:
    big = largest(data["vmap"], "batch")
    loop, inside = (big.loc[v, "ms"] / big.loc["vmap", "ms"]
                    for v in (LOOP, INSIDE))
    return Finding(
        f"at batch {big['batch'].iloc[0]}, loop of calls {times(loop)} times "
        f"vmap's time, loop in jit {times(inside)} times",
        "holds" if loop > 1 and inside > 1 else
        "holds in part" if loop > 1 else "does not hold")


def scan_ratios(data: dict[str, Any]) -> dict[str, Any]:
    """At the longest length: the unrolled loop's compile time and its
    wall-clock run time, each over the scan's (and its run time by the
    profiler's span, None when not recorded)."""
    big = largest(data["scan"], "length")
    out = {"length": int(big["length"].iloc[0]), "device run": None}
    for name, column in (("compile", "compile ms"), ("run", "run ms"),
                         ("device run", "run device ms")):
        if column in big:
            out[name] = big.loc["unrolled", column] / big.loc["scan", column]
    return out


def _scan(data: dict[str, Any]) -> Finding:
    r = scan_ratios(data)
    run = (f"runs {times(1 / r['run'])} times as fast" if r["run"] < 1
           else f"runs {times(r['run'])} times as long")
    # Faster by under 10% is within a run's noise: no trade of run time.
    verdict = ("holds" if r["compile"] > 1 and r["run"] >= 1 / 1.1 else
               "holds in part" if r["compile"] > 1 else "does not hold")
    return Finding(f"at {r['length']} steps, unrolled compiles "
                   f"{times(r['compile'])} times as long and {run} by the "
                   "wall clock", verdict)


def remat_numbers(data: dict[str, Any]) -> dict[str, float]:
    """The checkpointed step against the plain one: temporary memory
    (both, in MB, and their ratio), extra matrix products, and time by
    the wall clock (and by the span, None when not recorded)."""
    r = pd.DataFrame(data["remat"]).set_index("remat")
    return {"plain MB": r.loc[False, "temp MB"],
            "remat MB": r.loc[True, "temp MB"],
            "memory": r.loc[True, "temp MB"] / r.loc[False, "temp MB"],
            "extra": int(r.loc[True, "dots"] - r.loc[False, "dots"]),
            "time": r.loc[True, "ms"] / r.loc[False, "ms"],
            "device time": (r.loc[True, "device ms"] / r.loc[False,
                            "device ms"] if "device ms" in r else None)}


def _remat(data: dict[str, Any]) -> Finding:
    n = remat_numbers(data)
    if n["extra"] <= 0:
        return Finding("the compiler merged the recomputation away; "
                       f"temporary memory {times(n['memory'])} times",
                       "does not hold")
    return Finding(f"temporary memory {times(n['memory'])} times, "
                   f"{n['extra']} more products, {times(n['time'])} times "
                   "the time",
                   "holds" if n["memory"] < 0.9 else "does not hold")


def _forward(data: dict[str, Any]) -> Finding:
    f = pd.DataFrame(data["forward"]).set_index("version")
    one, two = f["dots"].iloc[0], f["dots"].iloc[1]
    return Finding(f"{one} products against {two} for two calls, which "
                   f"take {times(f['ms'].iloc[1] / f['ms'].iloc[0])} times "
                   "as long", "holds" if one < two else "does not hold")


def measured_on_cpu(data: dict[str, Any]) -> bool:
    """Whether ``data`` (from `measure`) was measured on a CPU. A
    recording without the ``platform`` key (the H100's) is a GPU's."""
    return data.get("platform", "gpu") == "cpu"


def bf16_clock(data: dict[str, Any]) -> str:
    """The column bf16's verdict reads: ``device ms``, the profiler's span,
    on a GPU that recorded it (there the device's own time of one large
    product); ``ms``, the wall clock, on a CPU, where the profiler runs on
    the host's own cores and slows the calls it records (`clocks`), and
    wherever no span was recorded. The other verdicts read the wall clock
    everywhere."""
    recorded = "device ms" in data["precision"]
    return "device ms" if recorded and not measured_on_cpu(data) else "ms"


def bf16_numbers(data: dict[str, Any]) -> dict[str, Any]:
    """At the largest n: bf16's speed-up over float32 at the default and
    at the highest precision, its relative error, and the clock they are
    read from (`bf16_clock`)."""
    big = largest(data["precision"], "n")
    column, kind = bf16_clock(data), bf16_kind(big)
    bf16 = big.loc[kind, column]
    return {"n": int(big["n"].iloc[0]), "clock": column, "kind": kind,
            "default": big.loc[DEFAULT, column] / bf16,
            "highest": big.loc[HIGHEST, column] / bf16,
            "error": big.loc[kind, "rel error"]}


def speed(ratio: float) -> str:
    """A time ratio (the other's time over this one's) as words:
    'X times as fast' above 1, 'X times as long' below.

    Example:
        >>> speed(1.56), speed(1 / 1.45)
        ('1.56 times as fast', '1.45 times as long')
    """
    if ratio >= 1:
        return f"{times(ratio)} times as fast"
    return f"{times(1 / ratio)} times as long"


def ran(ratio: float) -> str:
    """`speed` with its verb: 'ran X times as fast', 'took X times as
    long'."""
    return f"{'ran' if ratio >= 1 else 'took'} {speed(ratio)}"


def _bf16(data: dict[str, Any]) -> Finding:
    b = bf16_numbers(data)
    # Within 10% of the default path is no speed-up worth the precision.
    verdict = ("holds" if b["default"] > 1.5 else "holds in part"
               if b["default"] > 1.1 else "does not hold")
    clock = CLOCK_WORDS[b["clock"]]
    return Finding(f"{speed(b['default'])} as default float32 {clock}, "
                   f"relative error {b['error']:.2%}", verdict)


def findings(data: dict[str, Any]) -> dict[str, Finding]:
    """For each claim, what the numbers in ``data`` (from `measure`) say
    in a short phrase, and the verdict."""
    return {JIT: _jit(data), DONATION: _donation(data), VMAP: _vmap(data),
            SCAN: _scan(data), REMAT: _remat(data),
            FORWARD: _forward(data), BF16: _bf16(data)}


def claims_table(data: dict[str, Any], where: str = "here"
                 ) -> pd.DataFrame:
    """The closing table: one row per claim, labelled by its
    transformation, with what was measured ``where`` ('on the H100',
    'here') and the verdict."""
    rows = {claim: {f"measured {where}": f.summary, "verdict": f.verdict}
            for claim, f in findings(data).items()}
    table = pd.DataFrame.from_dict(rows, orient="index")
    # The row label is the transformation alone, so that it stays short
    # (labels do not wrap); the rest of the claim is a column, which does.
    named = [claim.split(" ", 1) for claim in table.index]
    table.insert(0, "claim", [rest for _, rest in named])
    table.index = pd.Index([name for name, _ in named], name="transformation")
    return table


def differences(here: dict[str, Any], gpu: dict[str, Any],
                device: str = "H100") -> pd.DataFrame:
    """The claims whose verdict here differs from ``device``'s (``gpu``):
    one row a claim, with both verdicts and what this machine measured;
    empty when every verdict agrees."""
    mine, theirs = findings(here), findings(gpu)
    rows = {claim: {device: theirs[claim].verdict, "here": found.verdict,
                    "measured here": found.summary}
            for claim, found in mine.items()
            if found.verdict != theirs[claim].verdict}
    return pd.DataFrame.from_dict(
        rows, orient="index",
        columns=[device, "here", "measured here"]).rename_axis("claim")


def _words(value: Any) -> Any:
    """A boolean as 'yes' or 'no'; anything else unchanged."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    return value


def shown(table: Any) -> pd.DataFrame:
    """A measured table as the page shows it: headers in words, booleans
    as yes and no, relative errors as a reader says them (a percentage,
    or millionths below 0.1%; no exponents), precisions by their present
    names."""
    from helpers.grading.criteria import relative

    frame = pd.DataFrame(table).copy()
    if "rel error" in frame:
        frame["rel error"] = frame["rel error"].map(relative)
    if "precision" in frame:
        frame["precision"] = frame["precision"].replace(_OLD_NAMES)
    frame = frame.map(_words).rename(columns=HEADERS)
    if frame.index.dtype == bool:
        frame.index = frame.index.map(_words)
    return frame
