"""Which machine executed a page.

The book's pages are the reference GPU's own execution of each chapter.
Executing a chapter (``scripts/notebooks.py execute``) stamps the
notebook with who ran it (`stamp`): the machine's provenance, when, how
long, and the GPU's clocks, power and temperature at the start and the
end. On a GPU with ``BOOK_RECORD=1`` the executed notebook is also kept
as that GPU's page, ``recorded/<device>/<chapter>.ipynb`` (`page_path`).
The reference GPU's page is the one the book shows while the chapter's
code cells are the ones that ran there (`shown_notebook`; what the build
makes of it is `helpers.page.reference_pages`), and the line under a
page's title names its executor (`executed_by`, `fallback_line`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

import nbformat

from helpers.measuring import machine

# The notebook metadata key the book's own facts live under.
KEY = "book"
# The tag of a cell whose output measures the machine that executes it:
# folded on a page executed elsewhere than on the reference GPU.
MEASUREMENT = "measurement"
# The tag of a cell whose output is the reference GPU's result: its
# recording where another machine executes the page, this run on that GPU
# (so a new execution there may move its numbers, as a measurement's).
REFERENCE_RESULT = "reference-result"
# The class of the line naming a page's executor (styled by
# _static/outputs.css, found by scripts/browse_book.py).
EXECUTOR_CLASS = "page-executor"
# The book's reference GPU, as jax names its device kind (its slug is
# helpers.measuring.recorded.REFERENCE_DEVICE).
REFERENCE_DEVICE = "nvidia-h100-80gb-hbm3"


def code_sources(notebook: nbformat.NotebookNode) -> list[str]:
    """The sources of the code cells, in order: what an execution ran.

    Example:
        >>> nb = nbformat.v4.new_notebook(cells=[
        ...     nbformat.v4.new_markdown_cell("# Title"),
        ...     nbformat.v4.new_code_cell("x = 1  \\n")])
        >>> code_sources(nb)
        ['x = 1']
    """
    return [cell.source.rstrip() for cell in notebook.cells
            if cell.cell_type == "code"]


def same_code(one: nbformat.NotebookNode,
              other: nbformat.NotebookNode) -> bool:
    """True when the two notebooks run the same code cells in the same
    order (markdown, tags and outputs may differ)."""
    return code_sources(one) == code_sources(other)


def stamp(notebook: nbformat.NotebookNode, *, executor: dict[str, Any],
          started: str, seconds: float, gpu_start: dict[str, Any] | None,
          gpu_end: dict[str, Any] | None) -> None:
    """Record in ``notebook`` who executed it, when and how long it took.

    Args:
        executor: the executing machine's provenance
            (`helpers.measuring.machine.describe`, taken in its kernel).
        started: when the execution began (ISO 8601, UTC).
        seconds: how long it took, kernel start to last cell.
        gpu_start, gpu_end: `helpers.measuring.gpu_state.snapshot` before
            the first cell and after the last (None without a GPU).
    """
    for key in ("device", "backend", "jax", "date"):
        if key not in executor:
            raise ValueError(f"the executor's provenance lacks {key!r}: "
                             "pass helpers.measuring.machine.describe() "
                             "taken in the kernel that ran the notebook.")
    notebook.metadata[KEY] = {"execution": {
        "executor": executor, "started": started, "seconds": seconds,
        "gpu_start": gpu_start, "gpu_end": gpu_end}}


def execution(notebook: nbformat.NotebookNode) -> dict[str, Any] | None:
    """What `stamp` recorded in ``notebook``, or None (never executed by
    ``scripts/notebooks.py``)."""
    return notebook.metadata.get(KEY, {}).get("execution")


def recorded_root(*, writing: bool = False) -> Path:
    """The ``recorded/`` folder (``$BOOK_RECORDED_DIR`` overrides it, as
    for `helpers.measuring.recorded`; a GPU visit writes its new pages to
    ``$BOOK_RECORD_TO``)."""
    override = os.environ.get("BOOK_RECORD_TO") if writing else None
    override = override or os.environ.get("BOOK_RECORDED_DIR")
    return Path(override) if override else (
        Path(machine.repo_root()) / "recorded")


def page_path(chapter: str, device: str = REFERENCE_DEVICE, *,
              writing: bool = False) -> Path:
    """Where ``device``'s execution of ``chapter`` is kept:
    ``recorded/<device>/<chapter>.ipynb`` (with ``writing``, where a new
    one is written)."""
    if not chapter[:2].isdigit() or "/" in chapter:
        raise ValueError(f"chapter {chapter!r} must be a chapter's file "
                         "name without its suffix, e.g. '01_measuring'.")
    return recorded_root(writing=writing) / device / f"{chapter}.ipynb"


def reference_page(chapter: str, device: str = REFERENCE_DEVICE
                   ) -> nbformat.NotebookNode | None:
    """The reference GPU's kept execution of ``chapter``, or None."""
    path = page_path(chapter, device)
    return nbformat.read(path, as_version=4) if path.exists() else None


def shown_notebook(chapter_path: Path, device: str = REFERENCE_DEVICE
                   ) -> nbformat.NotebookNode:
    """The execution whose outputs the page of the chapter stored at
    ``chapter_path`` shows: the reference GPU's when it ran the same code,
    else the chapter as stored (executed on this machine)."""
    chapter = nbformat.read(chapter_path, as_version=4)
    reference = reference_page(chapter_path.stem, device)
    if reference is not None and same_code(chapter, reference):
        return reference
    return chapter


def shown(chapter_path: Path, device: str = REFERENCE_DEVICE
          ) -> dict[str, Any]:
    """Which execution the book shows of the chapter stored at
    ``chapter_path``: ``{'chapter', 'title', 'execution', 'replaces'}``,
    where ``replaces`` is the reference GPU's execution a code edit set
    aside (None when it is shown, or there is none)."""
    chapter = nbformat.read(chapter_path, as_version=4)
    reference = reference_page(chapter_path.stem, device)
    title = next((line[2:].strip() for cell in chapter.cells
                  if cell.cell_type == "markdown"
                  for line in cell.source.splitlines()
                  if line.startswith("# ")), chapter_path.stem)
    if reference is not None and same_code(chapter, reference):
        return {"chapter": chapter_path.stem, "title": title,
                "execution": execution(reference), "replaces": None}
    return {"chapter": chapter_path.stem, "title": title,
            "execution": execution(chapter),
            "replaces": execution(reference) if reference else None}


# A recording a chapter's code asks for: results.reference("01_measuring/
# summary"), results.narrated(\n "02_fusion/sweep", ...).
_RECORDING = re.compile(r'(?:results|recorded)\.\w+\(\s*"([0-9]{2}_'
                        r'[a-z0-9_]+/[a-z0-9_\-]+)"')


def quoted_provenance(notebook: nbformat.NotebookNode,
                      device: str = REFERENCE_DEVICE
                      ) -> dict[str, Any] | None:
    """The provenance of the newest of ``device``'s recordings that
    ``notebook``'s code reads (the numbers its prose quotes), or None
    where it reads none."""
    names = {name for source in code_sources(notebook)
             for name in _RECORDING.findall(source)}
    found = []
    for name in sorted(names):
        path = recorded_root() / device / f"{name}.json"
        if path.exists():
            found.append(json.loads(path.read_text())["provenance"])
    return max(found, key=lambda p: str(p["date"])) if found else None


# --- the line at the top ---------------------------------------------------

def short_name(info: dict[str, Any] | str | None) -> str:
    """What the text calls a machine after naming it once: ``'H100'`` for
    ``'NVIDIA H100 80GB HBM3'``, ``'CPU'`` for a CPU.

    Args:
        info: a device name, a `helpers.measuring.machine.describe` dict,
            or an execution (`execution`); None gives ``'this machine'``.

    Example:
        >>> [short_name(n) for n in ("NVIDIA H100 80GB HBM3", "NVIDIA H200",
        ...  "Tesla T4", "NVIDIA A100-SXM4-40GB", "NVIDIA L4", "cpu")]
        ['H100', 'H200', 'T4', 'A100', 'L4', 'CPU']
    """
    return machine.short_name(_device_name(info)) if info else "this machine"


def _device_name(info: dict[str, Any] | str) -> str:
    if isinstance(info, str):
        return info
    who = info["executor"] if "executor" in info else info
    return str(who["device"])


def day(iso: str) -> str:
    """``'2026-12-01T09:30:00+00:00'`` -> ``'1 December 2026'``."""
    when = dt.date.fromisoformat(str(iso)[:10])
    return f"{when.day} {when:%B %Y}"


def _machine_words(executor: dict[str, Any]) -> str:
    if executor.get("backend") == "cpu":
        return f"a CPU ({executor.get('machine', 'this machine')})"
    device = executor["device"]
    # "an NVIDIA H100" (en-vidia), "a Tesla T4"
    return f"an {device}" if device[0] in "AEIOU" or device.startswith(
        "NVIDIA") else f"a {device}"


def executed_by(run: dict[str, Any] | None) -> str:
    """The line naming a page's executor: the device, once, in full;
    jax; and the day.

    Example:
        >>> executed_by({"executor": {"device": "NVIDIA H100 80GB HBM3",
        ...     "backend": "gpu", "jax": "0.11.2",
        ...     "date": "2026-12-01T09:30:00+00:00"}}).split(" with ")
        ['Executed on an NVIDIA H100 80GB HBM3', \
'jax 0.11.2 on 1 December 2026.']
    """
    if run is None:
        return "Executed before pages recorded their executor."
    who = run["executor"]
    return (f"Executed on {_machine_words(who)} with jax {who['jax']} on "
            f"{day(who['date'])}.")


def fallback_line(here: dict[str, Any] | None,
                  reference: dict[str, Any] | None,
                  recorded_on: dict[str, Any] | None) -> str:
    """The line opening a page executed on this machine: who executed it,
    and whose results lead each section.

    Args:
        here: this machine's execution (`execution`).
        reference: the reference GPU's execution this one replaces, or
            None where it never executed the chapter.
        recorded_on: the provenance of the reference GPU's recordings the
            prose quotes, or None where it quotes none.
    """
    line = executed_by(here)
    if reference is not None:
        gpu = reference["executor"]
        return (f"{line} Its code changed after the book's reference GPU, "
                f"{_machine_words(gpu)}, executed it on "
                f"{day(gpu['date'])}: each measurement shows that GPU's "
                "output first, and this machine's folded under it.")
    if recorded_on is not None:
        return (f"{line} The results the text quotes are the book's "
                f"reference GPU's, {_machine_words(recorded_on)} (jax "
                f"{recorded_on['jax']}, recorded on "
                f"{day(recorded_on['date'])}); this machine's outputs are "
                "folded.")
    return line


