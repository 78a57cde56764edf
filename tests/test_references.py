"""The bibliography: every entry a reader can find, every key the chapters
cite defined, every entry cited."""

import re
from pathlib import Path

from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parents[1]
BIB = parse_file(str(ROOT / "references.bib"))
CITED = {key for path in ROOT.glob("chapters/*.md")
         for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`",
                                 path.read_text())
         for key in group.split(",")}


def test_every_entry_has_author_title_year_and_where_to_find_it():
    for key, entry in BIB.entries.items():
        assert entry.persons.get("author"), f"{key} has no author"
        for field in ("title", "year"):
            assert entry.fields.get(field), f"{key} has no {field}"
        # a link, or a note saying why the source gives none
        assert ({"url", "doi"} & set(entry.fields)
                or "address" in entry.fields.get("note", "")), \
            f"{key} has no url or doi, and its note does not say why"


def test_every_cited_key_is_defined_and_every_entry_cited():
    assert CITED - set(BIB.entries) == set()
    assert set(BIB.entries) - CITED == set()
