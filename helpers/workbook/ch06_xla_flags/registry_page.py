"""Chapter 6's list of the book's XLA flags (section 6.3), each with where
a reader meets it: the numbered sections of the built book whose text
names the flag, read from the chapters' ``.md`` files and ``_toc.yml``.
Flags no page names are left out of the list and said in one sentence
with the code that uses them (`unmet`).

`helpers.xla.flag_registry` gives what each flag does and its defaults;
this module only says where the book uses it, as the reader sees the
book numbered (chapter 8 is the field guide, file ``10_...``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from helpers.page import prose
from helpers.xla import flag_registry, known_flags

# A flag no chapter names: a table cell's dash.
NOWHERE = "—"
_FILE = re.compile(r"^\s*-\s*file:\s*chapters/(\d\d)_\S+")
_TITLE = re.compile(r"^# (.+)$", re.MULTILINE)


def chapter_numbers(toc: str) -> dict[str, int]:
    """The number the built book gives each chapter file, by its two
    digits: the chapters of the parts marked ``numbered: true``, counted
    in order across parts (Jupyter Book's numbering). Read line by line,
    since PyYAML is a dependency of the book's build only.

    Example:
        >>> chapter_numbers("parts:\\n  - caption: A\\n    chapters:\\n"
        ...                 "      - file: chapters/00_a\\n"
        ...                 "  - caption: B\\n    numbered: true\\n"
        ...                 "    chapters:\\n      - file: chapters/10_b\\n")
        {'10': 1}
    """
    numbers: dict[str, int] = {}
    numbered = False
    for line in toc.splitlines():
        if line.strip().startswith("- caption:"):
            numbered = False  # a new part
        elif line.strip() == "numbered: true":
            numbered = True
        elif (found := _FILE.match(line)) and numbered:
            numbers[found[1]] = len(numbers) + 1
    return numbers


def sections(text: str) -> list[str]:
    """A chapter's text cut at its ``##`` headings outside code: the
    opening first, then one piece per section, in order."""
    pieces, fenced = [[]], False  # type: list[list[str]], bool
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if line.startswith("## ") and not fenced:
            pieces.append([])
        pieces[-1].append(line)
    return ["\n".join(piece) for piece in pieces]


def where_met(flag: str, pages: dict[str, str],
              numbers: dict[str, int]) -> str:
    """Where a reader meets ``flag``: the sections that name it (``6.4``;
    ``chapter 3's opening``), or an unnumbered page's title, or
    `NOWHERE`.

    Args:
        flag: the flag, with its ``--``.
        pages: each chapter's text by its two digits.
        numbers: `chapter_numbers`.
    """
    places = []
    for stem, text in sorted(pages.items()):
        pieces = sections(text)
        named = [i for i, piece in enumerate(pieces)
                 if flag in known_flags.flag_names(piece)]
        if not named:
            continue
        if stem not in numbers:  # the workshop, the reproducibility page
            title = _TITLE.search(text)
            places.append(f"*{title[1] if title else stem}*")
            continue
        places += [f"{numbers[stem]}.{i}" if i else
                   f"chapter {numbers[stem]}'s opening" for i in named]
    return prose.and_list(places) or NOWHERE


def read_book(root: Path) -> tuple[dict[str, str], dict[str, int]]:
    """The chapters' texts and numbers of the checkout at ``root`` (empty
    where ``helpers`` is installed without the book)."""
    toc = root / "_toc.yml"
    pages = {page.name[:2]: page.read_text()
             for page in sorted((root / "chapters").glob("[0-9][0-9]_*.md"))}
    return pages, chapter_numbers(toc.read_text()) if toc.exists() else {}


def as_list(registry: pd.DataFrame, root: Path) -> str:
    """The registry's flags that a page names (`unmet` gives the rest) as
    a Markdown list, a flag a line (a table of long flag names and
    defaults runs off a page): what the flag does, the default that
    applies (XLA:CPU's for an ``xla_cpu`` flag, else XLA:GPU's for an
    H100, with XLA:CPU's where it differs), the document's default and
    whether it agrees, and where you meet the flag in the book.

    Args:
        registry: `helpers.xla.flag_registry.table`'s result.
        root: the checkout, whose chapters are read.
    """
    pages, numbers = read_book(root)
    lines = []
    for flag in registry.index:
        met = where_met(str(flag), pages, numbers)
        if met == NOWHERE:
            continue
        does = registry.loc[flag, "what it does"].rstrip(".")
        lines.append(f"- `{flag}`: {_sentence(does)}. "
                     + _sentence(flag_registry.default_words(registry, flag))
                     + "; where you meet it: " + met)
    return "\n".join(lines)


def unmet(registry: pd.DataFrame, root: Path) -> dict[str, list[str]]:
    """The registered flags no page names, each with the code of
    ``root``'s ``helpers`` that uses it (`code_users`; the registry
    itself aside), in the registry's order."""
    pages, numbers = read_book(root)
    return {str(flag): code_users(str(flag), root, numbers)
            for flag in registry.index
            if where_met(str(flag), pages, numbers) == NOWHERE}


def code_users(flag: str, root: Path, numbers: dict[str, int]) -> list[str]:
    """What in ``root``'s ``helpers`` names ``flag`` (with or without its
    dashes, as ``compiler_options`` spell it), other than the registry:
    a chapter's package as ``"chapter 7's code"``, another module by its
    dotted name."""
    users: list[str] = []
    for path in sorted((root / "helpers").rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        if module == flag_registry.__name__ or \
                flag.removeprefix("--") not in path.read_text():
            continue
        chapter = re.match(r"helpers\.workbook\.ch(\d\d)_", module)
        user = (f"chapter {numbers[chapter[1]]}'s code"
                if chapter and chapter[1] in numbers else f"`{module}`")
        if user not in users:
            users.append(user)
    return users


def _sentence(text: str) -> str:
    """``text`` with its first letter a capital, the rest as it is.

    Example:
        >>> _sentence("default `LIBRARY_X`")
        'Default `LIBRARY_X`'
    """
    return text[:1].upper() + text[1:]
