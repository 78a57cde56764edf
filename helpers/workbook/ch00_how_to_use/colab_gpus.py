"""What each chapter gets on the GPUs Colab lends, predicted here: the
how-to page's table.

Each chapter's programs on a GPU (its ``gpu_workload`` module) are
compiled here for a T4, an L4, an A100 and the H100
(`helpers.xla.gpu_floors`, one `crosscompile` child per chapter and GPU),
and `measure` records what came of it. `table` reads the recording:

- *compiles*: how many of the chapter's programs XLA:GPU compiled for that
  GPU, and what the rest lack;
- *fits*: the largest program's peak memory against the memory JAX takes
  on that GPU (three quarters of it, JAX's default preallocation);
- *minutes*: the chapter's host work, measured here with its GPU code
  paths at small sizes (`scripts/gpu_visit.py time-here`), plus its
  programs' compilations, timed here for that GPU, plus their floors at
  that GPU's datasheet rates.

The same sum for the H100 stands beside the time a Hopper GPU took at the
last visit, the one check of the model against a measurement.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.measuring import datasheet, recorded
from helpers.xla import gpu_floors, gpu_specs

RESULT = "00_how_to_use/colab_gpus"
HERE = "cpu"  # the folder of results measured on this CPU
COLAB = ("T4", "L4", "A100")
REFERENCE = "H100"
# JAX preallocates this share of a GPU's memory by default (the H100's
# recording: 63.8 of 85.5 GB; XLA_PYTHON_CLIENT_MEM_FRACTION).
JAX_SHARE = 0.75
# Errors that say what this machine lacks, not what the GPU lacks:
# cuDNN's library (a GPU machine has it), and a runtime for a host
# callback (compiled only where a GPU runs it).
HERE_ONLY = ("cuDNN not found", "Unknown backend: 'gpu' requested")
# What each error says is missing.
REASONS = {
    # XLA's words for a Pallas kernel that names Triton itself (the row
    # kernel, Pallas's flash attention); Pallas's for one it chose
    "Triton support is only enabled for Ampere":
        "Triton, from compute capability 8.0",
    "triton backend needs": "Triton, from compute capability 8.0",
    "mosaic backend needs": "Mosaic GPU, from compute capability 9.0",
    "Unsupported algorithm":
        "the named dot algorithms (TF32, BF16 and their passes)",
    "cuDNN not found": "cuDNN's library (this machine's lack)",
    "Unknown backend: 'gpu' requested":
        "a GPU to run a host callback on (this machine's lack)",
}
# Each chapter as the tables name it.
LABELS = {"00_how_to_use": "how to use", "01_measuring": "1 measuring",
          "02_fusion": "2 fusion", "03_launches": "3 launches",
          "04_profiling": "4 profiling",
          "05_transformations": "5 transformations",
          "06_xla_flags": "6 XLA flags", "07_multi_gpu": "7 multi-GPU",
          "08_workshop": "workshop", "09_reproducibility": "reproducibility",
          "10_field_guide": "field guide",
          "11_facilitators": "facilitators"}
_PACKAGE = "helpers.workbook"
# Where each chapter's programs are listed; None where nothing runs on one
# GPU (chapter 7's meshes are simulated devices; chapter 9 reads files).
WORKLOADS: dict[str, str | None] = {
    "00_how_to_use": f"{_PACKAGE}.ch00_how_to_use.gpu_workload:programs",
    "01_measuring": f"{_PACKAGE}.ch01_measuring.gpu_workload:programs",
    "02_fusion": f"{_PACKAGE}.ch02_fusion.gpu_workload:programs",
    "03_launches": f"{_PACKAGE}.ch03_launches.gpu_workload:programs",
    "04_profiling": f"{_PACKAGE}.ch04_profiling.gpu_workload:programs",
    "05_transformations":
        f"{_PACKAGE}.ch05_transformations.gpu_workload:programs",
    "06_xla_flags": f"{_PACKAGE}.ch06_xla_flags.gpu_workload:programs",
    "07_multi_gpu": None,
    "08_workshop": f"{_PACKAGE}.ch08_workshop.gpu_workload:programs",
    "09_reproducibility": None,
    "10_field_guide": f"{_PACKAGE}.ch10_field_guide.gpu_workload:programs",
    "11_facilitators":
        f"{_PACKAGE}.ch08_workshop.gpu_workload:facilitators",
}


def measure(chapters: list[str] | None = None) -> dict[str, Any]:
    """Every chapter's programs compiled for each GPU here: ``{gpu:
    {chapter: [gpu_floors.cost row]}}``. Minutes of work: chapter 2
    alone compiles about 200 programs per GPU."""
    from helpers.xla import crosscompile
    chapters = chapters or [c for c, w in WORKLOADS.items() if w]
    return {gpu: {chapter: crosscompile.run(
        gpu_floors.costs_of, WORKLOADS[chapter], gpu=gpu, timeout=1800)
        for chapter in chapters}
        for gpu in (*COLAB, REFERENCE)}


def jax_memory(gpu: str) -> int:
    """The bytes JAX takes on ``gpu`` by default: `JAX_SHARE` of its
    memory."""
    return int(JAX_SHARE * gpu_specs.spec(gpu)["device_memory_size"])


def sheet(gpu: str) -> datasheet.Peaks:
    """``gpu``'s datasheet peaks."""
    found = datasheet.peaks(gpu_specs.spec(gpu)["device_description_str"])
    if found is None:
        raise ValueError(f"no datasheet for the {gpu}")
    return found


def chapter_on(rows: list[dict[str, Any]], gpu: str) -> dict[str, Any]:
    """One chapter's programs on ``gpu``: counts, why some do not compile,
    the largest peak, the compilations' and the floors' seconds."""
    done = [row for row in rows if row["compiles"]]
    failed = [row["why not"] for row in rows if not row["compiles"]]
    lacking = sorted(set(failed))
    return {"programs": len(rows), "compiled": len(done),
            "checked": len(rows) - sum(map(here_only, failed)),
            "why not": lacking,
            "peak_bytes": max((row["peak_bytes"] for row in done),
                              default=0),
            "compile_s": sum(row["compile_s"] for row in done),
            "floor_s": sum(gpu_floors.device_s(row, sheet(gpu))
                           for row in done)}


def table(costs: dict[str, Any], host_s: dict[str, float]) -> pd.DataFrame:
    """One row per chapter and GPU: what compiled, the largest program's
    peak against JAX's share of the memory, the three parts of the
    predicted time and their sum in minutes. ``host_s``: each chapter's
    host work, in seconds (`scripts/gpu_visit.py`'s dry-run log)."""
    rows = []
    for gpu, chapters in costs.items():
        for chapter, programs in chapters.items():
            on = chapter_on(programs, gpu)
            host = host_s.get(chapter)
            total = None if host is None else (
                host + on["compile_s"] + on["floor_s"])
            rows.append({
                "chapter": chapter, "gpu": gpu,
                "compiled": on["compiled"], "checked": on["checked"],
                "programs": on["programs"],
                "why not": on["why not"],
                "peak GiB": on["peak_bytes"] / 2**30,
                "share GiB": jax_memory(gpu) / 2**30,
                "fits": on["peak_bytes"] <= jax_memory(gpu),
                "host s": host, "compile s": on["compile_s"],
                "floor s": on["floor_s"],
                "minutes": None if total is None else total / 60})
    return pd.DataFrame(rows)


def load() -> dict[str, Any] | None:
    """The recorded costs (`measure`'s result), or None where none is
    recorded."""
    try:
        return recorded.load(RESULT, device=HERE)["data"]
    except FileNotFoundError:
        return None


def host_seconds(log: Path | None = None) -> dict[str, float]:
    """Each chapter's seconds run here with its GPU code paths at small
    sizes (``gpu_visit.py time-here``'s log, ``recorded/dry_run_log.json``
    by default)."""
    log = log or recorded.root() / "dry_run_log.json"
    chapters = json.loads(log.read_text())["chapters"]
    return {chapter: entry["seconds"] for chapter, entry in chapters.items()}


def visit_runs(log: Path | None = None) -> dict[str, tuple[float, str]]:
    """Each chapter's seconds at the last GPU visit
    (``recorded/visit_log.json`` by default), where it ran, and the GPU
    that ran it (`gpu_runs.gpu_run_seconds`: an H100 or an H200)."""
    from helpers.workbook.ch08_workshop import gpu_runs
    log = log or recorded.root() / "visit_log.json"
    ran = {entry["chapter"] for entry in json.loads(log.read_text())[
        "chapters"] if entry["status"] == "ok"}
    return {chapter: run for chapter, run in gpu_runs.gpu_run_seconds(
        log, recorded.root()).items() if chapter in ran}


def minutes_on(gpu: str) -> dict[str, float]:
    """Each chapter's estimated minutes on ``gpu`` (one of `COLAB`): the
    how-to page's sum, times the ratio the chapter's own run at the last
    GPU visit showed where it ran there (`against_the_h100`); empty where
    nothing is recorded."""
    costs = load()
    if costs is None:
        return {}
    rows = table(costs, host_seconds())
    ratio = against_the_h100(rows, visit_runs(), labels=False)[
        "visit / sum"]
    mine = rows[(rows["gpu"] == gpu) & rows["minutes"].notna()]
    return {chapter: minutes * ratio.get(chapter, 1.0)
            for chapter, minutes in zip(mine["chapter"], mine["minutes"])}


def by_gpu(rows: pd.DataFrame) -> pd.DataFrame:
    """`table`'s rows as the page shows them, narrow: a row per chapter,
    its predicted minutes on each Colab GPU, how many of its programs
    compile on each ("all", or the count), and whether the largest fits
    in the memory JAX takes on every one."""
    shown = rows[rows["gpu"].isin(COLAB)].copy()
    shown["compiled"] = ["all" if row.compiled == row.checked
                         else f"{row.compiled}/{row.checked}"
                         for row in shown.itertuples()]
    order = [c for c in WORKLOADS if WORKLOADS[c]]
    by = shown.set_index(["chapter", "gpu"])
    table = pd.DataFrame(index=order)
    for gpu in COLAB:
        table[f"{gpu} min"] = [_one_decimal(by.loc[(c, gpu), "minutes"])
                               for c in order]
    table["compiled (T4, L4, A100)"] = [
        ", ".join(by.loc[(c, gpu), "compiled"] for gpu in COLAB)
        for c in order]
    table["fits"] = ["yes" if by.loc[c, "fits"].all() else "no"
                     for c in order]
    return table.rename(index=LABELS)


def _one_decimal(minutes: float) -> str:
    """Minutes to a tenth, "<0.1" below that, "" where unknown.

    Example:
        >>> _one_decimal(1.66), _one_decimal(0.04), _one_decimal(float("nan"))
        ('1.7', '<0.1', '')
    """
    if pd.isna(minutes):
        return ""
    return "<0.1" if minutes < 0.05 else f"{minutes:.1f}"


def against_the_h100(rows: pd.DataFrame,
                     runs: dict[str, tuple[float, str]],
                     labels: bool = True) -> pd.DataFrame:
    """The sum for the H100 beside the minutes a Hopper GPU took at the
    last visit (`visit_runs`: the GPU named; an H200's floors are at most
    the H100's, so its ratio is if anything understated), for each
    chapter that ran there, and the T4's sum scaled by that chapter's
    ratio; rows by the tables' `LABELS`, or by chapter."""
    h100 = rows[rows["gpu"] == REFERENCE].set_index("chapter")
    t4 = rows[rows["gpu"] == "T4"].set_index("chapter")
    ran = [chapter for chapter in h100.index if chapter in runs]
    table = pd.DataFrame({
        "ran on": [_model(runs[chapter][1]) for chapter in ran],
        "visit, min": [runs[chapter][0] / 60 for chapter in ran],
        "H100 sum, min": h100.loc[ran, "minutes"],
        "T4 sum, min": t4.loc[ran, "minutes"]}, index=ran)
    table["visit / sum"] = table["visit, min"] / table["H100 sum, min"]
    table["T4 estimate, min"] = table["T4 sum, min"] * table["visit / sum"]
    if labels:
        table.index = [LABELS[chapter] for chapter in ran]
    return table


def _model(device: str) -> str:
    """``'H100'`` for ``'NVIDIA H100 80GB HBM3'``."""
    from helpers.measuring import machine
    return machine.short_name(device)


def lacking(rows: pd.DataFrame) -> pd.DataFrame:
    """What kept a program from compiling, with the GPUs and chapters it
    kept them from: one row per reason."""
    found: dict[str, dict[str, list[str]]] = {}
    for row in rows.to_dict("records"):
        for why in row["why not"]:
            entry = found.setdefault(reason(why),
                                     {"gpus": [], "chapters": []})
            entry["gpus"].append(row["gpu"])
            entry["chapters"].append(LABELS[row["chapter"]])
    order = [*COLAB, REFERENCE]
    return pd.DataFrame([
        {"what is missing": why,
         "GPUs": ", ".join(sorted(set(entry["gpus"]), key=order.index)),
         "chapters": ", ".join(sorted(set(entry["chapters"])))}
        for why, entry in found.items()]).set_index("what is missing")


def reason(why: str) -> str:
    """XLA's or Pallas's error ``why`` as what the GPU (or this
    machine, `HERE_ONLY`) lacks, in a few words; the error itself where
    `REASONS` knows none."""
    for sign, words in REASONS.items():
        if sign in why:
            return words
    return why


def here_only(why: str) -> bool:
    """Whether ``why`` (a program's reason for not compiling) is this
    machine's limit rather than the GPU's: `HERE_ONLY`."""
    return any(sign in why for sign in HERE_ONLY)
