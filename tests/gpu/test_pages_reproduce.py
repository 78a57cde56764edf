"""Strict check of the book on its GPU: each chapter, executed again,
reproduces the page this GPU executed before (helpers.page.reproduction:
measured numbers within their tolerance, everything else exactly).

A GPU visit has just executed the chapters: it points
``BOOK_FRESH_PAGES`` at the folder of those new pages, and each is
compared with the page stored in ``recorded/`` by the visit before. Run
alone (``make test-gpu``), each chapter is executed here first. A GPU
with no stored page of a chapter has nothing to reproduce yet: the
first execution is the one stored."""

import os
from pathlib import Path

import nbformat
import pytest

from helpers.measuring import machine
from helpers.page import executions, reproduction
from scripts import notebooks

pytestmark = pytest.mark.gpu

CHAPTERS = [p.stem for p in notebooks.chapter_paths()]


def fresh_page(chapter: str) -> nbformat.NotebookNode:
    """The chapter as executed now: from ``BOOK_FRESH_PAGES`` when a visit
    has just executed it, else executed here (outputs kept in memory)."""
    folder = os.environ.get("BOOK_FRESH_PAGES")
    if folder:
        path = Path(folder) / f"{chapter}.ipynb"
        if not path.exists():
            pytest.skip(f"this visit did not execute {chapter}")
        return nbformat.read(path, as_version=4)
    md_path = notebooks.CHAPTERS / f"{chapter}.md"
    notebook = notebooks.expected_notebook(md_path)
    notebooks.execute_notebook(notebook, md_path.parent)
    return notebook


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_chapter_reproduces_its_stored_page(chapter,
                                                record_property):
    device = machine.device_slug()
    stored = executions.reference_page(chapter, device)
    if stored is None:
        pytest.skip(f"no page of {chapter} is stored for {device}: this "
                    "execution is the first")
    fresh = fresh_page(chapter)
    record_property("stored execution", executions.execution(stored)[
        "started"])
    record_property("new execution", (executions.execution(fresh) or {})
                    .get("started"))
    differences = reproduction.compare(stored, fresh)
    assert not differences, f"{chapter} departs from its stored page:\n" \
        + "\n".join(map(str, differences))
