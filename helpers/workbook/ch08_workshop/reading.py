"""What a workshop block reads and runs, from a chapter's executed
notebook: the words the rendered page shows, in all (`reading_words`) and
by section (`section_words`), the sections a block's exercises send a
participant back to (`must_read`), the seconds its cells took
(`run_seconds`) and its title (`title`). The agenda (`agenda`) times
the blocks from them.
"""

from __future__ import annotations

import re
from datetime import datetime

import nbformat

from helpers.grading.exercises import Exercise

_HIDDEN = {"remove-cell", "remove-input", "hide-input"}
_WORD = re.compile(r"[\w'’-]+")


def reading_words(notebook: nbformat.NotebookNode) -> int:
    """Words a reader reads on the rendered page: the Markdown cells
    (without directive fences or roles' markup), the code of the cells
    shown open, and the text of the outputs shown (HTML without its
    tags)."""
    return sum(section_words(notebook).values())


def section_words(notebook: nbformat.NotebookNode) -> dict[str, int]:
    """`reading_words` by ``## `` section, keyed by its heading as the page
    shows it (unnumbered, without the backticks of code); the words before
    the first section under ``""``."""
    words: dict[str, int] = {}
    section = ""
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            words[section] = words.get(section, 0) + _code_words(cell)
            continue
        for part in re.split(r"^(?=## )", cell.source, flags=re.M):
            if part.startswith("## "):
                section = part[3:].splitlines()[0].strip().replace("`", "")
            words[section] = words.get(section, 0) + _markdown_words(part)
    return words


def _markdown_words(source: str) -> int:
    """Words of Markdown as rendered: no directive fences or options, a
    role's text without its markup."""
    text = re.sub(r"^:::.*$|^:\w+:.*$|^```.*$", " ", source, flags=re.M)
    text = re.sub(r"\{\w+(?::\w+)?\}`([^`]*)`", r"\1", text)
    return len(_WORD.findall(text))


def _code_words(cell: nbformat.NotebookNode) -> int:
    """Words of a code cell as rendered: its code where shown open, and
    the text of the outputs shown."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    if cell.cell_type != "code" or "remove-cell" in tags:
        return 0
    words = 0 if tags & _HIDDEN else len(_WORD.findall(cell.source))
    if "remove-output" not in tags:
        words += sum(len(_WORD.findall(_output_text(output)))
                     for output in cell.get("outputs", []))
    return words


def must_read(exercises: list[Exercise]) -> list[str]:
    """The sections ``exercises`` send a participant back to (their
    ``reread``), once each, without the section's number.

    Example:
        >>> from helpers.grading.exercises import Exercise
        >>> must_read([Exercise("a", [], reread="1.3 Asynchronous dispatch"),
        ...            Exercise("b", [], reread="1.3 Asynchronous dispatch"),
        ...            Exercise("c", [], reread="Try the checker")])
        ['Asynchronous dispatch', 'Try the checker']
    """
    return list(dict.fromkeys(re.sub(r"^\d+\.\d+ ", "", e.reread)
                              for e in exercises if e.reread))


def _output_text(output: dict) -> str:
    """The text an output shows: a stream's, else its HTML without tags,
    else its plain text; none for a glued value (pasted elsewhere)."""
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    data = output.get("data", {})
    if any(key.startswith("application/papermill") for key in data):
        return ""
    if "text/html" in data:
        html = "".join(data["text/html"])
        html = re.sub(r"<style.*?</style>", " ", html, flags=re.S)
        return re.sub(r"<[^>]+>", " ", html)
    return "".join(data.get("text/plain", ""))


def run_seconds(notebook: nbformat.NotebookNode) -> float | None:
    """Seconds the notebook's cells took when last executed, from the
    execution timestamps Jupyter stores in each cell's metadata; None when
    the notebook was not executed with them."""
    total, timed = 0.0, 0
    for cell in notebook.cells:
        stamps = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in stamps and "shell.execute_reply" in stamps:
            start = _time(stamps["iopub.execute_input"])
            end = _time(stamps["shell.execute_reply"])
            total += (end - start).total_seconds()
            timed += 1
    return total if timed else None


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def title(notebook: nbformat.NotebookNode) -> str:
    """The notebook's short title: its first ``# `` heading up to a colon
    or comma ('Fusion heuristics' of 'Fusion heuristics: the kernel...');
    the empty string when it has none."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return re.split(r"[:,]", line[2:])[0].strip()
    return ""
