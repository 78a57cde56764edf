import numpy as np
import pytest

from helpers import book


def test_glue_returns_plain_values():
    assert book.glue("ratio", np.float32(2.5)) == 2.5
    assert isinstance(book.glue("n", np.int64(3)), int)


def test_glue_rejects_names_the_text_cannot_cite():
    with pytest.raises(ValueError, match="must be letters"):
        book.glue("a-b", 1)


def test_glue_text_formats_or_says_missing():
    from helpers.book import glue_text

    assert glue_text("some_ms", 1.23456, ".2f") == "1.23"
    assert glue_text("some_ms", None) == "(no recording yet)"
    assert glue_text("some_ms", None, missing="n/a") == "n/a"
