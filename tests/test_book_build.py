"""The book builds from the stored outputs, with warnings as errors, and
reads finished in a real browser (headless Chromium, scripts/browse_book.py):
no output wider than the column, no broken image, no unrendered MyST, no
solution open, no blank where a recording belongs."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import browse_book

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built_book(tmp_path_factory):
    """The book built once for this module, with warnings as errors."""
    out = tmp_path_factory.mktemp("book")
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    command = [str(jupyter_book) if jupyter_book.exists() else
               shutil.which("jupyter-book"), "build", str(ROOT),
               "--path-output", str(out), "--warningiserror", "--nitpick",
               "--keep-going"]
    result = subprocess.run(command, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr
    return out / "_build" / "html"


def test_book_builds_without_warnings(built_book):
    html = built_book
    measuring = (html / "chapters" / "01_measuring.html").read_text()
    # the prose carries the glued numbers, and the Colab button is there
    assert "GB/s" in measuring and "colab.research.google.com" in measuring
    # the line under the title names the page's executor, once: the
    # H100's execution where it ran the chapter's code, else this
    # machine's, naming the H100 whose recordings the text quotes
    kept = (ROOT / "recorded" / "nvidia-h100-80gb-hbm3" /
            "01_measuring.ipynb").exists()
    assert ("Executed on an NVIDIA H100 80GB HBM3" if kept else
            "are the book’s reference GPU’s, an NVIDIA H100 80GB HBM3"
            ) in measuring
    assert measuring.count("NVIDIA H100 80GB HBM3") == 1
    # every widget is drawn from its static view: no dead slider, no
    # empty box waiting for a widget manager that has no kernel to talk to
    for page in (html / "chapters").glob("*.html"):
        assert "widget-view+json" not in page.read_text(), page.name
    fusion = (html / "chapters" / "02_fusion.html").read_text()
    assert "(each a control in Jupyter or Colab)" in fusion


@pytest.mark.usefixtures("needs_browser")
def test_every_page_reads_finished_in_a_browser(built_book):
    found = browse_book.problems(built_book)
    assert not found, "\n".join(map(str, found))


def test_every_chapter_and_the_references_are_pages(built_book):
    names = {str(p.relative_to(built_book))
             for p in browse_book.pages(built_book)}
    assert "references.html" in names
    assert {f"chapters/{p.stem}.html"
            for p in (ROOT / "chapters").glob("*.ipynb")} <= names


def test_citations_link_to_the_references(built_book):
    fusion = (built_book / "chapters" / "02_fusion.html").read_text()
    references = (built_book / "references.html").read_text()
    assert "references.html#id" in fusion  # a {cite} became a link
    assert "https://github.com/jax-ml/jax/issues/7024" in references
    assert "Noether" in references and "Holm" in references


def test_the_book_numbers_the_exercises_the_workbook_grades(built_book):
    """sphinx-exercise numbers each exercise block; the number a reader sees
    is the one the check's report and the workshop dashboard show."""
    import re

    from helpers.workbook.ch08_workshop import workshop

    for exercise in workshop.exercises():
        page = (built_book / "chapters" / f"{exercise.chapter}.html")
        block = re.search(rf'id="{exercise.label}">\s*<p class="admonition-'
                          r'title">(.*?)</p>', page.read_text(), re.DOTALL)
        assert block, f"no exercise block {exercise.label} in {page.name}"
        caption = re.sub(r"<[^>]+>", "", block[1])
        if exercise.chapter.startswith("00"):  # an unnumbered chapter
            assert caption.startswith("Exercise ("), caption
        else:
            assert caption.startswith(f"Exercise {exercise.number} "), \
                caption
