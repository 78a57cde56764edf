"""Build each chapter from the reference GPU's execution of it.

A chapter's ``.ipynb`` holds this machine's execution; the reference
GPU's lies in ``recorded/<device>/<chapter>.ipynb``. Before MyST-NB reads
a chapter, this extension hands it `helpers.page.executions.page`: the
reference GPU's outputs under today's text when the code cells are the
ones that ran there, and this machine's execution, saying so at the top,
when they are not. Sphinx rebuilds a chapter when its kept execution
changes (a dependency noted here).
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from helpers.page import executions


def show_reference_execution(app, docname: str, source: list[str]) -> None:
    """Sphinx's ``source-read``: replace a chapter notebook's text with
    the page `executions.page` makes of it."""
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb" or path.parent.name != "chapters":
        return
    chapter = path.stem
    reference_path = executions.page_path(chapter)
    app.env.note_dependency(str(reference_path))
    notebook = nbformat.reads(source[0], as_version=4)
    shown = executions.page(notebook, executions.reference_page(chapter),
                            recorded_on=executions.quoted_provenance(
                                notebook))
    source[0] = nbformat.writes(shown)


def setup(app):
    app.connect("source-read", show_reference_execution)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
