"""The book's house rules, checked: table of contents, tags, pairs, Colab
metadata, setup cells, line length, and the XLA flags the text names."""

import re
from pathlib import Path

import nbformat
import pytest
import yaml

from helpers.xla import known_flags
from scripts import notebooks

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
ALLOWED_TAGS = {"remove-cell", "remove-output", "remove-input",
                "hide-input", "hide-output",
                "raises-exception", "nbval-check-output",
                "nbval-ignore-output", "nbval-skip",
                # its output measures the machine that executes the page
                # (helpers.page.executions.MEASUREMENT), or shows the
                # reference GPU's result (REFERENCE_RESULT)
                "measurement", "reference-result"}
# An executed page stays small enough for git: the GPU's pages are kept in
# recorded/ at every visit, and this machine's in chapters/.
PAGE_LIMIT_BYTES = 1 << 20
PAGES_LIMIT_BYTES = 8 << 20  # one device's pages together


def _toc_files(node):
    if isinstance(node, dict):
        if "file" in node:
            yield node["file"]
        for value in node.values():
            yield from _toc_files(value)
    elif isinstance(node, list):
        for value in node:
            yield from _toc_files(value)


def test_no_review_records_in_the_repository():
    """Reviews and screenshots go in the issues' closing notes; what they
    found lives on as tests. Figures are drawn by the chapters' code."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    assert not [f for f in tracked if f.startswith("reviews/")]
    assert not [f for f in tracked if re.search(
        r"\.(png|jpe?g|gif|webp)$", f, re.I)]


def test_there_are_chapters():
    assert len(CHAPTERS) >= 2


@pytest.mark.parametrize("folder", [ROOT / "chapters", *sorted(
    p for p in (ROOT / "recorded").glob("*/") if p.is_dir())],
    ids=lambda p: p.name)
def test_executed_pages_are_small_enough_for_git(folder):
    pages = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    too_big = {p.name: p.stat().st_size for p in pages
               if p.stat().st_size > PAGE_LIMIT_BYTES}
    assert not too_big, (f"pages over {PAGE_LIMIT_BYTES} bytes: {too_big}; "
                         "print less, or save smaller figures")
    assert sum(p.stat().st_size for p in pages) <= PAGES_LIMIT_BYTES


def test_toc_and_chapters_agree():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    listed = {f for f in _toc_files(toc) if f.startswith("chapters/")}
    present = {f"chapters/{p.stem}" for p in CHAPTERS}
    assert listed == present, (f"in _toc.yml only: {listed - present}; "
                               f"in chapters/ only: {present - listed}")
    assert (ROOT / f"{toc['root']}.md").exists()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_tags_are_from_the_allowed_set(path):
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        unknown = set(cell.metadata.get("tags", [])) - ALLOWED_TAGS
        assert not unknown, f"cell {index} has unknown tags {unknown}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_pair_is_in_sync(path):
    md_path = path.with_suffix(".md")
    assert md_path.exists(), f"{path.name} has no MyST twin"
    assert notebooks.check([md_path]) == 0, "run `make sync`"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_colab_metadata_and_setup_cell(path):
    notebook = nbformat.read(path, as_version=4)
    assert notebook.metadata.get("accelerator") == "GPU"
    assert notebook.metadata["colab"]["gpuType"]
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    first_code = next(c for c in notebook.cells if c.cell_type == "code")
    assert first_code.source == notebooks.setup_cell_source()
    assert notebooks.repository_url() in first_code.source


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_opening(path):
    notebook = nbformat.read(path, as_version=4)
    first = notebook.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    assert "**Key concepts**" in first.source
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert "machine.summary()" in code[1].source, "provenance cell missing"
    # the line under the title names the page's executor; the cell prints
    # the reader's own machine on Colab or in a checkout, not on the page
    assert "remove-cell" in code[1].metadata.get("tags", []), \
        "the provenance cell leaves the page: tag it remove-cell"


# The chapters that teach (not the how-to, the workshop, the provenance
# or the facilitators' page)
TEACHING = [p for p in CHAPTERS
            if p.stem[:2] not in ("00", "08", "09", "11")]


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.stem)
def test_a_chapter_opens_and_closes_with_one_boxed_takeaway(path):
    """The reader meets the chapter's lesson in a box under the title and
    again in a box at the very end, and nowhere else in a box."""
    markdown = [c.source for c in nbformat.read(path, as_version=4).cells
                if c.cell_type == "markdown"]
    opening = ":::{admonition} The chapter in one sentence"
    closing = ":::{admonition} Takeaway"
    text = "\n".join(markdown)
    assert text.count(opening) == 1 and opening in markdown[0]
    assert text.count(closing) == 1
    assert markdown[-1].rstrip().endswith(":::") and closing in markdown[-1]
    sentence = markdown[0].split(opening)[1].split(":::")[0]
    assert sentence.strip(), "the opening box is empty"
    # the closing box turns the lesson into steps for the reader's own
    # code and points onward; it does not repeat the opening
    ending = markdown[-1].split(closing)[1]
    assert " ".join(sentence.split()) not in " ".join(ending.split())
    assert "For your own code:" in ending and "{doc}`" in ending


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.stem)
def test_prose_reads_as_a_book_not_a_log(path):
    """No session history in the text a reader sees: what a visit did, what
    the next one will, which recording came first."""
    notebook = nbformat.read(path, as_version=4)
    log_words = re.compile(r"first (GPU )?visit|first recording|next "
                           r"(GPU )?(visit|recording)|this session|"
                           r"Newer runs", re.IGNORECASE)
    for cell in notebook.cells:
        texts = [cell.source] if cell.cell_type == "markdown" else [
            str(output.get("data", {}).get("text/markdown", ""))
            + str(output.get("text", ""))
            for output in cell.get("outputs", [])]
        for text in texts:
            found = log_words.search(text)
            if found:
                start = max(0, found.start() - 60)
                end = found.end() + 60
                pytest.fail(f"log-like prose: ...{text[start:end]}")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_visible_code_cells_are_short(path):
    """A reader sees teaching code in cells of at most 15 lines; setup and
    bookkeeping fold away (``hide-input``) or leave the page."""
    notebook = nbformat.read(path, as_version=4)
    folded = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
    for cell in notebook.cells:
        if cell.cell_type != "code" or folded & set(
                cell.metadata.get("tags", [])):
            continue
        lines = cell.source.strip().splitlines()
        assert len(lines) <= 15, (f"{len(lines)} visible lines: split the "
                                  f"cell or fold it: {lines[0]}")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_glue_calls_stay_off_the_page(path):
    """Gluing a number into the prose is the book's machinery, not the
    lesson: glue calls live in cells the page does not show."""
    notebook = nbformat.read(path, as_version=4)
    folded = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
    for cell in notebook.cells:
        if cell.cell_type == "code" and not folded & set(
                cell.metadata.get("tags", [])):
            shown = [line for line in cell.source.splitlines()
                     if re.search(r"\bglue\w*\(", line)]
            assert not shown, f"move into a remove-cell cell: {shown[0]}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_cell_shows_what_it_glued(path):
    """A glue call returns its value: left as a cell's last line, the page
    shows a stray '0.19' under the cell. Assign it (``_ = glue(...)``)."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        last = cell.source.strip().splitlines()[-1]
        shown = any(o.output_type == "execute_result" for o in cell.outputs)
        assert not (shown and re.match(r"\s*glue\w*\(", last)), last


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_stored_outputs_and_no_errors(path):
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert any(c.outputs for c in code), "execute it: `make notebooks`"
    for cell in code:
        if "raises-exception" in cell.metadata.get("tags", []):
            continue
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"stored error in cell: {cell.source[:60]}"


def _shown_texts(notebook):
    """Every text a reader sees in a notebook's outputs: streams, plain
    text, Markdown (glued paragraphs too) and HTML tables."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                yield output["text"]
            for kind in ("text/markdown", "text/html", "text/plain"):
                value = output.get("data", {}).get(kind)
                if value:
                    yield value if isinstance(value, str) else "".join(value)


# "134% of the copy bandwidth", "129% of its floor": a share of a ceiling.
_SHARE = re.compile(r"(\d+(?:\.\d+)?)\s*%\s+of\s+(?:the\s+|its\s+|their\s+)?"
                    r"(?:device's\s+)?(?:copy bandwidth|floor|ceiling)")


def _achieved_cells(html):
    """The cells of every column headed 'achieved' in an HTML table, and
    every data cell of a table whose top heading is 'achieved' alone (a
    pivot of the fractions, its versions as columns)."""
    from bs4 import BeautifulSoup

    for table in BeautifulSoup(html, "html.parser").find_all("table"):
        head = table.find("thead")
        heads = head.find_all("tr") if head else []
        body = table.find("tbody") or table
        rows = body.find_all("tr")
        top = {c.get_text(strip=True) for c in heads[0].find_all("th")
               } - {""} if heads else set()
        if top == {"achieved"}:
            for row in rows:
                yield from (c.get_text(strip=True)
                            for c in row.find_all("td"))
            continue
        header = [c.get_text(strip=True) for c in heads[-1].find_all(
            ["th", "td"])] if heads else []
        columns = [i for i, h in enumerate(header) if "achieved" in h]
        for row in rows:
            cells = [c.get_text(strip=True) for c in row.find_all(
                ["th", "td"])]
            yield from (cells[i] for i in columns if i < len(cells))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_fraction_of_a_ceiling_above_one_is_shown(path):
    """A version cannot beat its floor: a share over 100% is a measurement
    error, shown as one (helpers.measuring.roofline.share), never as a
    number."""
    notebook = nbformat.read(path, as_version=4)
    for text in _shown_texts(notebook):
        for match in _SHARE.finditer(text):
            assert float(match.group(1)) <= 100, match.group(0)
        if "<table" in text and "achieved" in text:
            for cell in _achieved_cells(text):
                try:
                    value = float(cell.rstrip("%")) / (
                        100 if cell.endswith("%") else 1)
                except ValueError:
                    continue  # the error, or a missing value
                assert value <= 1, f"achieved {cell} in {path.stem}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_code_lines_fit_in_79_columns(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for line in cell.source.splitlines():
            assert len(line) <= 79, f"too long: {line!r}"


def test_every_xla_flag_in_the_book_is_registered_and_known_to_jaxlib():
    from helpers.xla import flag_registry

    text = "\n".join(p.read_text() for p in
                     (ROOT / "chapters").glob("*.md"))
    flags = known_flags.flag_names(text)
    assert not flag_registry.unlisted(flags), (
        "add these flags to helpers/xla/flag_registry.py: what they do, their "
        "documented default and its source")
    unknown = known_flags.unknown(list(flag_registry.FLAGS))
    assert not unknown, (
        f"the installed jaxlib does not know {unknown}; a reader setting "
        "them would crash: update the chapters that use them")


HELPERS = ROOT / "helpers"
GENERAL_MODULES = sorted(p for p in HELPERS.rglob("*.py")
                         if "workbook" not in p.parts)


@pytest.mark.parametrize("path", GENERAL_MODULES,
                         ids=lambda p: str(p.relative_to(HELPERS)))
def test_general_helpers_never_import_chapter_code(path):
    """Chapter code (helpers.workbook) may use the general modules, never
    the reverse: a general module that needs a chapter's function has
    taken on a chapter's job."""
    text = path.read_text()
    assert "helpers.workbook" not in text.replace(
        "`helpers.workbook", "").replace("(helpers.workbook", ""), path.name


@pytest.mark.parametrize("path", GENERAL_MODULES,
                         ids=lambda p: str(p.relative_to(HELPERS)))
def test_hlo_text_is_read_only_by_the_parser(path):
    """Every reader of compiled HLO goes through helpers.xla.hlo's model: no
    module outside its parser matches the raw attribute text."""
    if path.relative_to(HELPERS).as_posix() == "hlo/parsing.py":
        return
    text = path.read_text()
    assert "inst.attributes" not in text and "custom_call_target=\"" \
        not in text, path.name
