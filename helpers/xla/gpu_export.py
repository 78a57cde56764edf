"""Compile any function for an H100 without a GPU, through `jax.export`.

`helpers.xla.crosscompile.run` compiles a function its child process can
import. A function defined in a notebook cell, or a reader's own, cannot
be imported there; `compiled_text` exports it for CUDA here (`jax.export`
lowers for a platform this machine lacks), sends the serialised program
to the child, and returns what XLA:GPU compiled it to. While exporting,
code that picks a GPU or a CPU path (`crosscompile.compiling_for_gpu`)
takes the GPU's, as it would in the child.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import os
from typing import Any, Callable, Iterator
from unittest import mock

from helpers.xla import crosscompile

# The custom calls a Pallas kernel lowers to for CUDA (Triton, Mosaic GPU).
PALLAS_CALLS = ("__gpu$xla.gpu.triton", "triton_kernel_call", "mosaic_gpu",
                "mosaic_gpu_v2")

def compiled_text(fn: Callable[..., Any], *args: Any,
                  compiler_options: dict[str, Any] | None = None) -> str:
    """The optimised HLO that XLA:GPU compiles ``fn(*args)`` to for one
    H100, from any machine: a function defined anywhere (a notebook cell,
    an exercise answer), not only one a child can import.

    ``fn`` is exported for CUDA here, serialised, and compiled in the
    child. ``args`` are arrays or ``jax.ShapeDtypeStruct``s; only their
    shapes and dtypes matter, so sizes no CPU could hold are fine. A
    jitted ``fn``'s static arguments are passed as they are.
    """
    import jax
    from jax import export
    specs = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype)
                         if hasattr(x, "shape") else x, args)
    # an already jitted function keeps its static arguments
    jitted: Any = fn if hasattr(fn, "trace") else jax.jit(fn)
    # the program is compiled at once, here: the custom calls of Pallas
    # kernels need no guarantee that a later jaxlib still reads them
    unchecked = [export.DisabledSafetyCheck.custom_call(target)
                 for target in PALLAS_CALLS]
    with _tracing_for_gpu():
        exported = export.export(jitted, platforms=["cuda"],
                                 disabled_checks=unchecked)(*specs)
    blob = base64.b64encode(exported.serialize()).decode("ascii")
    return crosscompile.run(_compile_exported, blob, compiler_options or {})


@contextlib.contextmanager
def _tracing_for_gpu() -> Iterator[None]:
    """While exporting for CUDA here, code that picks a GPU or a CPU path
    (a Pallas kernel or its fallback) takes the GPU's, as in a child."""
    import jax
    # jit reuses a trace made for this machine, and would reuse this one
    # here afterwards: neither may cross over
    jax.clear_caches()
    try:
        with mock.patch.dict(os.environ, {crosscompile.CHILD_ENV: "1"}):
            yield
    finally:
        jax.clear_caches()


def _compile_exported(blob: str, compiler_options: dict[str, Any]) -> str:
    """The child's half of `compiled_text`: compile the exported program
    for one compile-only H100."""
    import jax
    from jax import export
    exported = export.deserialize(bytearray(base64.b64decode(blob)))
    if any(a.dtype.itemsize == 8 for a in exported.in_avals):
        jax.config.update("jax_enable_x64", True)  # this process only
    args, kwargs = jax.tree.unflatten(exported.in_tree, [
        jax.ShapeDtypeStruct(a.shape, a.dtype) for a in exported.in_avals])
    return crosscompile.compile_for_gpu(
        functools.partial(exported.call, **kwargs), *args,
        compiler_options=compiler_options).as_text()
