import numpy as np
import pytest

from helpers import book


def test_glue_returns_plain_values():
    assert book.glue("ratio", np.float32(2.5)) == 2.5
    assert isinstance(book.glue("n", np.int64(3)), int)


def test_glue_rejects_names_the_text_cannot_cite():
    with pytest.raises(ValueError, match="must be letters"):
        book.glue("a-b", 1)
