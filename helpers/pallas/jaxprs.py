"""Jaxpr tools both Pallas backends share.

Both backends of `helpers.pallas.scan.fused_scan` rewrite one step of the
loop before they compile it: the Triton backend runs it on arrays padded
to powers of two (`helpers.pallas.triton.padding`), the Mosaic GPU
backend on lane vectors, one chain per thread
(`helpers.pallas.mosaic.scalarise`). Each does so by evaluating the step's
jaxpr one equation at a time with its own rule per primitive: `evaluate`
is that loop, written once. `primitive_names` lists what a step uses, so
a backend can refuse a step by name before it tries.
"""

from __future__ import annotations

from typing import Any, Callable

from jax.extend import core as jex_core

# Operations that act on each element (or each set of aligned elements)
# independently: padded positions never reach logical ones, and each lane
# of a lane vector is computed on its own.
# The list grows with jax: `one_minus_square` (1 - x**2, new in jax 0.11.2)
# is what the derivatives of tanh, asin, acos and atanh emit.
ELEMENTWISE = frozenset("""
    abs acos acosh add add_any and asin asinh atan atan2 atanh bessel_i0e
    bessel_i1e cbrt ceil clamp clz conj convert_element_type copy copy_p cos
    cosh digamma div eq erf erf_inv erfc exp exp2 expm1 floor ge gt imag
    integer_pow is_finite le lgamma log log1p log2 logistic lt max min mul
    ne neg nextafter not one_minus_square or population_count pow real
    reduce_precision rem round rsqrt select_n shift_left
    shift_right_arithmetic shift_right_logical sign sin sinh sqrt square sub
    tan tanh xor
    """.split())

# Primitives that call an inner jaxpr, and the parameter that holds it.
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr",
         "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
         "remat": "jaxpr", "checkpoint": "jaxpr"}

# A rule: given one equation and its input values, its output values.
Rule = Callable[[Any, list[Any]], list[Any]]


def evaluate(jaxpr: Any, consts: Any, args: list[Any], rule: Rule, *,
             literal: Callable[[Any], Any] = lambda value: value
             ) -> list[Any]:
    """Evaluate ``jaxpr`` on ``args`` one equation at a time, each by
    ``rule(eqn, inputs)``; a literal in the jaxpr enters as
    ``literal(value)``. Returns the jaxpr's outputs.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> closed = jax.make_jaxpr(lambda x: x * 2 + 1)(1.0)
        >>> def bind(eqn, inputs):
        ...     return [eqn.primitive.bind(*inputs, **eqn.params)]
        >>> [float(v) for v in evaluate(closed.jaxpr, closed.consts,
        ...                             [jnp.float32(3)], bind)]
        [7.0]
    """
    values: dict[Any, Any] = {}

    def read(var: Any) -> Any:
        if isinstance(var, jex_core.Literal):
            return literal(var.val)
        return values[var]

    for var, value in zip(jaxpr.constvars, consts):
        values[var] = value
    for var, value in zip(jaxpr.invars, args):
        values[var] = value
    for eqn in jaxpr.eqns:
        outs = rule(eqn, [read(v) for v in eqn.invars])
        for var, value in zip(eqn.outvars, outs):
            values[var] = value
    return [read(v) for v in jaxpr.outvars]


def primitive_names(jaxpr: Any) -> set[str]:
    """The names of every primitive ``jaxpr`` uses, inner jaxprs (of calls,
    loops, conditionals) included.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> sorted(primitive_names(jax.make_jaxpr(
        ...     lambda x: jnp.tanh(x) + 1)(1.0).jaxpr))
        ['add', 'tanh']
    """
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else [param]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    names |= primitive_names(inner)
    return names
