"""Read the built book in a real browser, as a reader would.

Headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven
by Selenium) opens every page of ``_build/html`` at a laptop's width and
reports what a reader would trip over:

- an output block wider than the text column (cut off at the page edge);
- an image that did not load;
- literal MyST syntax that did not render (``{glue:text}`...` ``,
  ``{cite}`...` ``, a stray ``{glue`` role);
- a solution that can be read without opening its fold;
- a sentence with a blank where a GPU recording should be.

``make screenshots`` writes a full-page PNG of every page for authors
(``python scripts/browse_book.py screenshots _build/html shots/``); the
book's tests run ``problems`` on a fresh build and fail on any.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from helpers.page.prose import MISSING

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
INSTALL_HINT = ("install them with `apt-get install chromium chromium-driver` "
                "(Debian), or `make browser`, which does it")

# The placeholder `helpers.page.prose.glue_text` writes where a recording is
# missing (and chapter 2's variant of it); the book's explanations of it
# quote it without parentheses.
MISSING_RECORDING = re.compile(re.escape(MISSING) + r"|\(not recorded yet\)")
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
  const overflow = el.scrollWidth - el.clientWidth;
  if (overflow > 1 || box.right > right + 1) {
    found.push(['output wider than the column',
      `${el.tagName.toLowerCase()} ${Math.round(Math.max(box.right - right,
        overflow))} px too wide: ` + (el.innerText || el.src || '')
        .trim().slice(0, 70)]);
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
return {found: found, text: column.innerText};
"""


@contextlib.contextmanager
def browser() -> Iterator[object]:
    """A headless Chromium under Selenium, closed on exit."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        missing = [n for n, p in (("chromium", chromium),
                                  ("chromedriver", driver_path)) if p is None]
        raise RuntimeError(f"No {' or '.join(missing)} on this machine: "
                           f"{INSTALL_HINT}.")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        raise RuntimeError("Selenium is missing: `pip install -e '.[dev]'` "
                           "installs it.") from error
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
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


def _text_problems(page: str, text: str) -> list[Problem]:
    found = []
    for match in MISSING_RECORDING.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        line = text[start:text.find("\n", match.end())].strip()
        found.append(Problem(page, "missing-recording blank", line[:120]))
    for match in LITERAL_ROLE.finditer(text):
        context = text[match.start():match.start() + 60].replace("\n", " ")
        found.append(Problem(page, "literal MyST syntax", context))
    return found


def _shown_column(driver: Any) -> bool:
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


def problems(html_dir: Path) -> list[Problem]:
    """Everything a reader would trip over, page by page."""
    found: list[Problem] = []
    root = Path(html_dir).resolve()
    with browser() as driver:
        for path in pages(root):
            name = str(path.relative_to(root))
            driver.get(path.as_uri())
            measured = _shown_column(driver) and \
                driver.execute_script(_MEASURE_PAGE)
            if not measured:
                found.append(Problem(name, "page without a text column",
                                     f"no {COLUMN} after {PAGE_TIMEOUT_S} "
                                     f"s; title {driver.title!r}"))
                continue
            found += [Problem(name, kind, detail)
                      for kind, detail in measured["found"]]
            found += _text_problems(name, measured["text"])
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
