"""`scripts/notebooks.py sync` keeps an edit made on either side of a
chapter's pair, and the outputs of the cells it did not change."""

import os

import nbformat

from probe_chapter import probe
from scripts import notebooks

CHAPTER = probe("x = 1", "print(x)")


def _later(path, than):
    """Make ``path`` look modified a second after ``than``."""
    stamp = than.stat().st_mtime + 1
    os.utime(path, (stamp, stamp))


def _sources(path):
    notebook = nbformat.read(path, as_version=4)
    return [c.source for c in notebook.cells if c.cell_type == "code"][1:]


def test_an_edit_in_the_notebook_reaches_the_markdown(tmp_path):
    md = tmp_path / "90_probe.md"
    md.write_text(CHAPTER)
    notebooks.sync([md])
    ipynb = md.with_suffix(".ipynb")
    notebook = nbformat.read(ipynb, as_version=4)
    notebook.cells[-1].outputs = [nbformat.v4.new_output(
        "stream", text="1\n")]
    notebook.cells[-2].source = "x = 2  # edited in Colab"
    nbformat.write(notebook, ipynb)
    _later(ipynb, md)
    notebooks.sync([md])
    assert "x = 2  # edited in Colab" in md.read_text()
    assert _sources(ipynb) == ["x = 2  # edited in Colab", "print(x)"]
    # the unchanged cell keeps its output
    stored = nbformat.read(ipynb, as_version=4)
    assert stored.cells[-1].outputs[0]["text"] == "1\n"
    assert notebooks.check([md]) == 0


def test_an_edit_in_the_markdown_reaches_the_notebook(tmp_path):
    md = tmp_path / "90_probe.md"
    md.write_text(CHAPTER)
    notebooks.sync([md])
    ipynb = md.with_suffix(".ipynb")
    md.write_text(md.read_text().replace("x = 1", "x = 3"))
    _later(md, ipynb)
    notebooks.sync([md])
    assert _sources(ipynb) == ["x = 3", "print(x)"]


def test_a_notebook_newer_with_the_same_inputs_leaves_the_markdown(
        tmp_path):
    md = tmp_path / "90_probe.md"
    md.write_text(CHAPTER)
    notebooks.sync([md])
    ipynb = md.with_suffix(".ipynb")
    _later(ipynb, md)  # re-saved, say, with nothing changed
    assert notebooks.edited_side(md) == md


def test_when_both_changed_the_later_edit_wins(tmp_path):
    md = tmp_path / "90_probe.md"
    md.write_text(CHAPTER)
    notebooks.sync([md])
    ipynb = md.with_suffix(".ipynb")
    md.write_text(md.read_text().replace("x = 1", "x = 4"))
    notebook = nbformat.read(ipynb, as_version=4)
    notebook.cells[-2].source = "x = 5"
    nbformat.write(notebook, ipynb)
    _later(ipynb, md)
    notebooks.sync([md])
    assert _sources(ipynb) == ["x = 5", "print(x)"]
