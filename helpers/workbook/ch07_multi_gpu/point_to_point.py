"""Chapter 7's point-to-point facts that depend on the JAX version, read
rather than typed: whether the source's way of ordering a permute between
a send and its receive, an ``optimization_barrier`` over the send's token,
lowers for a GPU (`barrier_lowers`). Whether JAX still has `psend` and
`precv`, and marks them deprecated, is
`helpers.multi_device.sendrecv.api_status`.
"""

from __future__ import annotations

import jax

from helpers.multi_device import sendrecv
from helpers.workbook.ch07_multi_gpu import exercises

CHAIN = [(0, 1), (1, 2), (2, 3)]


def barrier_over_token(y: jax.Array) -> jax.Array:
    """The source's ordering: a send, a barrier over its token (which a
    permute could be placed behind), then the receive."""
    token = sendrecv.psend(y, "stage", CHAIN)
    y, token = jax.lax.optimization_barrier((y, token))
    like = jax.ShapeDtypeStruct(y.shape, y.dtype)
    return sendrecv.precv(token, like, "stage", CHAIN)


def barrier_lowers() -> bool:
    """Whether `barrier_over_token` lowers for a GPU with this JAX.

    Example:
        >>> isinstance(barrier_lowers(), bool)
        True
    """
    try:
        sendrecv.lowered_for_gpu(*exercises.ring_program(barrier_over_token))
    except Exception:  # any failure inside JAX means: it does not lower
        return False
    return True


