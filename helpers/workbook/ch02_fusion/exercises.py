"""Chapter 2's exercises: a reduction XLA:GPU emits fast (2.1), the fusion
kind it picks for each K (2.2), and the bytes the problem must move (2.3).

Each has a starter (fails its check, with the intended hint) and a
solution (passes); the rule they are judged by is in `reductions`.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from helpers.grading.answer_forms import WrongAnswer, as_choice
from helpers.grading.exercises import (
    Exercise,
    Outcome,
    as_fast_as,
    described,
    description_of,
    hlo_fact,
    learner_error,
    matches_reference,
)
from helpers.measuring import machine
from helpers.workbook.ch02_fusion.reductions import (
    PREDICT_KS,
    WARP_SIZE,
    batched_matmul,
    kinds_for_h100,
    reduction_kind,
    reduction_shape,
)
from helpers.xla import hlo
from helpers.xla.hlo.parsing import braced_attribute

# ---------------------------------------------------------------- 2.1 --

# 2.1's speed target: at most this much slower than `a @ b` by device time,
# which the autotuner may already run fast (the fix must not lose that).
SPEED_MARGIN = 0.10

def starter(a: jax.Array, b: jax.Array) -> jax.Array:
    """(..., 3, K) @ (..., K, 1), as written in the source."""
    return batched_matmul(a, b)


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
            dims = " × ".join(map(str, shape))
            axes = ", ".join(map(str, reduced))
            slow.append(f"{inst.op} of a {dims} array over axis {axes}")
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
    "Exercise 2.1: K=25 through the reduction emitter",
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
     as_fast_as(starter, lambda: _cases(25, jnp.float32, (1000, 1000), 3),
                within=SPEED_MARGIN, baseline_name="a @ b")],
    hints=["Which sizes of K does XLA:GPU reduce with kInput?",
           "Zeros do not change a sum: which K near 25 would XLA handle well?",
           "A change of shape made inside the jitted function fuses into the "
           "reduction: it costs no extra pass over memory."],
    reread="2.3 Reading the compiler's decision",
    chapter="02_fusion", answer="bmv", level="core",
    starter=starter, solution=solution)


# ---------------------------------------------------------------- 2.2 --

def predict_starter(k: int) -> str:
    """The fusion kind of ``a @ b`` for (..., 3, K) @ (..., K, 1)."""
    return "kInput" if k > 30 else "kLoop"


def predict_solution(k: int) -> str:
    """A row reduction over K: kInput when K >= 32 or K divides 32."""
    return "kInput" if k >= WARP_SIZE or WARP_SIZE % k == 0 else "kLoop"


@functools.cache
def _compiled_for_h100() -> dict[int, str] | None:
    """XLA:GPU's kind for every K in PREDICT_KS, compiled for an H100
    here, or None where this machine cannot (no CUDA plugin)."""
    from helpers.xla import crosscompile, fresh_process
    if not crosscompile.available():
        return None
    try:
        rows = kinds_for_h100()
    except fresh_process.ChildFailed:
        return None  # graded by the rule alone; the chapter says why
    return {row["K"]: row["kind"] for row in rows}


def _kind_of_matmul(k: int) -> str:
    """The truth: XLA:GPU's heuristic's choice, compiling for an H100
    (the same on an H100 as here: the kind the fusion's name keeps, which
    the autotuner may later hand to Triton, a choice made by timing, not
    by the rule); on a GPU without the cross compiler, its own compile;
    the rule only where neither is possible."""
    compiled = _compiled_for_h100()
    if compiled is not None:
        return compiled[k]
    if machine.on_gpu():
        a, b = _cases(k, jnp.float32, (4, 4), 0)
        kinds = {f.named_kind for f in hlo.fusions(starter, a, b)
                 if f.root_op == "reduce"}
        return kinds.pop() if len(kinds) == 1 else "no single reduce fusion"
    return reduction_kind((1000, 1000, 3, k), [3])


def _judged_by() -> str:
    """What `_kind_of_matmul` asked, for a passing answer's message."""
    if _compiled_for_h100() is not None:
        return "XLA:GPU compiling for an H100"
    if machine.on_gpu():
        return "this GPU's XLA"
    return ("the chapter's rule: this machine has neither a GPU nor JAX's "
            "CUDA plugin to ask XLA:GPU")


@described("agrees with XLA:GPU for every K from 2 to 80")
def _predictions_agree(predict: Callable[[int], str]) -> Outcome:
    name = description_of(_predictions_agree)
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
        shown = ", ".join(map(str, wrong[:8]))
        return Outcome(name, "fail", f"wrong for K = {shown}"
                       + (", ..." if len(wrong) > 8 else ""), hint)
    return Outcome(name, "pass", f"79 of 79 right, judged by "
                   f"{_judged_by()}")


predict_kind = Exercise(
    "Exercise 2.2: predict the fusion kind",
    [_predictions_agree],
    hints=["The reduced size is K; the warp has 32 threads.",
           "Which K below 32 fit a whole number of times into a warp?"],
    reread="2.3 Reading the compiler's decision",
    chapter="02_fusion", answer="predict", level="warm-up",
    starter=predict_starter, solution=predict_solution)


# --- Exercise 2.3: bytes the problem must move ----------------------------

def problem_bytes_starter(k: int, itemsize: int) -> float:
    """Bytes (1e6, 3, K) @ (1e6, K, 1) must move at least."""
    return itemsize * 1e6 * 3 * k  # only the left operand


def problem_bytes_solution(k: int, itemsize: int) -> float:
    """Read both operands once, write the (1e6, 3, 1) result once."""
    return itemsize * 1e6 * (3 * k + k + 3)


problem_bytes = Exercise(
    "Exercise 2.3: the bytes behind the bandwidth axis",
    [matches_reference(problem_bytes_solution,
                       [(k, s) for k in (5, 25, 50) for s in (4, 8)],
                       rtol=1e-12, hint="Count both inputs and the output."
                       )],
    hints=["Read each array's numbers per batch element from its shape, then "
           "multiply by the batch and the bytes per number."],
    reread="2.2 The sweep",
    chapter="02_fusion", answer="problem_bytes", level="warm-up",
    starter=problem_bytes_starter, solution=problem_bytes_solution)
