"""A whole `lax.scan` as one kernel: `fused_scan`.

`jax.lax.scan(step, init, xs)` compiles to a while loop whose body launches
one or more kernels per step; for a tiny body, the launches and the loop's
bookkeeping cost more than the arithmetic. `fused_scan` has the same
meaning but writes the loop *inside* a single Pallas kernel: the carry stays
in registers or on-chip memory from the first step to the last, and the
device runs one launch.

Two Pallas backends can compile it, chosen by the GPU
(`helpers.pallas.backends`): Mosaic GPU on Hopper and newer, where the step is
scalarised onto one thread (`helpers.pallas.mosaic.chains`), and Triton on
Ampere and newer, which takes only arrays whose sides are powers of two, so
`helpers.pallas.triton.padding` pads the step's arrays and keeps the padding
out of the results. Without a GPU the loop runs in Pallas's interpreter, so a
CPU checks its results against `lax.scan`. Before anything runs, the step is
checked against the chosen backend (Triton's IR through
`helpers.pallas.triton.ir`, possible on any machine), so a step the GPU cannot
compile is refused with the reason on a laptop too. Gradients flow through a
custom VJP whose backward pass is a second fused scan running the loop in
reverse.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from helpers.pallas import backends
from helpers.pallas.loop import Loop, Refs, run_in_kernel
from helpers.pallas.mosaic import chains as mosaic_chains
from helpers.pallas.mosaic import scalarise
from helpers.pallas.triton import ir, padding

Step = Callable[[Any, Any], tuple[Any, Any]]


def fused_scan(step: Step, init: Any, xs: Any, *, reverse: bool = False,
               backend: backends.Backend | None = None,
               interpret: bool | None = None,
               pad: bool | None = None, check: bool = True
               ) -> tuple[Any, Any]:
    """`jax.lax.scan(step, init, xs)`, run as one Pallas kernel.

    Args:
        step: ``(carry, x) -> (carry, y)``, ordinary JAX code. Arrays it
            closes over (weights, say) become inputs of the kernel, and
            gradients reach them too.
        init: the initial carry, a pytree of arrays.
        xs: a pytree of arrays sharing a leading dimension, the number of
            steps; step ``i`` sees ``x[i]`` of each leaf.
        reverse: run the steps from last to first, as `lax.scan` does.
        backend: ``'mosaic'`` (Mosaic GPU, Hopper and newer),
            ``'triton'`` (Ampere and newer, deprecated by jax 0.11.0) or
            None: chosen by the GPU's capability (`helpers.pallas.backends`).
        interpret: force that backend's interpreter (default: interpret
            unless a GPU can compile it).
        pad: Triton only: run the kernel on arrays padded to powers of two, as
            Triton requires, with `helpers.pallas.triton.padding` keeping the
            padding out of the results (default: pad on a GPU).
        check: on every machine, check that the chosen backend can compile the
            step (Triton: lower the kernel to Triton's IR with
            `helpers.pallas.triton.ir`; Mosaic GPU: every operation can be
            scalarised by `helpers.pallas.mosaic.chains`), so a CPU refuses
            what a GPU would. ``check=False`` runs it anyway.

    Raises:
        NotImplementedError: the step uses an operation Pallas cannot
            compile for a GPU, or one padding cannot handle; the message
            names it.

    Returns:
        ``(final_carry, ys)``: ``ys`` stacks each step's ``y``.

    Example:
        >>> total, running = fused_scan(lambda c, x: (c + x, c + x),
        ...                             jnp.float32(0), jnp.arange(4.0))
    """
    if not callable(step):
        raise TypeError(f"step must be a function (carry, x) -> (carry, y), "
                        f"got a {type(step).__name__}.")
    length = _length(xs)
    x0 = jax.tree.map(lambda leaf: leaf[0], xs)
    converted, consts = hoist_constants(step, init, x0)
    how = backends.choose(backend, interpret, lambda: mosaic_chains.can_run(
        converted, init, x0, *consts))
    loop = Loop(converted, length, reverse)
    if check:  # as the GPU would compile it: padded unless told not to
        _refuse(_Plan(loop, how, True if pad is None else pad, check),
                init, xs, consts)
    if pad is None:
        pad = how.backend == "triton" and not how.interpret
    return _scan(_Plan(loop, how, pad, check), init, xs, consts)


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How `fused_scan` runs its loop: on which backend (`backends.Kernel`),
    on arrays padded to powers of two or not, and whether each kernel is
    checked against the GPU's compiler first. Frozen and hashable: the
    custom VJP takes it as one static argument."""

    loop: Loop
    kernel: backends.Kernel
    pad: bool
    check: bool


def _refuse(plan: _Plan, init: Any, xs: Any,
            consts: tuple[Any, ...]) -> None:
    """Raise, with the reason, when the plan's backend cannot compile the
    step; shapes and dtypes are all it needs."""
    fn = plan.loop.fn
    x0 = jax.tree.map(lambda leaf: jax.ShapeDtypeStruct(
        jnp.shape(leaf)[1:], jnp.result_type(leaf)), xs)
    if plan.kernel.backend == "mosaic":
        missing = scalarise.unsupported_operations(fn, init, x0, *consts)
        if missing:
            raise NotImplementedError(
                "fused_scan: the step uses "
                + ", ".join(sorted(missing))
                + ", which the "
                "Mosaic GPU path (helpers.pallas.mosaic.chains) cannot run. "
                "Use backend='triton', or rewrite those parts.")
        return
    _refuse_unsupported(fn, init, x0, consts)
    _refuse_unlowerable(plan, init, xs, consts)


def hoist_constants(step: Step, init: Any, x0: Any
                     ) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``step`` as ``fn(carry, x, *consts)`` plus the arrays it closes over.

    A Pallas kernel cannot capture arrays, and the VJP must return the
    gradients of the weights a step closes over, so both become explicit
    inputs. Tracing ``step`` once to a jaxpr finds them all.
    """
    closed, out_shape = jax.make_jaxpr(step, return_shape=True)(init, x0)
    _check_carry(init, out_shape)
    out_tree = jax.tree.structure(out_shape)

    def fn(carry: Any, x: Any, *consts: Any) -> Any:
        outs = jax.core.eval_jaxpr(closed.jaxpr, consts,
                                   *jax.tree.leaves((carry, x)))
        return jax.tree.unflatten(out_tree, outs)

    return fn, tuple(closed.consts)


def _length(xs: Any) -> int:
    leaves = jax.tree.leaves(xs)
    if not leaves:
        raise ValueError("fused_scan needs xs with at least one array: its "
                         "leading dimension is the number of steps.")
    lengths = {jnp.shape(leaf)[0] if jnp.ndim(leaf) else -1
               for leaf in leaves}
    if -1 in lengths or len(lengths) != 1:
        raise ValueError(f"every leaf of xs needs the same leading "
                         f"dimension (the number of steps); found shapes "
                         f"{[jnp.shape(leaf) for leaf in leaves]}")
    return int(lengths.pop())


def _check_carry(init: Any, out_shape: Any) -> None:
    """The carry a step returns must match ``init`` leaf for leaf."""
    if not (isinstance(out_shape, tuple) and len(out_shape) == 2):
        raise TypeError("step must return a pair (carry, y).")
    want = jax.tree.map(_spec, init)
    got = jax.tree.map(_spec, out_shape[0])
    # (jax's stubs leave PyTreeDef's type unresolved: Any compares)
    want_tree: Any = jax.tree.structure(want)
    same_tree = want_tree == jax.tree.structure(got)
    if not same_tree or jax.tree.leaves(want) != jax.tree.leaves(got):
        raise TypeError(f"step must return a carry shaped like init: init "
                        f"is {want}, step returned {got}.")


def _refuse_unsupported(fn: Callable[..., Any], init: Any, x0: Any,
                        consts: tuple[Any, ...]) -> None:
    missing = ir.unsupported_operations(fn, init, x0, *consts)
    if missing:
        raise NotImplementedError(
            f"fused_scan: the step uses {', '.join(sorted(missing))}, "
            "which Pallas "
            "cannot compile into a GPU kernel. Rewrite those parts (a mask "
            "with jnp.where instead of a slice, say), or pass check=False "
            "to run it in interpret mode anyway.")


def _refuse_unlowerable(plan: _Plan, init: Any, xs: Any,
                        consts: tuple[Any, ...]) -> None:
    """Lower the GPU kernel to Triton's IR here; raise what Triton says."""
    on_gpu = dataclasses.replace(plan,
                                 kernel=backends.Kernel("triton", False))

    def gpu_kernel(init: Any, xs: Any, consts: tuple[Any, ...]) -> Any:
        return _run(on_gpu, init, xs, consts, save_carries=False)

    try:
        ir.triton_modules(gpu_kernel, init, xs, consts)
    except ir.LoweringUnavailable:
        return  # an unfamiliar jax: the GPU compiler will have its say
    except ir.TritonLoweringError as err:
        advice = ("" if plan.pad else " Pass pad=True to pad every array to "
                  "powers of two.")
        raise NotImplementedError(
            f"fused_scan: Triton cannot compile this step: {err}.{advice} "
            "Or pass check=False to run it in interpret mode anyway."
        ) from err


def _spec(leaf: Any) -> tuple[tuple[int, ...], str]:
    return tuple(jnp.shape(leaf)), jnp.result_type(leaf).name


def _run(plan: _Plan, init: Any, xs: Any, consts: tuple[Any, ...],
         save_carries: bool) -> tuple[Any, Any, Any]:
    """One kernel: the plan's loop of ``fn(c, x, *consts)``.

    Returns ``(final_carry, ys, carries)``; ``carries`` stacks the carry
    *entering* each step (for the backward pass) or is None. With
    ``plan.pad`` the kernel sees arrays padded to powers of two, and the
    results are cut back to their true shapes.
    """
    loop, interpret = plan.loop, plan.kernel.interpret
    if plan.kernel.backend == "mosaic":
        return backends.run_lanes(loop, interpret, init, xs, consts,
                                  save_carries)
    if not plan.pad:
        return _launch(loop, interpret, init, xs, consts, save_carries)
    x0 = jax.tree.map(lambda leaf: leaf[0], xs)
    carry_shape, y_shape = jax.eval_shape(loop.fn, init, x0, *consts)
    final, ys, carries = _launch(
        loop.with_step(padding.pad_function(loop.fn, init, x0, *consts)),
        interpret, jax.tree.map(padding.pad_array, init),
        jax.tree.map(lambda leaf: padding.pad_array(leaf, 1), xs),
        tuple(padding.pad_array(c) for c in consts), save_carries)

    def cut(tree: Any, shapes: Any) -> Any:
        return jax.tree.map(lambda a, s: padding.unpad_array(a, s.shape),
                            tree, shapes)

    return (cut(final, carry_shape), cut(ys, y_shape),
            None if carries is None else cut(carries, carry_shape))


def _launch(loop: Loop, interpret: bool, init: Any, xs: Any,
            consts: tuple[Any, ...], save_carries: bool
            ) -> tuple[Any, Any, Any]:
    """The `pallas_call` itself, on arrays as given."""
    init_leaves, carry_tree = jax.tree.flatten(init)
    xs_leaves, xs_tree = jax.tree.flatten(xs)
    x0 = jax.tree.map(lambda leaf: leaf[0], xs)
    _, y_shape = jax.eval_shape(loop.fn, init, x0, *consts)
    y_leaves, y_tree = jax.tree.flatten(y_shape)
    out_shapes = _out_shapes(loop.length, init_leaves, y_leaves,
                             save_carries)
    counts = (len(init_leaves), len(xs_leaves), len(consts),
              len(init_leaves), len(y_leaves))

    def kernel(*refs: Any) -> None:
        run_in_kernel(loop, Refs.split(refs, counts), carry_tree, xs_tree)

    # Triton, by name: in jax 0.9 and 0.10 a plain pallas_call lowered to
    # Mosaic GPU (`helpers.pallas.triton.ir.backend_status`).
    compiler_params = None
    if not interpret:
        from jax.experimental.pallas import triton as pltriton
        compiler_params = pltriton.CompilerParams()
    outs = pl.pallas_call(kernel, out_shape=out_shapes, interpret=interpret,
                          compiler_params=compiler_params)(
        *init_leaves, *xs_leaves, *consts)
    n_carry, n_y = len(init_leaves), len(y_leaves)
    final = jax.tree.unflatten(carry_tree, outs[:n_carry])
    ys = jax.tree.unflatten(y_tree, outs[n_carry:n_carry + n_y])
    carries = (jax.tree.unflatten(carry_tree, outs[n_carry + n_y:])
               if save_carries else None)
    return final, ys, carries


def _out_shapes(length: int, init_leaves: list[Any], y_leaves: list[Any],
                save_carries: bool) -> list[jax.ShapeDtypeStruct]:
    """The kernel's outputs: the final carry, every step's ``y`` stacked
    and, for a backward pass, the carry entering every step."""
    def stacked(leaf: Any) -> jax.ShapeDtypeStruct:
        return jax.ShapeDtypeStruct((length, *jnp.shape(leaf)),
                                    jnp.result_type(leaf))

    carry = [jax.ShapeDtypeStruct(jnp.shape(v), jnp.result_type(v))
             for v in init_leaves]
    saved = [stacked(v) for v in init_leaves] if save_carries else []
    return carry + [stacked(y) for y in y_leaves] + saved


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _scan(plan: _Plan, init: Any, xs: Any,
          consts: tuple[Any, ...]) -> tuple[Any, Any]:
    final, ys, _ = _run(plan, init, xs, consts, save_carries=False)
    return final, ys


def _scan_forward(plan, init, xs, consts):
    final, ys, carries = _run(plan, init, xs, consts, save_carries=True)
    return (final, ys), (carries, xs, consts)


def _scan_backward(plan, residuals, cotangents):
    """The reverse loop, also one kernel: step ``i`` pulls the cotangent of
    its output carry back through ``fn`` and adds up the constants'. With
    ``plan.check``, it is checked against the GPU's compiler first, like
    the forward one."""
    carries, xs, consts = residuals
    ct_final, ct_ys = cotangents
    _require_float((carries, xs, consts))
    fn = plan.loop.fn

    def backward_step(ct, inputs, *constants):
        ct_carry, ct_consts = ct
        carry, x, ct_y = inputs
        _, pull_back = jax.vjp(fn, carry, x, *constants)
        ct_carry, ct_x, *ct_step_consts = pull_back((ct_carry, ct_y))
        ct_consts = tuple(a + b for a, b in zip(ct_consts, ct_step_consts))
        return (ct_carry, ct_consts), ct_x

    backward = dataclasses.replace(plan, loop=plan.loop.with_step(
        backward_step, reverse=not plan.loop.reverse))
    zeros = tuple(jnp.zeros_like(c) for c in consts)
    ct_init0 = (ct_final, zeros)
    back_xs = (carries, xs, ct_ys)
    if plan.check:  # on shapes alone: the values are tracers of the gradient
        shapes = jax.tree.map(
            lambda v: jax.ShapeDtypeStruct(jnp.shape(v), jnp.result_type(v)),
            (ct_init0, back_xs, consts))
        _refuse(dataclasses.replace(backward, pad=True), *shapes)
    (ct_init, ct_consts), ct_xs, _ = _run(backward, ct_init0, back_xs,
                                         consts, save_carries=False)
    return ct_init, ct_xs, ct_consts


def _require_float(tree: Any) -> None:
    bad = [jnp.result_type(leaf).name for leaf in jax.tree.leaves(tree)
           if not jnp.issubdtype(jnp.result_type(leaf), jnp.inexact)]
    if bad:
        raise TypeError(f"fused_scan differentiates floating-point carries, "
                        f"inputs and constants only; found {bad}. Keep "
                        "integer state (a step counter) out of the carry.")


_scan.defvjp(_scan_forward, _scan_backward)
