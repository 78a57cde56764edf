"""Does a new execution of a chapter reproduce the stored one?

The strict check of the book on a GPU (``make test-gpu``): a chapter
executed again on the reference GPU is set beside the page kept from the
last execution there, cell by cell, output by output. Outputs are read as
text (a table's cells, a printed line, a glued sentence) and split into
words and numbers:

- the words must be the same: fusion kinds, kernel names, verdicts,
  shapes written out; so must the count of figures;
- the numbers must be the same too, except in a cell whose output is a
  measurement (tagged ``measurement``) or shows the reference GPU's
  result (tagged ``reference-result``: its recording elsewhere, this
  run on that GPU), where each may differ from the stored one by a
  stated tolerance (`TOLERANCE`, or the cell's own
  ``book: {tolerance: ...}``), and in a cell tagged
  ``nbval-ignore-output`` (drawn at random each run), where only the
  words count;
- what changes from run to run by nature is replaced first (`SANITIZERS`):
  dates, memory addresses, temporary paths, version numbers.

Durations and rates are read with their units, so ``980 µs`` and
``1.02 ms`` are two readings of one quantity, 4% apart.
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

import nbformat

from helpers.page import executions

# How far a measured number may move between two executions on the same
# GPU: the spread between processes the chapters measure (chapter 4's A/A
# runs, chapter 6's repeated defaults) is a few percent for kernels of a
# millisecond, tens of percent for calls of microseconds.
TOLERANCE = 0.5
# Replaced before comparing: (pattern, what it becomes).
SANITIZERS = (
    (re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                r"(?:[+-]\d{2}:?\d{2}|Z)?)?"), "DATE"),
    (re.compile(r"\b\d{1,2} (?:January|February|March|April|May|June|July|"
                r"August|September|October|November|December) \d{4}\b"),
     "DATE"),
    (re.compile(r"0x[0-9a-fA-F]+"), "ADDRESS"),
    (re.compile(r"/tmp/[^\s'\")]+"), "TMPPATH"),
    (re.compile(r"\b(?:jax|jaxlib|driver|CUDA|cuDNN|Python)\s+"
                r"\d+(?:\.\d+)+\b"), "VERSION"),
)
_SCALE = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0,
          "min": 60.0, "B/s": 1.0, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
          "TB/s": 1e12, "GFLOP/s": 1e9, "TFLOP/s": 1e12, "B": 1.0,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "kB": 1e3, "MB": 1e6,
          "GB": 1e9}
_UNITS = "|".join(sorted((re.escape(u) for u in _SCALE), key=len,
                         reverse=True))
_NUMBER = re.compile(r"(?<![\w.])([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)"
                     r"(?:\.\d+)?(?:[eE][-+]?\d+)?)(?:\s?(" + _UNITS +
                     r")(?![\w/]))?")


@dataclasses.dataclass(frozen=True)
class Difference:
    """One way a new execution departs from the stored one."""

    cell: int
    what: str

    def __str__(self) -> str:
        return f"code cell {self.cell}: {self.what}"


def sanitized(text: str) -> str:
    """``text`` with dates, addresses, temporary paths and versions
    replaced by placeholders.

    Example:
        >>> sanitized("jax 0.11.2 on 2026-12-01, buffer at 0x7f3a")
        'VERSION on DATE, buffer at ADDRESS'
    """
    for pattern, placeholder in SANITIZERS:
        text = pattern.sub(placeholder, text)
    return text


def reading(text: str) -> tuple[str, list[float]]:
    """The words of ``text`` with each number replaced by ``#``, and the
    numbers, durations and rates in their base unit (seconds, bytes per
    second).

    Example:
        >>> reading("took 980 µs (1,024 elements)")
        ('took # (# elements)', [0.00098, 1024.0])
    """
    numbers: list[float] = []

    def keep(match: re.Match[str]) -> str:
        value = float(match.group(1).replace(",", ""))
        numbers.append(value * _SCALE.get(match.group(2) or "", 1.0))
        return "#"

    words = _NUMBER.sub(keep, sanitized(text))
    return " ".join(words.split()), numbers


def output_text(output: dict[str, Any]) -> str:
    """What an output says, as text: a stream's lines, a result's or a
    display's plain text, HTML (a table) with its tags removed, Markdown
    as written; an error's name and message."""
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    if output.get("output_type") == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    data = output.get("data", {})
    for mime in ("text/html", "text/markdown", "text/plain"):
        if mime in data:
            text = "".join(data[mime]) if isinstance(data[mime], list) \
                else str(data[mime])
            if mime == "text/html":
                text = html.unescape(re.sub(r"<style.*?</style>|<[^>]+>",
                                            " ", text, flags=re.S))
            return text
    return ""


def _glue_name(output: dict[str, Any]) -> str | None:
    return output.get("metadata", {}).get("scrapbook", {}).get("name")


def _shown(output: dict[str, Any]) -> dict[str, Any]:
    """A glued value's output as MyST-NB reads it: its mime types without
    the prefix that keeps it off the page."""
    prefix = output.get("metadata", {}).get("scrapbook", {}).get(
        "mime_prefix", "")
    if not prefix:
        return output
    return {**output, "data": {k[len(prefix):]: v for k, v in
                               output.get("data", {}).items()}}


def compare(stored: nbformat.NotebookNode, fresh: nbformat.NotebookNode,
            *, tolerance: float = TOLERANCE) -> list[Difference]:
    """Every way ``fresh`` fails to reproduce ``stored``, cell by cell;
    an empty list when it does.

    Code cells are paired by their source, in order; a cell found in only
    one of the two (the code changed) is a difference, as is an error in
    ``fresh``. See the module docstring for how outputs are compared.
    """
    differences = []
    fresh_cells = [c for c in fresh.cells if c.cell_type == "code"]
    used = 0
    for index, cell in enumerate(c for c in stored.cells
                                 if c.cell_type == "code"):
        match = next((i for i in range(used, len(fresh_cells))
                      if fresh_cells[i].source.rstrip()
                      == cell.source.rstrip()), None)
        if match is None:
            differences.append(Difference(
                index, "its code is not in the new execution"))
            continue
        differences += _cell(index, cell, fresh_cells[match], tolerance)
        used = match + 1
    return differences


def _cell(index: int, stored: Any, fresh: Any, tolerance: float
          ) -> list[Difference]:
    tags = set(stored.metadata.get("tags", []))
    if "nbval-skip" in tags:
        return []
    errors = [o for o in fresh.outputs if o.get("output_type") == "error"]
    if errors:
        return [Difference(index, "raised " + output_text(errors[0]))]
    if tags & {executions.MEASUREMENT, executions.REFERENCE_RESULT}:
        own = stored.metadata.get(executions.KEY, {}).get("tolerance")
        allowed: float | None = tolerance if own is None else float(own)
    elif "nbval-ignore-output" in tags:
        allowed = None  # drawn at random: only the words count
    else:
        allowed = 0.0
    return [Difference(index, what) for what in
            _outputs(stored.outputs, fresh.outputs, allowed)]


def _outputs(stored: list[Any], fresh: list[Any], allowed: float | None
             ) -> list[str]:
    def is_image(output: Any) -> bool:
        return any(m.startswith("image/") for m in output.get("data", {}))

    def images(outputs: list[Any]) -> int:
        return sum(1 for o in outputs if is_image(o))

    def texts(outputs: list[Any]) -> dict[str, str]:
        found: dict[str, str] = {}
        # a figure counts, its repr ("<Figure size 640x480>") does not
        shown = [o for o in outputs if _glue_name(o) is None
                 and not is_image(o)]
        found["shown"] = "\n".join(output_text(o) for o in shown)
        for o in outputs:
            if _glue_name(o) is not None:
                found[f"glued {_glue_name(o)!r}"] = output_text(_shown(o))
        return found

    problems = []
    if images(stored) != images(fresh):
        problems.append(f"{images(stored)} figures stored, "
                        f"{images(fresh)} now")
    before, after = texts(stored), texts(fresh)
    for name in sorted(set(before) | set(after)):
        if name not in after or name not in before:
            problems.append(f"{name} is {'gone' if name in before else 'new'}")
            continue
        problems += _text(name, before[name], after[name], allowed)
    return problems


def _text(name: str, stored: str, fresh: str, allowed: float | None
          ) -> list[str]:
    words, numbers = reading(stored)
    new_words, new_numbers = reading(fresh)
    if words != new_words:
        return [f"{name}: the words changed: "
                f"{_first_change(words, new_words)}"]
    if allowed is None:
        return []
    for old, new in zip(numbers, new_numbers):
        scale = max(abs(old), abs(new))
        if scale and abs(new - old) > allowed * scale:
            how = "a number changed" if allowed == 0 else (
                f"a measured number moved by more than {allowed:.0%}")
            return [f"{name}: {how}: {old:g} stored, {new:g} now"]
    return []


def _first_change(before: str, after: str) -> str:
    """Where two texts first differ, with a few words around."""
    at = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b),
              min(len(before), len(after)))
    start = max(0, at - 30)
    return f"{before[start:at + 30]!r} stored, {after[start:at + 30]!r} now"
