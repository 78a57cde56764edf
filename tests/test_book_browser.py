"""The checker that reads the built book in headless Chromium
(scripts/browse_book.py), on small pages written here with one fault each,
so a checker that sees nothing fails. tests/test_book_build.py runs it on
the book itself.
"""

from pathlib import Path

import pytest

from scripts import browse_book

pytestmark = pytest.mark.slow

# A page shaped like the book's: an article column and cell outputs.
PAGE = """<!doctype html><html><body style="margin:0">
<main><article class="bd-article" style="width:600px">
<p>Some prose.</p>
<div class="cell_output">{output}</div>
</article></main></body></html>"""

# A one-pixel PNG, so an image loads without a file beside the page.
PIXEL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAf"
         "FcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

FAULTS = {
    "wide": ("<pre style='white-space:pre;overflow:auto'>" + "x" * 400
             + "</pre>", "output wider than the column"),
    "image": ("<img src='missing.png' alt='a plot'>", "image not loaded"),
    "no_alt": (f"<img src='{PIXEL}'>", "figure without alt text"),
    "many_columns": ("<table><tr>" + "<td>1</td>" * 8 + "</tr></table>",
                     "table wider than seven columns"),
    "broken_word": ("<table><tr><td style='width:60px;overflow-wrap:"
                    "anywhere'>memorybound</td></tr></table>",
                    "word broken inside a table cell"),
    "tall_cell": ("<table><tr><td style='width:60px'>one two three four "
                  "five six seven eight nine ten</td></tr></table>",
                  "table cell over three lines"),
    "role": ("<p>It took {glue:text}`k25_ms` ms.</p>", "literal MyST syntax"),
    "blank": ("<p>On the GPU it took (no recording yet) ms.</p>",
              "missing-recording blank"),
    "open_solution": ("<details open><summary>Solution of Exercise 1.1"
                      "</summary><pre>def solution(): ...</pre></details>",
                      "solution visible without a click"),
    "raw_formula": ("<p>A product costs \\(2n^3\\) operations.</p>",
                    "formula not typeset"),
    "wide_formula": ("<div class='math'><span class='math' style='display:"
                     "inline-block;width:200px;overflow:hidden'><span style="
                     "'display:inline-block;width:900px'>c = a + b</span>"
                     "</span><script type='math/tex; mode=display'>c = a + b"
                     "</script></div>", "formula wider than the column"),
    "wide_contents": ("<div class='bd-sidebar-secondary' style='width:120px;"
                      "overflow-x:auto'><code style='white-space:nowrap'>"
                      "helpers.measuring.stats.compare</code></div>",
                      "contents sidebar scrolls sideways"),
    "made_up_label": ("<p>As the docs say [<a href='references.html#id1'>"
                      "TheJauthorsb</a>].</p>",
                      "citation label without author and year"),
    "device_name": ("<p>On the NVIDIA H100 80GB HBM3 it took 3 ms.</p>",
                    "full device name in the text"),
}


def _book(folder: Path, outputs: dict[str, str]) -> Path:
    (folder / "index.html").write_text(PAGE.format(output="<p>home</p>"))
    for name, output in outputs.items():
        (folder / f"{name}.html").write_text(PAGE.format(output=output))
    return folder


@pytest.mark.usefixtures("needs_browser")
def test_the_checker_finds_each_fault_on_its_page(tmp_path):
    book = _book(tmp_path, {name: html for name, (html, _) in FAULTS.items()})
    found = browse_book.problems(book)
    by_page = {Path(p.page).stem: p.kind for p in found}
    assert by_page == {name: kind for name, (_, kind) in FAULTS.items()}


@pytest.mark.usefixtures("needs_browser")
def test_the_checker_passes_a_clean_page_and_a_closed_solution(tmp_path):
    book = _book(tmp_path, {
        "clean": "<pre>short line</pre><table><tr><td>1.0</td></tr></table>",
        "scrolled": "<table style='display:block;overflow-x:auto'><tr>"
                    + "<td>a long column heading</td>" * 7 + "</tr></table>",
        "figure": f"<img src='{PIXEL}' alt='a roofline'>",
        "closed": "<details><summary>Solution of Exercise 1.1</summary>"
                  "<pre>def solution(): ...</pre></details>",
        "explained": "<p>Without a recording the cell says “no recording "
                     "yet”.</p>",
        "cited": "<p>As the docs say [<a href='references.html#id1'>"
                 "The JAX authors 2026a</a>].</p>",
        "named_once": "<div class='page-executor'><p>Executed on an NVIDIA "
                      "H100 80GB HBM3 with jax 0.11.2.</p></div><p>On the "
                      "H100 it took 3 ms; Pallas targets NVIDIA GPUs.</p>"})
    assert browse_book.problems(book) == []


@pytest.mark.usefixtures("needs_browser")
def test_a_page_without_a_text_column_is_reported_not_a_crash(
        tmp_path, monkeypatch):
    monkeypatch.setattr(browse_book, "PAGE_TIMEOUT_S", 1)
    book = _book(tmp_path, {"clean": "<p>fine</p>"})
    (book / "bare.html").write_text("<html><body><p>no column</p></body>"
                                    "</html>")
    [found] = browse_book.problems(book)
    assert (found.page, found.kind) == ("bare.html",
                                        "page without a text column")


def test_a_folder_without_a_book_gets_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="make book"):
        browse_book.pages(tmp_path)


@pytest.mark.usefixtures("needs_browser")
def test_screenshots_are_written_for_every_page(tmp_path):
    (tmp_path / "html").mkdir()
    book = _book(tmp_path / "html", {"one": "<p>one</p>"})
    shots = browse_book.screenshots(book, tmp_path / "shots")
    assert sorted(p.name for p in shots) == ["index.png", "one.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots)
