"""Compile a Pallas kernel to Triton's IR on any machine, GPU or not.

A Pallas kernel for an NVIDIA GPU is lowered to a Triton module, which XLA
then compiles to machine code. The first half needs no GPU: Pallas lowers
for the oldest GPU Triton supports when none is present (compute
capability 9.0, an H100). So a CPU can show the kernel a GPU would run,
and catch what Triton refuses (a shape that is not a power of two, an
operation with no lowering) before anyone rents a GPU.

This uses a function internal to jax (``lower_jaxpr_to_triton_module``);
when a jax release changes it, `triton_modules` raises `LoweringUnavailable`
rather than a confusing error, and callers can skip the check.
"""

from __future__ import annotations

import itertools
import re
import types
from typing import Any, Callable, Iterator

import jax
import pandas as pd
from jax.extend import core as jex_core

from helpers.pallas.jaxprs import primitive_names

# Lower for an H100 (9.0), what Pallas itself assumes without a GPU.
COMPUTE_CAPABILITY = 90


class LoweringUnavailable(RuntimeError):
    """This jax does not expose the Pallas-to-Triton lowering we use."""


class TritonLoweringError(ValueError):
    """Triton cannot compile the kernel; the message says why."""


def triton_modules(fn: Callable[..., Any], *args: Any) -> list[str]:
    """The Triton IR of each Pallas kernel in ``fn(*args)``, as text.

    Args:
        fn: a function whose trace contains ``pallas_call``s compiled for
            a GPU (``interpret=False``).
        args: example arguments.

    Returns:
        One module per kernel, in the order the trace calls them.

    Raises:
        TritonLoweringError: Triton cannot take the kernel (the message is
            Pallas's, naming the shape or operation).
        LoweringUnavailable: this jax's internals differ from what this
            helper knows.
        ValueError: ``fn`` calls no Pallas kernel.
    """
    calls = list(_pallas_calls(jax.make_jaxpr(fn)(*args).jaxpr))
    if not calls:
        raise ValueError("triton_modules found no pallas_call in the "
                         "function; is its kernel written with Pallas?")
    try:
        from jax._src.interpreters import mlir
        from jax._src.pallas.triton import lowering
        from jax._src.sharding_impls import ShardingContext
        context = types.SimpleNamespace(
            platforms=("cuda",), backend=None,
            axis_context=ShardingContext(1), keepalives=[],
            channel_iterator=itertools.count(1), host_callbacks=[],
            lowering_parameters=mlir.LoweringParameters())
    except (ImportError, AttributeError, TypeError) as err:
        raise LoweringUnavailable(f"this jax ({jax.__version__}) lowers "
                                  f"Pallas differently: {err}") from err
    return [_lower(lowering, call.params, context) for call in calls]


def _lower(lowering: Any, params: dict[str, Any], context: Any) -> str:
    try:
        result = lowering.lower_jaxpr_to_triton_module(
            params["jaxpr"], params["grid_mapping"], "cuda",
            COMPUTE_CAPABILITY, mlir_ctx=context)
    except (TypeError, AttributeError, KeyError) as err:
        raise LoweringUnavailable(f"this jax ({jax.__version__}) lowers "
                                  f"Pallas differently: {err}") from err
    except (ValueError, NotImplementedError, AssertionError,
            lowering.LoweringError) as err:
        # Some refusals are bare assertions deep in the lowering.
        first = (str(err).splitlines() or [""])[0]
        raise TritonLoweringError(
            f"{type(err).__name__}: {first}" if first else
            f"the Triton lowering failed an internal check "
            f"({type(err).__name__})") from err
    return str(result.module)


def backend_status() -> dict[str, str]:
    """What the installed jax does with Pallas on an NVIDIA GPU.

    Read from jax itself, because it has changed from release to release
    (each release's ``jax/_src/pallas/pallas_call.py``): ``pl.pallas_call``
    without compiler parameters lowered to Triton up to jax 0.8 and to
    Mosaic GPU since jax 0.9.0 (``jax_pallas_use_mosaic_gpu``, on by
    default from then); jax 0.11.0 deprecated the Triton backend.

    Returns:
        ``{"pallas_call default": "Triton" | "Mosaic GPU",
        "Triton backend": "supported" | "deprecated" | "removed"}``.
    """
    import jax.experimental.pallas  # noqa: F401  (registers its config)
    mosaic_default = getattr(jax.config, "jax_pallas_use_mosaic_gpu", False)
    try:
        from jax._src.pallas.triton import pallas_call_registration  # noqa
    except ImportError:
        triton = "removed"
    else:
        from jax._src import deprecations
        registered = getattr(deprecations, "_registered_deprecations", {})
        triton = ("deprecated" if "jax-pallas-triton" in registered
                  else "supported")
    return {"pallas_call default": "Mosaic GPU" if mosaic_default
            else "Triton", "Triton backend": triton}


def _pallas_calls(jaxpr: Any) -> Iterator[Any]:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "pallas_call":
            yield eqn
        for inner in jex_core.jaxprs_in_params(eqn.params):
            yield from _pallas_calls(inner)


def unsupported_operations(step: Callable[..., Any], *args: Any
                           ) -> set[str] | None:
    """The operations in ``step(*args)`` that Pallas's GPU Triton backend
    cannot compile, or None when this jax does not expose its list.

    Example:
        >>> import jax.numpy as jnp
        >>> unsupported_operations(lambda x: x[:2], jnp.ones(4))
        {'slice'}
    """
    try:  # the table of lowering rules is internal to jax
        from jax._src.pallas.triton.lowering import triton_lowering_rules
    except ImportError:
        return None
    jaxpr = jax.make_jaxpr(step)(*args).jaxpr
    return {name for name in primitive_names(jaxpr)
            if name not in {str(k) for k in triton_lowering_rules}}


# What each Triton IR operation of a loop body does, for a reader: any
# arith operation on floats (addf, mulf, cmpf, ...) is float arithmetic,
# the other arith operations index arithmetic; the constants, splats and
# index ranges that set up a body are left out.
TRITON_ROLES = {"tt.extern_elementwise": "library math (exp)",
                "tt.reduce": "sum across lanes", "tt.load": "memory",
                "tt.store": "memory", "tt.addptr": "memory",
                "tt.expand_dims": "layout", "tt.trans": "layout",
                "tt.broadcast": "layout"}
FLOAT_ROLES = ("float arithmetic", "sum across lanes", "library math (exp)")
SETUP = ("arith.const", "tt.splat", "tt.make_range")


def role(operation: str) -> str:
    """What a Triton IR operation does, e.g. ``'float arithmetic'`` for
    ``arith.mulf``; an operation of another dialect, its dialect."""
    if re.fullmatch(r"arith\.\w+f", operation):
        return "float arithmetic"
    if operation.startswith("arith."):
        return "index arithmetic"
    return TRITON_ROLES.get(operation, operation.split(".")[0])


def body_operations(module: str) -> list[str]:
    """The operations of the first ``scf.for`` body in a Triton module, in
    order, without the constants, splats and ranges that set it up."""
    body = module[module.index("scf.for"):module.index("scf.yield")]
    # an operation in generic form has its name quoted: = "tt.reduce"(...)
    return [op for op in re.findall(r'= "?(\w+\.\w+)', body)
            if not op.startswith(SETUP)]


def step_operations(module: str) -> pd.DataFrame:
    """`body_operations` counted by `role`, with the operations of each
    role named."""
    ops = body_operations(module)
    table = pd.DataFrame({"role": [role(op) for op in ops],
                          "operation": ops})
    return table.groupby("role").agg(
        count=("operation", "size"),
        operations=("operation", lambda o: ", ".join(sorted(set(o))))
    ).sort_values("count", ascending=False)
