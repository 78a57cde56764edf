"""Pages that read the book's own files run from any working folder.

Colab runs a notebook from ``/content``, where the setup cell clones the
book into ``/content/jax-gpu-book``: a page that opened
``chapters/...`` or ``.`` relative to its working folder worked in a
checkout and failed there. These pages read the chapters' notebooks, the
recordings or the test runs; each is executed from an empty folder, as
Colab would, and must run to the end.
"""

import os

import jupytext
import pytest

from helpers.measuring import machine

pytestmark = pytest.mark.slow

CHAPTERS = os.path.join(machine.repo_root(), "chapters")
READS_THE_BOOK = ("08_workshop", "09_reproducibility", "11_facilitators")


@pytest.mark.parametrize("name", READS_THE_BOOK)
def test_the_page_runs_from_a_folder_outside_the_book(name, tmp_path):
    from nbclient import NotebookClient

    notebook = jupytext.read(os.path.join(CHAPTERS, f"{name}.md"))
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}
                   ).execute()  # raises CellExecutionError on a failure
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", [])
              if output.get("output_type") == "error"]
    assert not errors
    assert not list(tmp_path.iterdir()), "the page wrote into its folder"
