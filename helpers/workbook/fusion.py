"""Chapter 2 (Fusion heuristics): XLA:GPU's reduction rule, and two
exercises.

`reduction_kind` restates in Python the rule XLA:GPU uses to choose how a
reduction is emitted, from xla/service/gpu/reduction_utils.cc
(`GetReductionKindAndContiguousComponents`,
`IsUnnestedReductionFasterThanElemental`,
`IsReductionFromOrToContiguousDimensions`), for arrays in the default
row-major layout. The chapter checks it against the fusion kinds the GPU
compiler actually chose.

Exercise 2.1 asks for a formulation of the batched product whose reduction
the GPU emits with its fast reduction emitter. Exercise 2.2 asks the reader
to predict the fusion kind of ``a @ b`` from K.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from helpers import device_time, env, hlo, roofline
from helpers.answers import WrongAnswer, as_choice
from helpers.exercises import (Exercise, Outcome, described, hlo_fact,
                               learner_error, matches_reference,
                               not_graded)
from helpers.hlo.parsing import braced_attribute

WARP_SIZE = 32  # threads per warp on every NVIDIA GPU


def _consecutive(dims: Sequence[int]) -> bool:
    """In a row-major layout, dims are adjacent in memory when their
    numbers are consecutive."""
    dims = sorted(dims)
    return dims == list(range(dims[0], dims[0] + len(dims)))


def _split(shape: Sequence[int], middle: Sequence[int]) -> list[int]:
    """(major, middle, minor) element counts around the ``middle`` dims."""
    sizes = [1, 1, 1]
    segment = 2  # walk from the minor-most dimension outwards
    for dim in reversed(range(len(shape))):
        if segment == 2 and dim in middle:
            segment = 1
        elif segment == 1 and dim not in middle:
            segment = 0
        sizes[segment] *= shape[dim]
    return sizes


def reduction_shape(shape: Sequence[int], reduced: Sequence[int]
                    ) -> tuple[str, tuple[int, int, int]]:
    """How XLA:GPU sees a reduction: ``('row', (batch, kept, reduced))`` when
    the reduced elements are contiguous in memory, or ``('column',
    (batch, reduced, kept))`` when they are strided.

    Example:
        >>> reduction_shape((1000, 1000, 3, 25), [3])
        ('row', (1, 3000000, 25))
    """
    shape, reduced = list(shape), sorted(reduced)
    if not reduced or any(not 0 <= d < len(shape) for d in reduced):
        raise ValueError(f"reduced dimensions {reduced} must be indices "
                         f"into the shape {tuple(shape)}")
    kept = [d for d in range(len(shape)) if d not in reduced]
    if not kept:
        return "row", (1, 1, int(np.prod(shape)))
    if _consecutive(kept):
        major, middle, minor = _split(shape, kept)
        if middle == 1:
            return "row", (1, 1, major * minor)
        if minor == 1:
            return "column", (1, major, middle)
        return "row", (major, middle, minor)
    major, middle, minor = _split(shape, reduced)
    if minor == 1:
        return "row", (1, major, middle)
    return "column", (major, middle, minor)


def reduction_kind(shape: Sequence[int], reduced: Sequence[int],
                   warp_size: int = WARP_SIZE) -> hlo.FusionKind:
    """The fusion kind XLA:GPU gives a reduce: ``'kInput'`` (its reduction
    emitter, threads cooperate on each output) or ``'kLoop'`` (one thread
    loops over each output's elements).

    The rule applies to a reduce as fusion sees it. Before fusion XLA:GPU
    normalises reductions whose kept and reduced dimensions are both
    scattered (it transposes them first), so for those this reports how
    the reduce would be emitted as written, not what the compiler ends up
    with.

    Example:
        >>> [reduction_kind((10, 3, k), [2]) for k in (16, 25, 35)]
        ['kInput', 'kLoop', 'kInput']
    """
    kept = [d for d in range(len(shape)) if d not in reduced]
    if kept and not (_consecutive(kept) or _consecutive(reduced)):
        return hlo.FusionKind.LOOP
    kind, (_, size_1, size_2) = reduction_shape(shape, reduced)
    if kind == "row":
        # Rows of at least a warp, or small power-of-two rows that pack
        # evenly into one warp.
        fast = size_2 >= warp_size or warp_size % size_2 == 0
    else:
        rows, columns = size_1, size_2
        fast = not (rows < warp_size
                    or (rows < 2 * warp_size and columns < warp_size)
                    or (rows < 4 * warp_size and columns < 8)
                    or (rows < 8 * warp_size and columns < 3))
    return hlo.FusionKind.INPUT if fast else hlo.FusionKind.LOOP


def _with_x64(dtypes: Sequence[str]) -> None:
    if "float64" in dtypes:  # a child process of its own: safe to switch
        jax.config.update("jax_enable_x64", True)


def kinds_on_gpu(ks: Sequence[int], dtypes: Sequence[str] = ("float32",),
                 batch: Sequence[int] = (1000, 1000)) -> list[dict]:
    """The fusion kind XLA:GPU gives the reduce of ``a @ b`` for each K and
    dtype, compiled for an H100 (run through `helpers.crosscompile.run`).
    """
    from helpers import crosscompile
    _with_x64(dtypes)
    rows = []
    for dtype in dtypes:
        for k in ks:
            a = jax.ShapeDtypeStruct((*batch, 3, k), jnp.dtype(dtype))
            b = jax.ShapeDtypeStruct((*batch, k, 1), jnp.dtype(dtype))
            text = crosscompile.compile_for_gpu(starter, a, b).as_text()
            rows.append({"K": k, "dtype": dtype,
                         "kind": hlo.reduction_kinds(text)})
    return rows


def reduce_kinds_on_gpu(cases: Sequence[tuple[Sequence[int],
                                              Sequence[int]]]
                        ) -> list[str]:
    """XLA:GPU's fusion kind for ``x.sum(axis=reduced)`` of each
    ``(shape, reduced)`` case, compiled for an H100: the truth
    `reduction_kind` is tested against."""
    from helpers import crosscompile
    kinds = []
    for shape, reduced in cases:
        x = jax.ShapeDtypeStruct(tuple(shape), jnp.float32)
        text = crosscompile.compile_for_gpu(
            lambda v, axes=tuple(reduced): jnp.tanh(v).sum(axis=axes),
            x).as_text()
        kinds.append(hlo.reduction_kinds(text))
    return kinds


# ---------------------------------------------------------------- 2.1 --

def bytes_moved(batch: int, k: int, itemsize: int) -> int:
    """Bytes (batch, 3, K) @ (batch, K, 1) must move: read both, write
    the (batch, 3) result."""
    return itemsize * batch * (3 * k + k + 3)


def starter(a: jax.Array, b: jax.Array) -> jax.Array:
    """(..., 3, K) @ (..., K, 1), as written in the source."""
    return a @ b


def solution(a: jax.Array, b: jax.Array) -> jax.Array:
    """Pad K with zeros up to a size XLA:GPU reduces with its reduction
    emitter. The pad fuses into the reduction, so no padded copy of ``a``
    is ever written to memory."""
    k = a.shape[-1]
    padded = k if k >= WARP_SIZE else 1 << (k - 1).bit_length()
    pad = [(0, 0)] * (a.ndim - 1) + [(0, padded - k)]
    products = jnp.pad(a, pad) * jnp.pad(b[..., 0], pad[1:])[..., None, :]
    return products.sum(-1, keepdims=True)


def _slow_reductions(text: str) -> bool | str:
    """True when no reduction in the module is a row reduction XLA:GPU
    would emit as a loop; else what was found."""
    mod = hlo.parse(text)
    shapes = {i.name: i.result for body in mod.values() for i in body}
    slow = []
    for inst in (i for body in mod.values() for i in body):
        if inst.op == "reduce":
            reduced = _ints(braced_attribute(inst, "dimensions"))
        elif inst.op == "dot" and inst.result is not None and \
                inst.result.dims[-1:] == (1,):
            # XLA:GPU rewrites a batched matrix-vector dot as multiply +
            # reduce over the contracting dimension.
            reduced = _ints(braced_attribute(inst, "lhs_contracting_dims"))
        else:
            continue
        operand = shapes.get(inst.operands[0])
        shape = list(operand.dims) if operand is not None else []
        if shape and reduced and reduction_shape(shape, reduced)[0] == "row" \
                and reduction_kind(shape, reduced) == "kLoop":
            slow.append(f"{inst.op} of {shape} over {reduced}")
    return True if not slow else ("a row reduction XLA:GPU emits as a loop: "
                                  + "; ".join(slow))


def _ints(text: str | None) -> list[int]:
    """The integers of an attribute such as ``'{3}'`` or ``'{1,2}'``."""
    return [int(v) for v in re.findall(r"\d+", text or "")]


def _cases(k: int, dtype: Any, batch: tuple[int, ...], seed: int
           ) -> tuple[jax.Array, jax.Array]:
    """Random (..., 3, K) and (..., K, 1) operands (NumPy's generator:
    no compilation, so importing the exercise stays quick)."""
    rng = np.random.default_rng(seed)
    return (jnp.asarray(rng.normal(size=(*batch, 3, k)), dtype),
            jnp.asarray(rng.normal(size=(*batch, k, 1)), dtype))


def _fast_enough(fraction: float) -> Callable[[Callable[..., Any]],
                                             Outcome]:
    """GPU only: the formulation moves its bytes at ``fraction`` of the
    measured copy bandwidth or better at K=25."""
    name = f"reaches {fraction:.0%} of copy bandwidth at K=25 (GPU)"

    @described(name)
    def criterion(fn: Callable[..., Any]) -> Outcome:
        if not env.on_gpu():
            return not_graded(name, "a GPU (the speed target is a GPU's)")
        a, b = _cases(25, jnp.float32, (1000, 1000), 3)
        try:
            timing = device_time.measure(jax.jit(fn), a, b)
        except Exception as err:  # the learner's code may fail anyhow
            return learner_error(name, err)
        gbps = bytes_moved(b.size // 25, 25, 4) / timing.median / 1e9
        copy = roofline.measure_ceilings().copy_bytes_per_s / 1e9
        detail = f"{gbps:.0f} GB/s of {copy:.0f} GB/s copy bandwidth"
        ok = gbps >= fraction * copy
        return Outcome(name, "pass" if ok else "fail", detail,
                       "" if ok else "Look at the fusion kinds again.")

    return criterion


_SOURCE_K25 = tuple(jax.ShapeDtypeStruct(shape, jnp.float32) for shape in
                    ((1000, 1000, 3, 25), (1000, 1000, 25, 1)))


def _no_loop_reduce(text: str) -> bool | str:
    """True when no reduce fusion of the module is a loop (kLoop)."""
    kinds = hlo.reduction_kinds(text)
    return "kLoop" not in kinds or f"reduce fusions: {kinds}"


@functools.cache
def _k25() -> tuple[Any, ...]:
    """The check's K = 25 inputs, made on first use (not at import)."""
    return _cases(25, jnp.float32, (40, 5), 0)


fast_reduction = Exercise(
    "Exercise 2.1: K=25 at kInput speed",
    [matches_reference(starter, lambda: [_k25(), _cases(7, jnp.float32,
                                                        (6,), 1)],
                       rtol=1e-4, atol=1e-5),
     hlo_fact("no reduction over K is emitted as a slow loop",
              _slow_reductions, _k25,
              hint="The reduction emitter takes rows of at least 32, or "
                   "of a size that divides 32."),
     hlo_fact("XLA:GPU, compiling for an H100, emits no reduction as a "
              "loop", _no_loop_reduce, _SOURCE_K25, for_h100=True,
              hint="Look at the fusion kinds again."),
     _fast_enough(0.7)],
    hints=["Which sizes of K does XLA:GPU reduce with kInput?",
           "Zeros do not change a sum: pad K.",
           "jnp.pad inside the function fuses into the reduction."],
    chapter="02_fusion", answer="bmv", level="core",
    starter=starter, solution=solution)


# ---------------------------------------------------------------- 2.2 --

def predict_starter(k: int) -> str:
    """The fusion kind of ``a @ b`` for (..., 3, K) @ (..., K, 1)."""
    return "kInput" if k > 30 else "kLoop"


def predict_solution(k: int) -> str:
    """A row reduction over K: kInput when K >= 32 or K divides 32."""
    return "kInput" if k >= WARP_SIZE or WARP_SIZE % k == 0 else "kLoop"


PREDICT_KS = range(2, 81)  # K=1 is no reduction: XLA drops it


def kinds_for_h100(dtype: str = "float32") -> list[dict]:
    """`kinds_on_gpu` for every K in PREDICT_KS in ``dtype``: the
    chapter's table and the exercise's truth make the same call, so a
    test run that keeps results (`helpers.crosscompile.run`) compiles
    them once."""
    from helpers import crosscompile
    return crosscompile.run(kinds_on_gpu, list(PREDICT_KS), [dtype])


@functools.cache
def _compiled_for_h100() -> dict[int, str] | None:
    """XLA:GPU's kind for every K in PREDICT_KS, compiled for an H100
    here, or None where this machine cannot (no CUDA plugin)."""
    from helpers import child, crosscompile
    if not crosscompile.available():
        return None
    try:
        rows = kinds_for_h100()
    except child.ChildFailed:
        return None  # graded by the rule alone; the chapter says why
    return {row["K"]: row["kind"] for row in rows}


def _kind_of_matmul(k: int) -> str:
    """The truth: the GPU compiler's choice, on a GPU or compiling for
    one; the rule only where neither is possible."""
    if env.on_gpu():
        # The kind XLA:GPU's heuristic chose, which the fusion's name
        # keeps: on a GPU the autotuner may then hand the fusion to Triton
        # (kind kCustom), a choice made by timing, not by the rule.
        a, b = _cases(k, jnp.float32, (4, 4), 0)
        kinds = {f.named_kind for f in hlo.fusions(starter, a, b)
                 if f.root_op == "reduce"}
        return kinds.pop() if len(kinds) == 1 else "no single reduce fusion"
    compiled = _compiled_for_h100()
    if compiled is not None:
        return compiled[k]
    return reduction_kind((1000, 1000, 3, k), [3])


def _predictions_agree(predict: Callable[[int], str]) -> Outcome:
    name = "agrees with XLA:GPU for every K from 2 to 80"
    hint = "Check the powers of two below 32."
    wrong = []
    for k in PREDICT_KS:
        try:
            guess = predict(k)
        except Exception as err:  # the learner's code may fail anyhow
            return learner_error(name, err, hint)
        try:
            guess = as_choice(guess, ("kInput", "kLoop"))
        except WrongAnswer as err:
            return Outcome(name, "fail", f"predict({k}) {err}", hint)
        if guess != _kind_of_matmul(k):
            wrong.append(k)
    if wrong:
        return Outcome(name, "fail", f"wrong for K = {wrong[:8]}"
                       + (" ..." if len(wrong) > 8 else ""), hint)
    return Outcome(name, "pass", "79 of 79 right")


predict_kind = Exercise(
    "Exercise 2.2: predict the fusion kind",
    [_predictions_agree],
    hints=["The reduced size is K; the warp has 32 threads.",
           "Which K below 32 fit a whole number of times into a warp?"],
    chapter="02_fusion", answer="predict", level="warm-up",
    starter=predict_starter, solution=predict_solution)
