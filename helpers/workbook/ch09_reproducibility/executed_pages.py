"""The Reproducibility page's table of who executed each page.

`executions_table` is made when the book is built (the
``{executed-pages}`` directive of ``_ext/executed_pages.py``), so it
always describes the book being built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.measuring import gpu_state
from helpers.page.executions import day, shown, short_name


def executions_table(chapters_dir: Path) -> str:
    """A Markdown table of every chapter's shown execution: the machine,
    the day, the seconds it took, and the GPU's SM clock and temperature
    at its start and end, then a sentence naming the chapters shown from
    this machine because their code changed after the reference GPU ran
    them."""
    rows = [shown(path) for path in sorted(chapters_dir.glob(
        "[0-9][0-9]_*.ipynb"))]
    # Short cells, so that seven columns fit the text column: the page by
    # its chapter number and name, the day as a date.
    lines = ["| page | on | day | s | SM MHz | °C | clock held |",
             "| --- | --- | --- | ---: | --- | --- | --- |"]
    for row in rows:
        run = row["execution"]
        page = chapter_label(row["chapter"])
        if run is None:
            lines.append(f"| {page} | — | — | — | — | — | — |")
            continue
        start, end = run.get("gpu_start"), run.get("gpu_end")
        lines.append(
            f"| {page} | {short_name(run)} | "
            f"{str(run['executor']['date'])[:10]} | {run['seconds']:.0f} | "
            f"{_span(start, end, 'sm_clock_mhz')} | "
            f"{_span(start, end, 'temperature_c')} | "
            f"{_held(start, end)} |")
    set_aside = [f"{row['title']} ({day(row['replaces']['started'])})"
                 for row in rows if row["replaces"] is not None]
    if set_aside:
        lines += ["", "Shown from this machine because their code changed "
                  "after the reference GPU executed them: "
                  + "; ".join(set_aside) + "."]
    return "\n".join(lines)


def chapter_label(stem: str) -> str:
    """A chapter's number and name from its file's stem.

    Example:
        >>> chapter_label("10_field_guide")
        '10 field guide'
    """
    number, _, name = stem.partition("_")
    return f"{int(number)} {name.replace('_', ' ')}" if number.isdigit() \
        else stem.replace("_", " ")


def _span(start: dict[str, Any] | None, end: dict[str, Any] | None,
          key: str) -> str:
    """``'1980 → 1755'``: a GPU reading at the start and the end."""
    if start is None or end is None:
        return "—"
    return f"{start[key]} → {end[key]}"


def _held(start: dict[str, Any] | None, end: dict[str, Any] | None) -> str:
    """Whether power or heat held the clock down at the start or the end."""
    if start is None or end is None:
        return "—"
    held = [r for state in (start, end) for r in state["reasons"]
            if r in gpu_state.THROTTLING]
    return ", ".join(dict.fromkeys(held)) or "no"
