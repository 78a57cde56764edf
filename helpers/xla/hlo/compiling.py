"""HLO from a JAX function: compile it here, or take text already
compiled, and read the module.

Every reader in `helpers.xla.hlo` takes a `Program`: a function with
example arguments, compiled here with errors a reader can act on
(`compile`), or HLO text. `module` parses either (`helpers.xla.hlo.parsing`);
`op_names` and `aliases` read what JAX and XLA record about each
instruction and about donated buffers.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import jax

from helpers.xla.hlo.parsing import Alias, Module, parse


# "{1}: (0, {}, may-alias)" inside the module header's input_output_alias.
_ALIAS = re.compile(r"\{(?P<out>[\d,\s]*)\}:\s*\((?P<param>\d+),\s*"
                    r"\{(?P<pidx>[\d,\s]*)\}(?:,\s*(?P<kind>[\w\-]+))?\)")


# What the readers of this package take: a function (compiled here with
# the example arguments given next), or compiled HLO text; None is what
# ``Compiled.as_text()`` is typed to return when a backend prints nothing,
# and gets a clear error.
Program = Callable[..., Any] | str | None


def compiled(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Lower and compile ``fn`` for ``args``, with errors a reader can act on.

    Args:
        fn: a function or an already jitted one.
        *args, **kwargs: example arguments (arrays or ShapeDtypeStructs).

    Returns:
        The `jax.stages.Compiled` object.

    Example:
        >>> compiled(lambda x: x + 1, jnp.ones(3)).as_text()[:9]
        'HloModule'
    """
    if not callable(fn):
        raise TypeError(f"expected a function to compile, got a "
                        f"{type(fn).__name__}. Pass the function itself.")
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    name = getattr(fn, "__name__", repr(fn))
    try:
        return jitted.lower(*args, **kwargs).compile()
    except jax.errors.ConcretizationTypeError as err:
        raise TypeError(
            f"{name} cannot be jitted: it uses a traced value where Python "
            "needs a concrete one (an `if` on an array, a shape computed "
            "from data). Use jnp.where / lax.cond, or mark the argument "
            f"static. JAX said: {str(err).splitlines()[0]}") from err
    except TypeError as err:
        raise TypeError(
            f"{name} could not be traced with the arguments given "
            f"({_describe_args(args, kwargs)}): {err}") from err


def _describe_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    shapes = [f"{getattr(a, 'dtype', type(a).__name__)}"
              f"{list(getattr(a, 'shape', []))}" for a in args]
    shapes += [f"{k}=..." for k in kwargs]
    return ", ".join(shapes) or "no arguments"


def compiled_text(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The optimised HLO module XLA compiled for ``fn(*args)``, as text."""
    return compiled(fn, *args, **kwargs).as_text()


def module_text(fn_or_text: Program,
                args: tuple[Any, ...]) -> str:
    """HLO text as given, or compiled from a function and its arguments."""
    if fn_or_text is None:
        raise TypeError("got None instead of HLO text: the compiled object "
                        "printed nothing (as_text() returned None).")
    if isinstance(fn_or_text, str):
        if args:
            raise TypeError("pass either HLO text, or a function with its "
                            "arguments, not text with arguments.")
        return fn_or_text
    return compiled_text(fn_or_text, *args)


def module(fn_or_text: Program, args: tuple[Any, ...]
           ) -> Module:
    """The parsed module of HLO text, or of a function compiled for args."""
    return parse(module_text(fn_or_text, args))


def op_names(fn_or_text: Program, *args: Any
             ) -> dict[str, str]:
    """Each instruction's ``op_name`` metadata: the JAX source path.

    JAX records where each HLO instruction came from as a path such as
    ``jit(f)/attn_q_k/dot_general``, ``jax.named_scope`` names included;
    a fusion carries the path of the operation it was built around. A
    profile names kernels after HLO instructions, so this dict is what
    ties a kernel back to the scope in the source.

    Returns:
        ``{instruction name: op_name}`` over all computations, for the
        instructions that have one.
    """
    return {inst.name: inst.metadata["op_name"]
            for instructions in module(fn_or_text, args).values()
            for inst in instructions if "op_name" in inst.metadata}


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.replace(" ", "").split(",") if v)


def aliases(fn: Program, *args: Any) -> list[Alias]:
    """Which outputs of the compiled module may reuse an input buffer.

    Donating an argument (``jax.jit(f, donate_argnums=0)``) lets XLA write
    the result into the argument's memory; the module header then lists
    the pair under ``input_output_alias``.

    Args:
        fn: a function (jitted here if needed), or compiled HLO text.
        *args: example arguments when ``fn`` is a function.

    Example:
        >>> aliases(jax.jit(lambda x: x * 2, donate_argnums=0), jnp.ones(4))
        [Alias(output_index=(), parameter=0, parameter_index=(), ...)]
    """
    text = module_text(fn, args)
    header = text.split("\n", 1)[0]
    start = header.find("input_output_alias=")
    if start < 0:
        return []
    return [Alias(_ints(m["out"]), int(m["param"]), _ints(m["pidx"]),
                  m["kind"] or "may-alias")
            for m in _ALIAS.finditer(header[start:])]
