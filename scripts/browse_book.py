"""Read the built book in a real browser, as a reader would.

Headless Chromium or Chrome (found by `scripts.chromium`, driven by
Selenium) opens every page of ``_build/html`` at a laptop's width and
reports what a reader would trip over:

- an output block wider than the text column (cut off at the page edge),
  and a table that hides more than a few pixels of its columns behind a
  sideways scroll;
- a word a table cell breaks over two lines, and a table cell over three
  lines (at 1280 px);
- an image that did not load;
- literal MyST syntax that did not render (``{glue:text}`...` ``,
  ``{cite}`...` ``, a stray ``{glue`` role);
- a solution that can be read without opening its fold;
- a sentence with a blank where a GPU recording should be;
- a formula MathJax did not typeset (raw ``\\(...\\)``: the book serves
  MathJax itself, so this means it failed to load);
- a citation label made up by a label style (``[TheJauthorsb]``) instead
  of an author and year (``[The JAX authors 2026a]``);
- a GPU's full name (``NVIDIA H100 80GB HBM3``) in the prose: a page names
  its executor once, in the line under its title, and says "the H100"
  after that.

``make screenshots`` writes a full-page PNG of every page for authors
(``python scripts/browse_book.py screenshots _build/html shots/``); the
book's tests run ``problems`` on a fresh build and fail on any.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

# The repository, importable however the script is started (`python
# scripts/browse_book.py` has only scripts/ on its path).
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from helpers.page.prose import MISSING  # noqa: E402
from scripts import chromium  # noqa: E402

if TYPE_CHECKING:
    # Imported at run time only inside browser(), which says how to
    # install Selenium where it is missing.
    from selenium.webdriver.remote.webdriver import WebDriver

# A laptop screen: the width the column, the outputs and the figures are
# checked at.
WINDOW = (1280, 900)
# Tall pages are cut here in screenshots (Chromium's own limit is 16384
# pixels per side of a captured surface).
MAX_SCREENSHOT_HEIGHT = 16000
# Chromium as root in a closed network: no sandbox (needs user
# namespaces), and none of the background connections that are refused here.
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-quic", "--no-first-run",
                 "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage",
                 f"--window-size={WINDOW[0]},{WINDOW[1]}")

# The placeholder `helpers.page.prose.glue_text` writes where a recording is
# missing (and chapter 2's variant of it); the book's explanations of it
# quote it without parentheses.
MISSING_RECORDING = re.compile(re.escape(MISSING) + r"|\(not recorded yet\)")
# A formula left as TeX source: MathJax did not run.
RAW_FORMULA = re.compile(r"\\\(|\\\[")
# What a citation label reads: an author (or authors) and a year, with a
# letter where two would read the same.
AUTHOR_YEAR = re.compile(r".+ (\d{4}|n\.d\.)[a-z]?")
# MyST roles left as text: the build did not render them.
LITERAL_ROLE = re.compile(r"\{(glue|glue:\w+|cite|cite:\w+|ref|numref|doc|"
                          r"eq|term|download)\}`")


@dataclasses.dataclass(frozen=True)
class Problem:
    """One thing a reader would trip over on one page."""

    page: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.page}: {self.kind}: {self.detail}"


# Runs in the page: every measurement a reader's eye makes, as JSON.
# The page's text column: the book theme's article, or any page's <main>.
COLUMN = "article.bd-article, main"
# How long a page may take to show its column (a loaded machine, as in
# `make test`'s parallel run, can be slow to lay a page out).
PAGE_TIMEOUT_S = 30

_MEASURE_PAGE = r"""
const column = document.querySelector('article.bd-article')
             || document.querySelector('main');
if (!column) return null;
const right = column.getBoundingClientRect().right;
const found = [];
// checkVisibility sees inside a closed <details>, whose content keeps
// its boxes in Chromium but is never painted.
const shown = el => el.checkVisibility({visibilityProperty: true,
                                        opacityProperty: true});
const outputs = 'div.cell_output pre, div.cell_output table, '
              + 'div.cell_output img, div.cell_output div.output';
for (const el of document.querySelectorAll(outputs)) {
  if (!shown(el)) continue;
  const box = el.getBoundingClientRect();
  // a table a reader can scroll sideways is not cut off (the book's CSS
  // lets wide tables scroll; everything else wraps at the column)
  const scrolls = el.tagName === 'TABLE' && ['auto', 'scroll'].includes(
    getComputedStyle(el).overflowX);
  const overflow = scrolls ? 0 : el.scrollWidth - el.clientWidth;
  if (overflow > 1 || box.right > right + 1) {
    found.push(['output wider than the column',
      `${el.tagName.toLowerCase()} ${Math.round(Math.max(box.right - right,
        overflow))} px too wide: ` + (el.innerText || el.src || '')
        .trim().slice(0, 70)]);
  }
}
// A word a table cell breaks over two lines ("memor y", "fa il").
for (const cell of document.querySelectorAll(
    'div.cell_output td, div.cell_output th')) {
  if (!shown(cell)) continue;
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    // a <pre> (a folded traceback) wraps anywhere, as outputs do
    if (node.parentElement.closest('pre')) continue;
    // a line may break after a hyphen, a slash, a comma or a closing
    // bracket (a shape and its layout, f32[1000,1000]{1,0}), never inside
    // a word
    for (const word of node.textContent.matchAll(
        /[^\s\-\/,\]]+[\-\/,\]]?/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()]
        .filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (lines.size > 1) {
        found.push(['word broken inside a table cell', word[0]]);
      }
    }
  }
}
// A table cell over three lines: the table is crushed into the column
// (shorten its words, move long text out of the table, or split it).
for (const cell of document.querySelectorAll(
    'article table td, article table th')) {
  if (!shown(cell) || cell.closest('pre')) continue;
  const range = document.createRange();
  range.selectNodeContents(cell);
  const lines = new Set([...range.getClientRects()]
    .filter(r => r.width > 0 && r.height > 0).map(r => Math.round(r.top)));
  if (lines.size > 3) {
    found.push(['table cell over three lines', `${lines.size} lines: `
      + cell.innerText.trim().slice(0, 60)]);
  }
}
// A table of more than about six columns does not fit the text width.
for (const table of document.querySelectorAll('div.cell_output table')) {
  if (!shown(table)) continue;
  const widest = Math.max(0, ...[...table.rows].map(r => r.cells.length));
  if (widest > 7) {
    found.push(['table wider than seven columns', `${widest} columns: `
      + table.innerText.trim().slice(0, 60)]);
  }
}
// A table that fits only by scrolling hides its last columns from a
// reader who does not scroll, and shows a scrollbar under it.
for (const table of document.querySelectorAll('div.cell_output table')) {
  if (!shown(table)) continue;
  const hidden = table.scrollWidth - table.clientWidth;
  if (hidden > 1) {
    found.push(['table that scrolls to show its columns',
      `${hidden} px hidden: ` + table.innerText.trim().slice(0, 60)]);
  }
}
// A displayed formula wider than the column: MathJax clips it (its
// span.math hides what overflows), so the end of the line is lost.
for (const math of document.querySelectorAll('div.math span.math')) {
  if (!shown(math)) continue;
  const hidden = math.scrollWidth - math.getBoundingClientRect().width;
  if (hidden > 1) {
    // its TeX source: MathJax's rendered text holds characters that do
    // not survive the trip back to Python
    const tex = math.closest('div.math').querySelector('script');
    found.push(['formula wider than the column', `${Math.round(hidden)} px `
      + 'cut off: ' + (tex ? tex.textContent : '').trim().slice(0, 60)]);
  }
}
// The page's contents beside the text: an entry wider than the sidebar
// makes it scroll sideways and cuts the entries' ends off.
for (const side of document.querySelectorAll('.bd-sidebar-secondary')) {
  const hidden = side.scrollWidth - side.clientWidth;
  if (shown(side) && hidden > 1) {
    found.push(['contents sidebar scrolls sideways',
      `${hidden} px hidden: ` + side.innerText.trim().slice(0, 60)]);
  }
}
// A figure without alt text says nothing to a screen reader.
for (const img of document.querySelectorAll('div.cell_output img')) {
  if (!(img.getAttribute('alt') || '').trim()) {
    found.push(['figure without alt text', img.getAttribute('src') || '']);
  }
}
for (const img of document.images) {
  if (!img.complete || img.naturalWidth === 0) {
    found.push(['image not loaded', img.getAttribute('src') || '(no src)']);
  }
}
for (const fold of document.querySelectorAll('details')) {
  const summary = fold.querySelector('summary');
  if (!summary || !/solution/i.test(summary.innerText)) continue;
  const inside = [...fold.children].filter(c => c !== summary);
  if (fold.open || inside.some(shown)) {
    found.push(['solution visible without a click',
                summary.innerText.trim().slice(0, 70)]);
  }
}
// A GPU's full name in the prose (paragraphs, list items, headings and
// captions, the glued sentences among them), outside the line under the
// title that names the page's executor.
const prose = 'p, li, dt, dd, figcaption, caption, h1, h2, h3, h4, h5, h6';
for (const el of document.querySelectorAll(prose)) {
  // the line naming the executor, and the titles of cited sources
  if (el.closest('div.page-executor, div.citation')) continue;
  if ([...el.children].some(child => child.matches(prose))) continue;
  const named = el.innerText.match(/\bNVIDIA [A-Z]+\d+[^.,;:()]*/);
  if (named) {
    found.push(['full device name in the text',
                named[0].trim() + ': ' + el.innerText.trim().slice(0, 70)]);
  }
}
// Citation labels, in the text and on the References page.
const labels = [...document.querySelectorAll(
    'a[href*="references.html#"], div.citation span.label')]
  .map(el => el.innerText.replace(/[\[\]]/g, '').trim());
return {found: found, text: column.innerText, labels: labels};
"""


@contextlib.contextmanager
def browser() -> Iterator[WebDriver]:
    """A headless Chromium under Selenium, closed on exit.

    Raises:
        chromium.Missing: no browser or driver here (the message says
            how to install them).
    """
    binary, driver_path = chromium.find()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        raise RuntimeError("Selenium is missing: `pip install -e '.[dev]'` "
                           "installs it.") from error
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in CHROMIUM_ARGS:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def pages(html_dir: Path) -> list[Path]:
    """The book's own pages: what the table of contents leads to."""
    html_dir = Path(html_dir).resolve()
    if not (html_dir / "index.html").exists():
        raise FileNotFoundError(f"{html_dir} holds no built book (no "
                                "index.html): run `make book` first.")
    skipped = {"genindex.html", "search.html", "py-modindex.html"}
    return sorted(p for p in html_dir.rglob("*.html")
                  if p.name not in skipped
                  and not any(part.startswith("_") for part in
                              p.relative_to(html_dir).parts))


def _text_problems(page: str, text: str,
                   labels: Sequence[str] = ()) -> list[Problem]:
    found = [Problem(page, "citation label without author and year", label)
             for label in labels if not AUTHOR_YEAR.fullmatch(label)]
    for match in MISSING_RECORDING.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        line = text[start:text.find("\n", match.end())].strip()
        found.append(Problem(page, "missing-recording blank", line[:120]))
    for match in LITERAL_ROLE.finditer(text):
        context = text[match.start():match.start() + 60].replace("\n", " ")
        found.append(Problem(page, "literal MyST syntax", context))
    for match in RAW_FORMULA.finditer(text):
        context = text[match.start():match.start() + 40].replace("\n", " ")
        found.append(Problem(page, "formula not typeset", context))
    return found


def _shown_column(driver: WebDriver) -> bool:
    """Whether the page's text column appears within PAGE_TIMEOUT_S."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, PAGE_TIMEOUT_S).until(
            expected_conditions.presence_of_element_located(
                (By.CSS_SELECTOR, COLUMN)))
    except TimeoutException:
        return False
    return True


# Waits for MathJax 2 to typeset the page's formulas; answers at once
# where MathJax did not load (the raw formulas are then reported).
_WAIT_FOR_MATHJAX = r"""
const done = arguments[arguments.length - 1];
if (window.MathJax && window.MathJax.Hub) {
  window.MathJax.Hub.Queue(() => done(true));
} else {
  done(true);
}
"""


def _typeset(driver: WebDriver) -> bool:
    """Wait (up to PAGE_TIMEOUT_S) for MathJax to typeset the page."""
    from selenium.common.exceptions import TimeoutException
    driver.set_script_timeout(PAGE_TIMEOUT_S)
    try:
        driver.execute_async_script(_WAIT_FOR_MATHJAX)
    except TimeoutException:
        pass  # measured as it is: raw formulas are reported
    return True


def problems(html_dir: Path) -> list[Problem]:
    """Everything a reader would trip over, page by page."""
    found: list[Problem] = []
    root = Path(html_dir).resolve()
    with browser() as driver:
        for path in pages(root):
            name = str(path.relative_to(root))
            driver.get(path.as_uri())
            measured = _shown_column(driver) and _typeset(driver) and \
                driver.execute_script(_MEASURE_PAGE)
            if not measured:
                found.append(Problem(name, "page without a text column",
                                     f"no {COLUMN} after {PAGE_TIMEOUT_S} "
                                     f"s; title {driver.title!r}"))
                continue
            found += [Problem(name, kind, detail)
                      for kind, detail in measured["found"]]
            found += _text_problems(name, measured["text"],
                                    measured["labels"])
    return found


def screenshots(html_dir: Path, out_dir: Path) -> list[Path]:
    """A full-page PNG of every page (cut at MAX_SCREENSHOT_HEIGHT)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    root = Path(html_dir).resolve()
    written = []
    with browser() as driver:
        for path in pages(root):
            driver.set_window_size(*WINDOW)
            driver.get(path.as_uri())
            height = driver.execute_script(
                "return document.documentElement.scrollHeight")
            driver.set_window_size(WINDOW[0],
                                   min(height, MAX_SCREENSHOT_HEIGHT))
            name = str(path.relative_to(root)).replace("/", "__")
            target = out_dir / (Path(name).stem + ".png")
            driver.save_screenshot(str(target))
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="list what a reader trips over")
    check.add_argument("html_dir", type=Path)
    shots = commands.add_parser("screenshots", help="a PNG of every page")
    shots.add_argument("html_dir", type=Path)
    shots.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    if args.command == "check":
        found = problems(args.html_dir)
        for problem in found:
            print(problem)
        print(f"{len(found)} problems on {len(pages(args.html_dir))} pages")
        return 1 if found else 0
    for target in screenshots(args.html_dir, args.out_dir):
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
