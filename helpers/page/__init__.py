"""What the page shows.

- `prose`: numbers and computed paragraphs glued into the text.
- `tables`: DataFrames rounded and without a meaningless index; a
  helper's source, highlighted.
- `plots`: the book's figure style; live and recorded sweeps.
- `widgets`: interactive views of measured tables (static in the HTML).
"""
