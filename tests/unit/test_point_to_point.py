"""Chapter 7's advice on psend/precv follows what the JAX running the page
does: each outcome, and its opposite, reads as it should."""

import jax

from helpers.multi_device import sendrecv
from helpers.workbook.ch07_multi_gpu import point_to_point


def test_the_advice_follows_the_api_status():
    kept = sendrecv.ApiStatus(True, None, None)
    deprecated = sendrecv.ApiStatus(True, "jax.lax.psend is deprecated",
                                    "0.12.0")
    gone = sendrecv.ApiStatus(False, None, None)
    assert point_to_point.advice(kept, "0.10.2").startswith(
        "JAX 0.10.2, which ran this page, has both functions. For new code, "
        "prefer "
        "`jax.lax.ppermute`")
    text = point_to_point.advice(deprecated, "0.12.0")
    assert "marks them deprecated" in text and "ppermute" in text
    assert "no longer has" in point_to_point.advice(gone, "0.13.0")
    for status in (kept, deprecated, gone):
        text = point_to_point.advice(status, "0.10.2")
        # stated once, without a raw error or the history of versions
        assert text.count("JAX ") == 1 and "Error" not in text


def test_the_ordering_follows_whether_a_barrier_lowers():
    fails = point_to_point.ordering(False, "0.10.2")
    works = point_to_point.ordering(True, "0.12.0")
    assert "does not lower" in fails and "can be kept" not in fails
    assert "lowers for a GPU, so the source's order can be kept" in works
    assert "the receive takes the send's token" in fails
    assert "the receive takes the send's token" in works


def test_barrier_lowers_answers_without_raising():
    lowers = point_to_point.barrier_lowers()
    assert isinstance(lowers, bool)
    # the book's CI runs jax 0.10, whose lowering of a token barrier fails
    if jax.__version__.startswith("0.10."):
        assert lowers is False
