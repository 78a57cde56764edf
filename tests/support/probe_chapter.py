"""A chapter made up for the tests of the scripts that sync and execute
chapters: MyST front matter, a title, the placeholder the setup cell
replaces, then the given code cells."""

HEADER = '''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Probe

```{code-cell} ipython3
# replaced by the setup cell
```
'''


def probe(*cells: str) -> str:
    """The probe chapter's MyST source with ``cells`` as its code cells,
    after the setup cell's placeholder."""
    return HEADER + "".join(f"\n```{{code-cell}} ipython3\n{cell}\n```\n"
                            for cell in cells)
