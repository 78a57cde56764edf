"""Compile any function for an H100 without a GPU, through `jax.export`.

`helpers.xla.crosscompile.run` compiles a function its child process can
import. A function defined in a notebook cell, or a reader's own, cannot
be imported there; `compiled_text` exports it for CUDA here (`jax.export`
lowers for a platform this machine lacks), sends the serialised program
to the child, and returns what XLA:GPU compiled it to (`compiled` adds
XLA's memory analysis of it). While exporting, code that picks a GPU or
a CPU path (`crosscompile.compiling_for_gpu`) takes the GPU's, as it
would in the child; the trace is made apart from the caller's, so that
neither reuses the other's and no cache of the caller's is cleared.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import os
from typing import Any, Callable, Iterator
from unittest import mock

from helpers.xla import crosscompile

# The custom calls a Pallas kernel lowers to for CUDA (Triton, Mosaic GPU).
PALLAS_CALLS = ("__gpu$xla.gpu.triton", "triton_kernel_call", "mosaic_gpu",
                "mosaic_gpu_v2")
# A setting of JAX's that keys its trace caches and changes nothing else
# without profile-guided latency estimation (off by default): exporting
# under another value traces afresh without clearing the caller's caches.
_APART = "jax_pgle_profiling_runs"
# Programs compiled for an H100 in this process, by their exported bytes.
_COMPILED: dict[str, dict[str, Any]] = {}
_KEPT = 64


def compiled_text(fn: Callable[..., Any], *args: Any,
                  compiler_options: dict[str, Any] | None = None) -> str:
    """The optimised HLO that XLA:GPU compiles ``fn(*args)`` to for one
    H100, from any machine: a function defined anywhere (a notebook cell,
    an exercise answer), not only one a child can import.

    ``fn`` is exported for CUDA here, serialised, and compiled in the
    child. ``args`` are arrays or ``jax.ShapeDtypeStruct``s, in any
    pytree (NamedTuples and dataclasses too); only their shapes and dtypes
    matter, so sizes no CPU could hold are fine. A jitted ``fn``'s static
    arguments are passed as they are.
    """
    return compiled(fn, *args, compiler_options=compiler_options)["text"]


def compiled(fn: Callable[..., Any], *args: Any,
             compiler_options: dict[str, Any] | None = None,
             keep_alive: bool = False) -> dict[str, Any]:
    """What XLA:GPU compiles ``fn(*args)`` to for one H100 (see
    `compiled_text`): ``{'text': the optimised HLO, 'temp_bytes': its
    temporaries by XLA's memory analysis (None where it has none)}``.

    A program compiled before in this process is not compiled again. With
    ``keep_alive`` the compiling child is kept for later calls
    (`crosscompile.run`).
    """
    blob = export_for_cuda(fn, *args)
    key = hashlib.sha256(json.dumps(
        [blob, compiler_options or {}], sort_keys=True).encode()).hexdigest()
    if key not in _COMPILED:
        if len(_COMPILED) >= _KEPT:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[key] = crosscompile.run(
            _compile_exported, blob, compiler_options or {},
            keep_alive=keep_alive)
    return _COMPILED[key]


def export_for_cuda(fn: Callable[..., Any], *args: Any) -> str:
    """``fn(*args)`` exported for CUDA and serialised (base64): arrays'
    shapes and dtypes only, the pytrees flattened (an export cannot
    serialise a NamedTuple's or a dataclass's structure). A Python scalar
    is traced as jit traces it: as a weakly typed scalar, or, where a
    jitted function takes arguments as static, kept as it is."""
    import jax
    from jax import export
    leaves, tree = jax.tree.flatten(args)
    # an already jitted function keeps its static arguments
    jitted: Any = fn if hasattr(fn, "trace") else jax.jit(fn)
    scalars_traced = not hasattr(fn, "trace") or len(
        fn.trace(*args).jaxpr.in_avals) == len(leaves)
    is_array = [(hasattr(leaf, "shape") and hasattr(leaf, "dtype"))
                or (scalars_traced and isinstance(leaf, (bool, int, float,
                                                         complex)))
                for leaf in leaves]
    specs = [_spec(leaf) for leaf, array in zip(leaves, is_array) if array]

    def flat(*arrays: Any) -> list[Any]:
        given = iter(arrays)
        rebuilt = [next(given) if array else leaf
                   for leaf, array in zip(leaves, is_array)]
        return jax.tree.leaves(jitted(*jax.tree.unflatten(tree, rebuilt)))

    # the program is compiled at once, here: the custom calls of Pallas
    # kernels need no guarantee that a later jaxlib still reads them
    unchecked = [export.DisabledSafetyCheck.custom_call(target)
                 for target in PALLAS_CALLS]
    with _tracing_for_gpu():
        exported = export.export(jax.jit(flat), platforms=["cuda"],
                                 disabled_checks=unchecked)(*specs)
    return base64.b64encode(exported.serialize()).decode("ascii")


def _spec(leaf: Any) -> Any:
    """An array's shape and dtype; a Python scalar's, weakly typed, as
    jit traces it."""
    import jax
    if hasattr(leaf, "shape"):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
    return jax.ShapeDtypeStruct((), jax.numpy.asarray(leaf).dtype,
                                weak_type=True)


@contextlib.contextmanager
def _tracing_for_gpu() -> Iterator[None]:
    """While exporting for CUDA here, code that picks a GPU or a CPU path
    (a Pallas kernel or its fallback) takes the GPU's, as in a child. JAX
    traces under a setting of its own (`_APART`), so a trace made for
    this machine is not reused for the GPU, nor this one here afterwards:
    the caller's caches stay as they were."""
    import jax
    before = getattr(jax.config, _APART, None)
    if before is None:  # a JAX without that setting: start afresh
        jax.clear_caches()
    else:
        jax.config.update(_APART, before + 1_000_003)
    try:
        with mock.patch.dict(os.environ, {crosscompile.CHILD_ENV: "1"}):
            yield
    finally:
        if before is None:
            jax.clear_caches()
        else:
            jax.config.update(_APART, before)


def _compile_exported(blob: str, compiler_options: dict[str, Any]
                      ) -> dict[str, Any]:
    """The child's half of `compiled`: compile the exported program for
    one compile-only H100, and read its memory analysis."""
    import jax
    from jax import export
    exported = export.deserialize(bytearray(base64.b64decode(blob)))
    if any(a.dtype.itemsize == 8 for a in exported.in_avals):
        jax.config.update("jax_enable_x64", True)  # this process only
    args, kwargs = jax.tree.unflatten(exported.in_tree, [
        jax.ShapeDtypeStruct(a.shape, a.dtype) for a in exported.in_avals])
    program = crosscompile.compile_for_gpu(
        functools.partial(exported.call, **kwargs), *args,
        compiler_options=compiler_options)
    analysis = program.memory_analysis()
    temp = getattr(analysis, "temp_size_in_bytes", None) if analysis \
        else None
    return {"text": program.as_text(),
            "temp_bytes": None if temp is None else int(temp)}
