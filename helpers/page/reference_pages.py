"""What the book shows of a chapter: the reference GPU's execution of it.

The build (``_ext/executed_pages.py``) hands each chapter to `page`: the
reference GPU's kept execution (`helpers.page.executions.reference_page`)
whenever the chapter's code cells are the ones that ran there, with
today's text (jupyter-cache's rule: an edit to the prose needs no new
execution, an edit to the code does). Otherwise the page is this
machine's execution, saying so in one line under its title, and each
cell tagged ``measurement`` (its output measures the machine that runs
it) shows the reference GPU's output where that cell ran there
unchanged, with this machine's output folded behind the reference's
results.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import nbformat

from helpers.page.executions import (
    EXECUTOR_CLASS,
    KEY,
    MEASUREMENT,
    REFERENCE_RESULT,
    execution,
    executed_by,
    fallback_line,
    same_code,
    short_name,
)


def page(chapter: nbformat.NotebookNode,
         reference: nbformat.NotebookNode | None,
         *, recorded_on: dict[str, Any] | None = None
         ) -> nbformat.NotebookNode:
    """The page the book shows for a chapter.

    Args:
        chapter: the chapter as stored, executed on this machine.
        reference: the reference GPU's execution of it (`reference_page`),
            or None where it has none.
        recorded_on: for a chapter without a reference execution, the
            provenance of the reference GPU's recordings the prose quotes
            (None: the chapter quotes none).

    Returns:
        With ``reference`` running the same code: the chapter's cells with
        the reference's outputs. Otherwise: the chapter as executed here,
        its ``measurement`` cells' outputs folded and led by the
        reference's where the same cell ran there. Either way, the line
        naming the executor opens the page.
    """
    if reference is not None and same_code(chapter, reference):
        shown = _with_outputs_of(chapter, reference)
        line = executed_by(execution(reference))
        return _opened_with(shown, line, fallback=False)
    shown = _folded(chapter, reference)
    line = fallback_line(execution(chapter),
                         execution(reference) if reference else None,
                         recorded_on)
    return _opened_with(shown, line, fallback=True)


def _with_outputs_of(chapter: nbformat.NotebookNode,
                     reference: nbformat.NotebookNode
                     ) -> nbformat.NotebookNode:
    shown = copy.deepcopy(chapter)
    ran = [c for c in reference.cells if c.cell_type == "code"]
    mine = [c for c in shown.cells if c.cell_type == "code"]
    for cell, there in zip(mine, ran):
        cell.outputs = copy.deepcopy(there.outputs)
        cell.execution_count = there.get("execution_count")
    shown.metadata[KEY] = copy.deepcopy(reference.metadata[KEY])
    return shown


def _folded(chapter: nbformat.NotebookNode,
            reference: nbformat.NotebookNode | None
            ) -> nbformat.NotebookNode:
    """This machine's execution, each measurement's output folded under
    the reference GPU's: its output of the same cell where it has one,
    and the results that follow the cell (see `_leads`)."""
    shown = copy.deepcopy(chapter)
    there = _outputs_by_source(reference) if reference else {}
    here = short_name(execution(chapter))
    cells: list[Any] = []
    waiting: list[Any] = []  # folds placed after the results that follow
    for cell in _glue_apart(shown.cells):
        tags = cell.metadata.get("tags", [])
        if waiting and not _leads(cell):
            cells += waiting
            waiting = []
        if cell.cell_type != "code" or MEASUREMENT not in tags \
                or "remove-cell" in tags or not cell.outputs:
            cells.append(cell)
            continue
        led = copy.deepcopy(cell)
        led.outputs = _without_glue(there.get(cell.source.rstrip(), []))
        folded = copy.deepcopy(cell)
        folded.metadata["tags"] = [t for t in tags if t not in (
            "hide-input", "hide-output", "hide-cell")] + [
            "remove-input", "hide-output"]
        # the fold's labels beside the cell's own settings (a figure's alt)
        folded.metadata["mystnb"] = {
            **folded.metadata.get("mystnb", {}),
            "code_prompt_show": f"Show the output on this machine ({here})",
            "code_prompt_hide": f"Hide the output on this machine ({here})"}
        # the code, then the reference's output (where the same cell ran
        # there) and its results, then this machine's, folded
        cells.append(led)
        waiting.append(folded)
    shown.cells = cells + waiting
    return shown


_GLUED_BLOCK = re.compile(r"\A\s*```\{glue:md\}[^`]*```\s*")


def _glue_apart(cells: list[Any]) -> list[Any]:
    """``cells`` with each markdown cell that opens with glued
    paragraphs (``{glue:md}`` blocks) split in two: the glued blocks,
    then the prose after them."""
    apart = []
    for cell in cells:
        glued = ""
        rest = cell.source if cell.cell_type == "markdown" else ""
        while (found := _GLUED_BLOCK.match(rest)):
            glued, rest = glued + found.group(0), rest[found.end():]
        if not glued or not rest.strip():
            apart.append(cell)
            continue
        first = copy.deepcopy(cell)
        first.source = glued.strip()
        second = nbformat.v4.new_markdown_cell(rest.strip())
        apart += [first, second]
    return apart


def _leads(cell: Any) -> bool:
    """Whether ``cell`` belongs to the reference GPU's results a folded
    measurement waits behind: a removed cell, a cell that shows the
    reference's result (``reference-result``), or a paragraph that is
    only glued from it (``{glue:md}`` blocks)."""
    tags = cell.metadata.get("tags", [])
    if cell.cell_type == "code":
        return "remove-cell" in tags or REFERENCE_RESULT in tags
    blocks = [b for b in cell.source.split("```") if b.strip()]
    return bool(blocks) and all(b.startswith("{glue:md}") for b in blocks)


def _outputs_by_source(notebook: nbformat.NotebookNode
                       ) -> dict[str, list[Any]]:
    """Each code cell's outputs by its source (the first cell with a
    source wins: a repeated cell ran the same code)."""
    found: dict[str, list[Any]] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            found.setdefault(cell.source.rstrip(), cell.outputs)
    return found


def _without_glue(outputs: list[Any]) -> list[Any]:
    """``outputs`` less the values glued for the prose (MyST-NB's
    ``scrapbook`` outputs): the page's prose reads this machine's
    execution's glue, and a name glued twice is an error."""
    return [copy.deepcopy(o) for o in outputs
            if "scrapbook" not in o.get("metadata", {})]


def _opened_with(notebook: nbformat.NotebookNode, line: str, *,
                 fallback: bool) -> nbformat.NotebookNode:
    """``notebook`` with ``line`` as a block right under its title."""
    classes = EXECUTOR_CLASS + (" fallback" if fallback else "")
    block = f":::{{container}} {classes}\n{line}\n:::"
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.split("\n")
        for i, text in enumerate(lines):
            if text.startswith("# "):
                lines[i + 1:i + 1] = ["", block]
                cell.source = "\n".join(lines)
                return notebook
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell(block))
    return notebook
