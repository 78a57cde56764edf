"""Record the book's GPU results in a short visit to a GPU machine.

A GPU is lent for minutes at a time, one command of at most 10 minutes
after another. Three steps, two of them there:

* ``plan`` (anywhere): each chapter's budget on the GPU (`CHAPTER_BUDGET_S`,
  the book together `BOOK_BUDGET_S`, so that one command executes the whole
  book and runs the GPU tests), its time at the last visit that ran it and
  its dry run here (``time-here``), and the chapters in priority order cut
  into commands that fit the per-command budget;
* ``time-here [CHAPTER ...]`` (here): executes chapters with their GPU
  code paths at this machine's sizes (``BOOK_DRY_RUN=1``), in a copy of
  the chapters, and keeps each one's seconds in `DRY_RUN_LOG` for ``plan``;
* ``run --out DIR CHAPTER ...`` (on the GPU): executes each chapter live
  with recording on, saving every result the moment it is measured and
  the executed chapter as the GPU's page
  (``recorded/<device>/<chapter>.ipynb``); logs each chapter's wall time;
  stops starting chapters when the next would not fit the budget; and
  after every chapter re-packs everything made so far into
  ``DIR/gpu-visit.tar.gz`` (at most 16 MiB), so a command cut off at its
  limit loses only the chapter in progress. ``--tests`` adds the GPU
  tests (``tests/gpu``), with a JUnit file;
* ``unpack ARCHIVE`` (here): checks every recording's schema and
  provenance, refuses a chapter whose recordings or page are incomplete,
  and copies the rest into ``recorded/``.

Usage::

    python3 scripts/gpu_visit.py plan
    python3 scripts/gpu_visit.py run --out "$OUT" --budget 540 02_fusion
    python3 scripts/gpu_visit.py unpack /work/.device/.../gpu-visit.tar.gz
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

ROOT = Path(__file__).resolve().parents[1]
# The book's helpers, importable however the script is started: on the
# GPU host `python3 scripts/gpu_visit.py` has only scripts/ on its path.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
CHAPTERS = ROOT / "chapters"
# The order a visit executes the book in: the chapters that measure first,
# then the field guide, the how-to, the workshop and the reproducibility
# pages (each page is the GPU's execution of its chapter).
PRIORITY = ("01_measuring", "02_fusion", "03_launches", "04_profiling",
            "05_transformations", "06_xla_flags", "07_multi_gpu",
            "10_field_guide", "00_how_to_use", "08_workshop",
            "11_facilitators", "09_reproducibility")
# What one chapter, and the whole book, may take on the reference GPU:
# the book and the GPU tests in one command of under ten minutes.
CHAPTER_BUDGET_S = 90
BOOK_BUDGET_S = 420
ARCHIVE = "gpu-visit.tar.gz"
ARCHIVE_LIMIT = 16 * 2**20
LOG = "visit_log.json"
HISTORY = ROOT / "recorded" / LOG
# Each chapter's seconds with its GPU code paths on this machine
# (``time-here``): what `plan` sets beside the last visit's times.
DRY_RUN_LOG = ROOT / "recorded" / "dry_run_log.json"
COMMAND_BUDGET_S = 540  # under the 10-minute limit of one command
_RECORDING = re.compile(r'(?:live_or_recorded|narrated|Recording)\(\s*"'
                        r'([0-9]{2}_[a-z0-9_]+/[a-z0-9_\-]+)"')
# What each chapter records at a visit, beside its page.
NEEDS = {
    "01_measuring": "ceilings by device time; the matmul's call without "
                    "waiting, waiting and its device span; compile stages; "
                    "x + 1 back to back against its device span (the goal); "
                    "the cache sweep and the floors; the large array's "
                    "profile kept",
    "02_fusion": "the sweep with the fusion autotuner on and off in one "
                 "profile, and the fixes (the Pallas row kernel among "
                 "them), by device time, against the copy and the read "
                 "ceilings (the goals)",
    "03_launches": "each loop's time, kernels and CUDA-graph share per step; "
                   "a kept profile per variant; the four command-buffer "
                   "settings as compiler options; the fused kernels (the "
                   "latency kernel among them, with its difference from "
                   "the scan) and the one-multiply-add floor (the goals)",
    "04_profiling": "each call's device time, whole, in both orders; the "
                    "block with Pallas's and cuDNN's flash attention "
                    "against einsum (the goal)",
    "05_transformations": "device and kernel time beside the wall clock "
                          "for every claim; the float32 and mixed "
                          "training steps' MFU at width and batch 8192 "
                          "(the goal)",
    "06_xla_flags": "each setting by device time, twice for the default "
                    "(the noise between processes); PGLE's baseline",
    "07_multi_gpu": "its page (simulated devices and compiled programs)",
    "10_field_guide": "each case's slow and fixed version, timed by the "
                      "wall clock (the median of 20 blocked calls), or "
                      "its memory or compilations, the before/after pair "
                      "each verdict reads",
}


# The log's entries, with their optional keys in a total=False subclass
# (NotRequired is not seen at run time under postponed annotations).
class _ChapterRunKeys(TypedDict):
    chapter: str
    status: str  # "ok", "failed", "failed: out of time", "skipped: ..."
    seconds: float


class ChapterRun(_ChapterRunKeys, total=False):
    """One chapter's entry in the visit log."""

    output: str  # the output's tail, when the status is not "ok"
    # the claims the chapter's GPU data contradicted
    # (`helpers.page.claims`): its recordings are kept, its page is not
    contradicted: list[dict[str, str]]


class GpuTestsRun(TypedDict):
    """The GPU tests' entry in the visit log."""

    status: str  # "exit N" or "failed: out of time"
    seconds: float
    output: str


class _VisitLogKeys(TypedDict):
    started: str
    device: str | None
    budget_s: float
    chapters: list[ChapterRun]


class VisitLog(_VisitLogKeys, total=False):
    """What `run` writes to ``visit_log.json`` and returns."""

    tests: GpuTestsRun  # with ``--tests``


def expected_recordings(chapter: str, chapters: Path = CHAPTERS
                        ) -> list[str]:
    """The recording names a chapter's cells ask for."""
    text = (chapters / f"{chapter}.md").read_text()
    return sorted(set(_RECORDING.findall(text)))


def last_times(history: Path = HISTORY) -> dict[str, float]:
    """Each chapter's wall seconds at the last visit that ran it."""
    if not history.exists():
        return {}
    runs = json.loads(history.read_text()).get("chapters", [])
    return {run["chapter"]: run["seconds"] for run in runs
            if run.get("status") == "ok"}


def expected_times(chapters: tuple[str, ...] = PRIORITY,
                   chapters_dir: Path = CHAPTERS,
                   history: Path = HISTORY) -> dict[str, float]:
    """What each chapter is expected to take on the reference GPU: the
    seconds of the GPU's kept page when it ran the chapter's present
    code; else its budget (`CHAPTER_BUDGET_S`), or its time at the last
    visit that ran it where that was longer: an older time measured other
    code, but an edit seldom makes a chapter several times faster, and a
    chapter planned at 90 s that takes 230 s is cut off mid-way."""
    import nbformat

    from helpers.page import executions
    last = last_times(history)
    expected: dict[str, float] = {}
    for chapter in chapters:
        page = executions.reference_page(chapter)
        path = chapters_dir / f"{chapter}.ipynb"
        if page is None or not path.exists() or not executions.same_code(
                nbformat.read(path, as_version=4), page):
            expected[chapter] = max(float(CHAPTER_BUDGET_S),
                                    last.get(chapter, 0.0))
            continue
        run = executions.execution(page)
        if run is None:
            raise ValueError(
                f"{executions.page_path(chapter)} is a kept page without "
                "an execution stamp (not executed by scripts/notebooks.py)"
                ": record it again at a GPU visit (`gpu_visit.py run`, "
                "then `unpack`), or delete it to plan the chapter at its "
                "budget.")
        expected[chapter] = run["seconds"]
    return expected


def dry_run_times(log: Path = DRY_RUN_LOG) -> dict[str, float]:
    """Each chapter's seconds with its GPU code paths on the machine that
    ran ``time-here`` last."""
    if not log.exists():
        return {}
    return {chapter: entry["seconds"] for chapter, entry in
            json.loads(log.read_text())["chapters"].items()}


def time_here(chapters: list[str], log: Path = DRY_RUN_LOG,
              chapters_dir: Path = CHAPTERS) -> dict:
    """Execute ``chapters`` with their GPU code paths at this machine's
    sizes (``BOOK_DRY_RUN=1``), each in a fresh kernel, in a copy of the
    chapters (the stored pages stay as they are), and keep each one's
    seconds in ``log``."""
    import nbformat

    from helpers.measuring import machine
    from helpers.page import executions
    kept = json.loads(log.read_text()) if log.exists() else {"chapters": {}}
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "chapters"
        shutil.copytree(chapters_dir, copy)
        for chapter in chapters:
            subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "notebooks.py"),
                 "--chapters-dir", str(copy), "execute", chapter],
                env={**os.environ, "BOOK_DRY_RUN": "1"}, check=True,
                capture_output=True, text=True)
            executed = copy / f"{chapter}.ipynb"
            run = executions.execution(nbformat.read(executed,
                                                     as_version=4))
            if run is None:
                raise RuntimeError(
                    f"`notebooks.py execute {chapter}` left {executed} "
                    "without an execution stamp: its execute step must "
                    "call helpers.page.executions.stamp; fix it there "
                    "and run time-here again.")
            who = run["executor"]
            kept["chapters"][chapter] = {
                "seconds": round(run["seconds"], 1),
                "machine": f"{machine.short_name(who['device'])}, "
                           f"{who['machine']}, jax {who['jax']}",
                "date": who["date"]}
            print(f"time-here: {chapter}: {run['seconds']:.0f} s",
                  flush=True)
    log.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    return kept


def plan(chapters: tuple[str, ...] = PRIORITY,
         budget_s: float = COMMAND_BUDGET_S,
         times: dict[str, float] | None = None,
         unknown_s: float = CHAPTER_BUDGET_S
         ) -> list[list[tuple[str, float]]]:
    """Chapters grouped into commands of at most ``budget_s`` each, in
    order, with each chapter's expected seconds (`expected_times`, or
    ``unknown_s`` for a chapter ``times`` does not name)."""
    times = expected_times(chapters) if times is None else times
    commands: list[list[tuple[str, float]]] = [[]]
    used = 0.0
    for chapter in chapters:
        expected = times.get(chapter, unknown_s)
        if commands[-1] and used + expected > budget_s:
            commands.append([])
            used = 0.0
        commands[-1].append((chapter, expected))
        used += expected
    return commands


def run(chapters: list[str], out: Path, budget_s: float, *,
        tests: bool = False, chapters_dir: Path = CHAPTERS,
        times: dict[str, float] | None = None,
        test_paths: tuple[str, ...] = ("tests/gpu",)) -> VisitLog:
    """Execute ``chapters`` live with recording on; see the module doc."""
    out.mkdir(parents=True, exist_ok=True)
    staging = out / "staging"
    (staging / "recorded").mkdir(parents=True, exist_ok=True)
    times = expected_times(tuple(chapters), chapters_dir) if times is None \
        else times
    log: VisitLog = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                     "device": _gpu_name(), "budget_s": budget_s,
                     "chapters": []}
    start = time.monotonic()
    for chapter in chapters:
        left = budget_s - (time.monotonic() - start)
        expected = times.get(chapter, 0.0)
        print(f"gpu_visit: {chapter}: expected {expected:.0f} s, "
              f"{left:.0f} s left", flush=True)
        if expected > left or left <= 0:
            log["chapters"].append({"chapter": chapter, "status":
                                    "skipped: would not fit",
                                    "seconds": 0.0})
            _save_log(staging, log)
            continue
        log["chapters"].append(_execute(chapter, staging, left,
                                        chapters_dir))
        _save_log(staging, log)
        pack(staging, out / ARCHIVE)
    if tests:
        left = budget_s - (time.monotonic() - start)
        log["tests"] = _run_tests(staging, left, test_paths)
        _save_log(staging, log)
    pack(staging, out / ARCHIVE)
    return log


def _gpu_name() -> str | None:
    """The GPU's name by nvidia-smi, or None without one. Not by JAX: a
    JAX backend started in this process would take the GPU's memory from
    the chapters it runs."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name",
                               "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = done.stdout.strip().splitlines()
    return names[0].strip() if done.returncode == 0 and names else None


def _execute(chapter: str, staging: Path, timeout: float,
             chapters_dir: Path) -> ChapterRun:
    """One chapter, in a child process: recordings, and the executed
    chapter as the GPU's page, go straight into the staging folder as
    they are made."""
    from helpers.page import claims
    claims_log = staging / "claims" / f"{chapter}.jsonl"
    claims_log.parent.mkdir(parents=True, exist_ok=True)
    claims_log.unlink(missing_ok=True)
    env = {**os.environ, "BOOK_RECORD": "1", "PYTHONUNBUFFERED": "1",
           "BOOK_RECORD_TO": str(staging / "recorded"),
           claims.LOG_VARIABLE: str(claims_log)}
    begin = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "notebooks.py"),
             "--chapters-dir", str(chapters_dir), "execute", chapter],
            env=env, capture_output=True, text=True, timeout=timeout)
        status = "ok" if done.returncode == 0 else "failed"
        tail = (done.stdout + done.stderr)[-3000:]
    except subprocess.TimeoutExpired as err:
        status, tail = "failed: out of time", str(err.stdout or "")[-3000:]
    seconds = time.monotonic() - begin
    print(f"gpu_visit: {chapter}: {status} in {seconds:.0f} s", flush=True)
    result: ChapterRun = {"chapter": chapter, "status": status,
                          "seconds": seconds}
    if status != "ok":
        result["output"] = tail
    if found := claims.contradicted(claims_log):
        result["contradicted"] = found
        print(f"gpu_visit: {chapter}: {len(found)} claims contradicted",
              flush=True)
    return result


def _run_tests(staging: Path, timeout: float,
               paths: tuple[str, ...] = ("tests/gpu",)) -> GpuTestsRun:
    """The GPU tests, with a JUnit file. The chapters just executed are
    the new execution the strict check compares with the pages stored by
    the last visit (``BOOK_FRESH_PAGES``), so none runs twice."""
    junit = staging / "test-gpu-junit.xml"
    command = [sys.executable, "-m", "pytest", *paths, "-p",
               "no:cacheprovider", f"--junitxml={junit}", "-q"]
    device = _gpu_name()
    fresh = staging / "recorded" / _slug(device) if device else None
    env = {**os.environ, **({"BOOK_FRESH_PAGES": str(fresh)}
                           if fresh else {})}
    begin = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True,
                              text=True, timeout=max(timeout, 1), env=env)
        status = f"exit {done.returncode}"
        tail = (done.stdout + done.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        status, tail = "failed: out of time", ""
    return {"status": status, "seconds": time.monotonic() - begin,
            "output": tail}


def _slug(device: str) -> str:
    """``helpers.measuring.machine.device_slug`` of a device name, without
    starting JAX in this process."""
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in device.lower())
    return "-".join(part for part in cleaned.split("-") if part)


def _save_log(staging: Path, log: Mapping[str, Any]) -> None:
    (staging / LOG).write_text(json.dumps(log, indent=1) + "\n")


def pack(staging: Path, archive: Path, limit: int = ARCHIVE_LIMIT) -> Path:
    """Everything in ``staging`` as one gzipped tar of at most ``limit``
    bytes. Over the limit, the executed pages are left out, largest
    first (the recordings and the log are what the next visit cannot
    redo from them), and the log says which."""
    left_out: list[str] = []
    notebooks = sorted((staging / "recorded").glob("*/*.ipynb"),
                       key=lambda p: p.stat().st_size, reverse=True)
    while True:
        partial = archive.with_suffix(".partial")
        with tarfile.open(partial, "w:gz") as tar:
            for path in sorted(staging.rglob("*")):
                if path.is_file() and path.name not in left_out:
                    tar.add(path, arcname=str(path.relative_to(staging)))
        if partial.stat().st_size <= limit:
            partial.replace(archive)  # a reader never sees a half archive
            return archive
        if not notebooks:
            partial.unlink()
            raise RuntimeError(f"the recordings alone exceed {limit} bytes"
                               "; trim the profiles they hold.")
        left_out.append(notebooks.pop(0).name)
        log_path = staging / LOG
        log = json.loads(log_path.read_text()) if log_path.exists() else {}
        log["left out of the archive (size)"] = left_out
        _save_log(staging, log)


def unpack(archive: Path, recorded_root: Path | None = None,
           chapters_dir: Path = CHAPTERS) -> dict:
    """Check an archive and copy its complete chapters into ``recorded/``.

    Returns ``{"copied": [names], "refused": {chapter: reason}}``.

    Raises:
        ValueError: the archive has no visit log, or a recording fails
            its schema or provenance check.
    """
    from helpers.measuring import machine, recorded
    recorded_root = recorded_root or recorded.root()
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
        staging = Path(folder)
        if not (staging / LOG).exists():
            raise ValueError(f"{archive} has no {LOG}: not made by "
                             "`gpu_visit.py run`.")
        log = json.loads((staging / LOG).read_text())
        found = _checked_recordings(staging / "recorded", recorded,
                                    machine)
        copied, refused = [], {}
        for entry in log["chapters"]:
            chapter = entry["chapter"]
            if entry["status"] != "ok":
                refused[chapter] = entry["status"]
                continue
            want = set(expected_recordings(chapter, chapters_dir))
            have = {name for name in found
                    if name.startswith(chapter + "/")}
            pages = _checked_pages(staging / "recorded", chapter)
            if want - have:
                refused[chapter] = f"missing {sorted(want - have)}"
            elif log.get("device") and not pages:
                refused[chapter] = "no executed page"
            else:
                if entry.get("contradicted"):
                    # the sentences must be rewritten: a page whose claims
                    # its own data contradict is not one to show
                    pages = {}
                    refused[chapter] = "page not kept: rewrite " + "; ".join(
                        repr(c["claim"]) for c in entry["contradicted"])
                for device, page in pages.items():
                    target = recorded_root / device / page.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(page, target)
                for name in sorted(have):
                    source, device = found[name]
                    target = recorded_root / device / f"{name}.json"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(source, target)
                    copied.append(name)
                _copy_fixtures(staging / "recorded", recorded_root,
                               chapter)
        junit = staging / "test-gpu-junit.xml"
        if junit.exists():
            shutil.copy(junit, recorded_root / junit.name)
        _update_history(recorded_root / LOG, log)
    return {"copied": copied, "refused": refused}


def _update_history(path: Path, log: dict) -> None:
    """Each chapter's latest successful run, with the GPU it ran on, for
    `plan`'s expected times and the workshop's agenda: the chapters this
    visit ran well replace their earlier entries, the others keep theirs
    (a visit may take several archives)."""
    runs = json.loads(path.read_text())["chapters"] if path.exists() else []
    fresh = {e["chapter"]: {**e, "device": log.get("device")}
             for e in log["chapters"] if e["status"] == "ok"}
    kept = [e for e in runs if e["chapter"] not in fresh]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"chapters": kept + list(fresh.values())},
                               indent=1) + "\n")


def _copy_fixtures(staging: Path, recorded_root: Path, chapter: str
                   ) -> None:
    """The folders a chapter keeps beside its recordings (trimmed
    profiles, the xplane files XProf reads), copied whole: the book reads
    them like the recordings."""
    for folder in staging.glob(f"*/{chapter}/*/"):
        device = folder.parent.parent.name
        shutil.copytree(folder, recorded_root / device / chapter /
                        folder.name, dirs_exist_ok=True)


def _checked_pages(folder: Path, chapter: str) -> dict[str, Path]:
    """``{device: path}`` of the executed pages of ``chapter`` in
    ``folder``, each checked to be stamped by the GPU its folder names."""
    import nbformat

    from helpers.measuring import machine
    from helpers.page import executions

    pages = {}
    for path in sorted(folder.glob(f"*/{chapter}.ipynb")):
        run = executions.execution(nbformat.read(path, as_version=4))
        if run is None or machine.device_slug(run["executor"]) != \
                path.parent.name:
            raise ValueError(f"{path}: not stamped as executed on "
                             f"{path.parent.name}.")
        pages[path.parent.name] = path
    return pages


def _checked_recordings(folder: Path, recorded, machine) -> dict:
    """``{name: (path, device)}`` of every recording, each loaded through
    `helpers.measuring.recorded.load` (schema, name and provenance checked)."""
    found = {}
    for path in sorted(folder.glob("*/*/*.json")):
        device = path.parent.parent.name
        name = f"{path.parent.name}/{path.stem}"
        os.environ["BOOK_RECORDED_DIR"] = str(folder)
        try:
            record = recorded.load(name, device)
        finally:
            os.environ.pop("BOOK_RECORDED_DIR")
        if machine.device_slug(record["provenance"]) != device:
            raise ValueError(f"{path}: its provenance names "
                             f"{record['provenance']['device']!r}, not the "
                             f"folder's device {device!r}.")
        found[name] = (path, device)
    return found


def print_plan(budget_s: float = COMMAND_BUDGET_S) -> None:
    """The plan of a visit, as `plan` prints it: each chapter's budget,
    its last GPU time and its dry run here, the book's total, and the
    commands."""
    last, here = last_times(), dry_run_times()
    expected = expected_times()
    print(f"{'chapter':<20} {'budget':>7} {'expected':>9} "
          f"{'last GPU run':>13} {'dry run here':>13}")
    def seconds(table: dict[str, float], chapter: str) -> str:
        return f"{table[chapter]:.0f} s" if chapter in table else "—"

    for chapter in PRIORITY:
        print(f"{chapter:<20} {CHAPTER_BUDGET_S:>5} s "
              f"{seconds(expected, chapter):>9} "
              f"{seconds(last, chapter):>13} {seconds(here, chapter):>13}")
    print(f"{'the book':<20} {BOOK_BUDGET_S:>5} s "
          f"{sum(expected.values()):>7.0f} s {sum(last.values()):>11.0f} s"
          f" {sum(here.values()):>11.0f} s")
    print("\n(expected: the kept page's seconds where it ran the present "
          "code, else the budget or the last GPU run's time, whichever is "
          "longer; that run may have run older code)")
    for i, command in enumerate(plan(budget_s=budget_s), 1):
        total = sum(s for _, s in command)
        print(f"command {i} (~{total:.0f} s): " + ", ".join(
            f"{c} ({s:.0f} s)" for c, s in command))
    print("\nWhat each chapter records beside its page:")
    for chapter in PRIORITY:
        recordings = expected_recordings(chapter)
        if chapter in NEEDS or recordings:
            print(f"- {chapter}: {NEEDS.get(chapter, '')}"
                  + (f"; recordings: {', '.join(recordings)}"
                     if recordings else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    p_plan = verbs.add_parser("plan", help="commands that fit the budget")
    p_plan.add_argument("--budget", type=float, default=COMMAND_BUDGET_S)
    p_here = verbs.add_parser("time-here",
                              help="here: each chapter's GPU code paths")
    p_here.add_argument("chapters", nargs="*")
    p_run = verbs.add_parser("run", help="on the GPU: record chapters")
    p_run.add_argument("--out", type=Path, required=True)
    p_run.add_argument("--budget", type=float, default=COMMAND_BUDGET_S)
    p_run.add_argument("--tests", action="store_true")
    p_run.add_argument("--test-path", action="append", default=[],
                       help="with --tests: a test file or folder "
                            "(default tests/gpu); repeatable")
    p_run.add_argument("chapters", nargs="*")
    p_unpack = verbs.add_parser("unpack", help="here: check and copy")
    p_unpack.add_argument("archive", type=Path)
    args = parser.parse_args(argv)
    if args.verb == "plan":
        print_plan(args.budget)
        return 0
    if args.verb == "time-here":
        time_here(args.chapters or list(PRIORITY))
        return 0
    if args.verb == "run":
        log = run(args.chapters or list(PRIORITY), args.out, args.budget,
                  tests=args.tests,
                  test_paths=tuple(args.test_path) or ("tests/gpu",))
        failed = [c for c in log["chapters"] if c["status"] != "ok"]
        return 1 if failed else 0
    result = unpack(args.archive)
    print(json.dumps(result, indent=1))
    return 1 if result["refused"] else 0


if __name__ == "__main__":
    sys.exit(main())
