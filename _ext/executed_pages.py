"""Build each chapter from the reference GPU's execution of it.

A chapter's ``.ipynb`` holds this machine's execution; the reference
GPU's lies in ``recorded/<device>/<chapter>.ipynb``. Before MyST-NB reads
a chapter, this extension hands it `helpers.page.reference_pages.page`:
the reference GPU's outputs under today's text when the code cells are
the ones that ran there, and this machine's execution, saying so at the
top, when they are not. Sphinx rebuilds a chapter when its kept
execution changes (a dependency noted here). The ``{executed-pages}``
directive tables which execution each page shows.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from helpers.page import executions, reference_pages
from helpers.workbook.ch09_reproducibility import executed_pages


def show_reference_execution(app, docname: str, source: list[str]) -> None:
    """Sphinx's ``source-read``: replace a chapter notebook's text with
    the page `reference_pages.page` makes of it."""
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb" or path.parent.name != "chapters":
        return
    chapter = path.stem
    app.env.note_dependency(str(executions.page_path(chapter)))
    notebook = nbformat.reads(source[0], as_version=4)
    shown = reference_pages.page(
        notebook, executions.reference_page(chapter),
        recorded_on=executions.quoted_provenance(notebook))
    source[0] = nbformat.writes(shown)


class ExecutedPages(SphinxDirective):
    """``{executed-pages}``: a table of the execution each chapter page
    shows (`executed_pages.executions_table`), made at build time, so
    that it always describes the book being built."""

    def run(self) -> list[nodes.Node]:
        chapters = Path(self.env.srcdir) / "chapters"
        for path in chapters.glob("[0-9][0-9]_*.ipynb"):
            self.env.note_dependency(str(path))
            self.env.note_dependency(str(executions.page_path(path.stem)))
        container = nodes.container(classes=["executed-pages"])
        self.state.nested_parse(StringList(
            executed_pages.executions_table(chapters).splitlines()),
            self.content_offset, container)
        return [container]


def setup(app):
    app.connect("source-read", show_reference_execution)
    app.add_directive("executed-pages", ExecutedPages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
