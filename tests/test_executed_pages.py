"""The book shows the reference GPU's execution of a chapter: a small book
built with the book's own extension (_ext/executed_pages.py) and a fixture
"H100-executed" chapter, before and after an edit to its prose and to its
code."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from helpers.page import executions

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

CONFIG = """title: A fixture book
execute:
  execute_notebooks: "off"
only_build_toc_files: true
sphinx:
  local_extensions:
    executed_pages: _ext
"""
TOC = """format: jb-book
root: intro
chapters:
  - file: chapters/01_copying
"""
PROSE = "The copy moved {glue:text}`rate` GB/s."
H100 = {"device": "NVIDIA H100 80GB HBM3", "backend": "gpu", "jax": "0.11.2",
        "date": "2026-12-01T09:30:00+00:00"}
CPU = {"device": "cpu", "backend": "cpu", "jax": "0.10.2",
       "machine": "Linux x86_64", "date": "2026-11-28T10:00:00+00:00"}


def executed(rate, executor, *, prose=PROSE, code="rate = copy_rate()"):
    """The chapter as ``executor`` ran it: a printed rate and the same
    rate glued for the prose, as `helpers.page.prose.glue` stores it."""
    glue = nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain":
                              str(rate)},
        metadata={"scrapbook": {"name": "rate", "mime_prefix":
                                "application/papermill.record/"}})
    shown = nbformat.v4.new_output("stream", name="stdout",
                                   text=f"measured {rate} GB/s\n")
    notebook = new_notebook(cells=[
        new_markdown_cell("# Copying"),
        new_code_cell(code, outputs=[shown, glue],
                      metadata={"tags": ["measurement"]}),
        new_markdown_cell(prose)])
    notebook.metadata["kernelspec"] = {"name": "python3",
                                       "display_name": "Python 3",
                                       "language": "python"}
    executions.stamp(notebook, executor=executor, started=executor["date"],
                     seconds=3.0, gpu_start=None, gpu_end=None)
    return notebook


@pytest.fixture
def book(tmp_path):
    """A book whose one chapter this CPU executed, and a recorded folder
    holding the H100's execution of the same code."""
    (tmp_path / "_config.yml").write_text(CONFIG)
    (tmp_path / "_toc.yml").write_text(TOC)
    (tmp_path / "intro.md").write_text("# Intro\n")
    shutil.copytree(ROOT / "_ext", tmp_path / "_ext")
    (tmp_path / "chapters").mkdir()
    nbformat.write(executed(48.5, CPU), tmp_path / "chapters" /
                   "01_copying.ipynb")
    page = tmp_path / "recorded" / "nvidia-h100-80gb-hbm3" / \
        "01_copying.ipynb"
    page.parent.mkdir(parents=True)
    nbformat.write(executed(3005, H100), page)
    return tmp_path


def build(book):
    """The chapter's HTML, built as `make book` builds (warnings as
    errors)."""
    env = {**os.environ, "BOOK_RECORDED_DIR": str(book / "recorded")}
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build",
               str(book), "--warningiserror", "--keep-going"]
    done = subprocess.run(command, capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return (book / "_build" / "html" / "chapters" /
            "01_copying.html").read_text()


def edit(book, **change):
    path = book / "chapters" / "01_copying.ipynb"
    nbformat.write(executed(48.5, CPU, **change), path)


def test_the_gpu_execution_is_shown_and_survives_a_prose_edit(book):
    html = build(book)
    assert "Executed on an NVIDIA H100 80GB HBM3 with jax 0.11.2" in html
    assert "measured 3005 GB/s" in html and "3005" in html.split(
        "The copy moved")[1][:200]
    assert "48.5" not in html
    edit(book, prose="Edited: the copy moved {glue:text}`rate` GB/s.")
    html = build(book)
    assert "Edited: the copy moved" in html
    assert "measured 3005 GB/s" in html and "48.5" not in html


def test_a_code_edit_shows_this_machine_folded(book):
    edit(book, code="rate = copy_rate(repeat=50)")
    html = build(book)
    assert "page-executor fallback" in html
    assert "Executed on a CPU (Linux x86_64) with jax 0.10.2" in html
    assert "executed it on 1 December 2026" in html
    assert "3005" not in html  # the GPU never ran the edited cell
    # this machine's output sits in a closed fold with its label
    fold = html.split("Show the output on this machine (CPU)")[1]
    assert "measured 48.5 GB/s" in fold.split("</details>")[0]


def test_the_extension_leaves_other_documents_alone(book):
    build(book)
    assert "Executed" not in (book / "_build" / "html" /
                              "intro.html").read_text()
    assert json.loads((book / "recorded" / "nvidia-h100-80gb-hbm3" /
                       "01_copying.ipynb").read_text())  # untouched
