"""Chapter 7's advice on `psend`/`precv`, written from what the JAX that
runs the page does with them.

Two facts depend on the JAX version and are read here rather than typed:
whether JAX still has the two functions and marks them deprecated
(`helpers.multi_device.sendrecv.api_status`), and whether the source's way
of ordering a permute between a send and its receive, an
``optimization_barrier`` over the send's token, lowers for a GPU
(`barrier_lowers`).
"""

from __future__ import annotations

import jax

from helpers.multi_device import sendrecv
from helpers.workbook.ch07_multi_gpu import exercises

CHAIN = [(0, 1), (1, 2), (2, 3)]
# Why ppermute is the choice: what the two deadlock rules cannot catch.
RULES = ("it sends and receives in one collective step, so it can break "
         "neither rule.")


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


def advice(status: sendrecv.ApiStatus, version: str) -> str:
    """Which point-to-point API to use, from what this JAX has.

    Args:
        status: `helpers.multi_device.sendrecv.api_status()`.
        version: ``jax.__version__``.

    Example:
        >>> advice(sendrecv.ApiStatus(True, None, None), "0.10.2")[:27]
        'JAX 0.10.2, which ran this '
    """
    ran = f"JAX {version}, which ran this page,"
    if not status.available:
        return (f"{ran} no longer has `psend` and `precv`: move arrays "
                "between devices with `jax.lax.ppermute`, as the pipeline "
                "above does. The cells below need a version that has them.")
    kept = ("The code below keeps the source's `psend` and `precv` to show "
            "the two rules at work.")
    if status.deprecation:
        return (f"{ran} has both functions but marks them deprecated, "
                "naming no replacement. Use `jax.lax.ppermute`, as the "
                f"pipeline above does: {RULES} {kept}")
    return (f"{ran} has both functions. For new code, prefer "
            f"`jax.lax.ppermute`, as the pipeline above does: {RULES} "
            f"{kept}")


def ordering(lowers: bool, version: str) -> str:
    """How the pipeline orders its transfers, given whether a barrier over
    a token lowers for a GPU with this JAX (`barrier_lowers`).

    Example:
        >>> "does not lower" in ordering(False, "0.10.2")
        True
    """
    source = ("The source also places the back-edge permute between the "
              "send and the receive, by passing the send's token through "
              "`jax.lax.optimization_barrier`.")
    ours = ("the receive takes the send's token, so it follows the send, "
            "and XLA schedules the permute where it likes.")
    if lowers:
        return (f"{source} In JAX {version} that lowers for a GPU, so the "
                "source's order can be kept. The pipeline above does "
                f"without it: {ours}")
    return (f"{source} In JAX {version} a barrier over a token does not "
            "lower for a GPU, so the pipeline above orders only what the "
            f"token itself can: {ours}")
