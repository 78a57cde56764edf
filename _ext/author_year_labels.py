"""Author-year labels for the book's References page and its citations.

sphinxcontrib-bibtex labels entries with pybtex's label styles, whose
default (alpha) makes up labels such as ``[TheJauthorsb]`` for an
institutional author. This extension registers a label style that writes
what a reader expects, ``The JAX authors 2026a``, ``Thakur et al. 2005``,
and a formatting style (``book``) that uses it, so that ``{cite}`` shows
the same label the References page lists (``bibtex_default_style: book``
with ``bibtex_reference_style: label`` in ``_config.yml``).
"""

from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle


def _surnames(entry):
    """The last names of the entry's authors; an institution written in
    braces (``{{The JAX authors}}``) is one name, kept whole."""
    people = entry.persons.get("author", [])
    return [" ".join(person.prelast_names + person.last_names
                     ).replace("{", "").replace("}", "") or str(person)
            for person in people]


class AuthorYearLabelStyle(BaseLabelStyle):
    """``Surname Year``, ``Surname and Other Year``, ``Surname et al. Year``,
    with ``a``, ``b``... where two entries would read the same."""

    def format_label(self, entry):
        names = _surnames(entry) or [entry.key]
        if len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        if entry.persons.get("author") and any(
                str(p) == "others" for p in entry.persons["author"]):
            who = f"{names[0]} et al."
        return f"{who} {entry.fields.get('year', 'n.d.')}"

    def format_labels(self, sorted_entries):
        labels = [self.format_label(entry) for entry in sorted_entries]
        count, seen = Counter(labels), Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label]]
                seen[label] += 1


class AuthorYearSortingStyle(BaseSortingStyle):
    """Sorted as the labels read: surname (an institution's braces
    ignored, so ``The JAX authors`` sorts under T beside the people), year,
    title."""

    def sorting_key(self, entry):
        return (" ".join(_surnames(entry) or [entry.key]).lower(),
                entry.fields.get("year", ""),
                entry.fields.get("title", "").lower())


class BookStyle(UnsrtStyle):
    """pybtex's unsrt formatting, sorted and labelled by author and year
    (`AuthorYearSortingStyle`, `AuthorYearLabelStyle`)."""

    default_label_style = "author_year"
    default_sorting_style = "author_year_plain"


register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle)
register_plugin("pybtex.style.sorting", "author_year_plain",
                AuthorYearSortingStyle)
register_plugin("pybtex.style.formatting", "book", BookStyle)


def setup(app):
    """A Sphinx extension only to register the styles before the build."""
    return {"parallel_read_safe": True, "parallel_write_safe": True}
