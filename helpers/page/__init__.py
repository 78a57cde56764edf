"""What the page shows.

- `prose`: numbers and computed paragraphs glued into the text.
- `tables`: DataFrames rounded and without a meaningless index; a
  helper's source, highlighted.
- `arithmetic`: back-of-envelope estimates written out, formula, numbers
  and result, before a section measures.
- `plots`: the book's figure style; live and recorded sweeps; rooflines.
- `legends`: legends placed beside or under the panels, never on their
  data, and a check that finds one that covers a point.
- `diagrams`: pictures of the ideas (a warp's loads, a loop's launches on
  a timeline, a mesh, a ring, a pipeline schedule).
- `widgets`: interactive views of measured tables (static in the HTML).
- `executions`: who executed a page (the stamp of an execution, the
  reference GPU's kept pages, the line under a page's title).
- `reference_pages`: what the book shows of a chapter: the reference
  GPU's execution, or this machine's folded behind its results.
- `reproduction`: whether a new execution reproduces a kept page.
"""
