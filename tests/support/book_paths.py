"""Where the book's parts are, for tests at any depth under ``tests/``."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
RECORDED = ROOT / "recorded"
SCRIPTS = ROOT / "scripts"


def section_titles(chapter: str) -> list[str]:
    """The ``##`` headings of a chapter's source (``chapters/<chapter>.md``),
    outside code cells, in order: the book numbers them chapter.1,
    chapter.2, ..."""
    text = (CHAPTERS / f"{chapter}.md").read_text()
    titles, in_code = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("## "):
            titles.append(line[3:].strip())
    return titles
