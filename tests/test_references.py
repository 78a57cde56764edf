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


# The revisions jaxlib 0.10.2, the version this machine runs, was built
# from: JAX's tag, and the XLA commit its third_party/xla/revision.bzl
# names. A link to `main` would show a reader code the book never ran.
JAX_AT = "https://github.com/jax-ml/jax/blob/jax-v0.10.2/"
XLA_AT = ("https://github.com/openxla/xla/blob/"
          "5a9e73cbd92530cac2ac36f4736a774b2412afe2/")
# autotuner_util.cc's path is not among the sources jaxlib 0.10.2's CUDA
# plugin names, so no revision of it is known to be the one the book ran
UNPINNED = {"xla_autotuner_util"}


def test_jax_and_xla_sources_are_linked_at_the_revision_the_book_runs():
    for key, entry in BIB.entries.items():
        url = entry.fields.get("url", "")
        if key in UNPINNED or not re.match(
                r"https://github.com/(jax-ml/jax|openxla/xla)/blob/", url):
            continue
        assert url.startswith((JAX_AT, XLA_AT)), f"{key}: {url}"
