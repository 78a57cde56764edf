"""Chapter 5's exercises: a function that traces once for every length
(5.1), a training step that donates its parameters (5.2), and a
per-example loss batched with vmap (5.3)."""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from helpers.grading.answer_forms import as_number
from helpers.grading.exercises import (
    Exercise,
    Outcome,
    computes_nothing,
    described,
    description_of,
    faster_than,
    learner_error,
    matches_reference,
)
from helpers.workbook.ch05_transformations.transforms import init, sgd_step
from helpers.xla import hlo

LENGTH = 16


# --- Exercise 5.1: trace once -------------------------------------------

def mean_of_first_starter(x: jax.Array, n: jax.Array) -> jax.Array:
    """The mean of the first n entries of x."""
    return jnp.mean(x[:n])  # needs n as a Python int: one trace per n


def mean_of_first_solution(x: jax.Array, n: jax.Array) -> jax.Array:
    """A mask instead of a slice: the shapes no longer depend on n, so one
    trace serves every n."""
    keep = jnp.arange(x.shape[0]) < n
    return jnp.sum(jnp.where(keep, x, 0.0)) / n


@described(f"one trace for n = 1 .. {LENGTH}, with the right means")
def _traces_once(fn: Callable[..., jax.Array]) -> Outcome:
    name = description_of(_traces_once)
    hint = ("x[:n] has a length that depends on n's value, so n cannot be "
            "traced. Keep the shape fixed: mask the entries beyond n.")
    traces = []

    def counted(x: jax.Array, n: jax.Array) -> jax.Array:
        traces.append(1)  # runs only while tracing
        return fn(x, n)

    jitted = jax.jit(counted)
    # Random vectors with no structure (so no other statistic gives the
    # same numbers), and every n from 1 to the whole length.
    rng = np.random.default_rng(51)
    vectors = [jnp.asarray(rng.normal(size=LENGTH), jnp.float32)
               for _ in range(2)]
    worst = 0.0
    for x in vectors:
        for n in range(1, LENGTH + 1):
            try:
                got = jitted(x, jnp.asarray(n))
            except Exception as err:  # the learner's code may fail anyhow
                return learner_error(name, err, hint)
            want = float(np.mean(np.asarray(x)[:n]))
            worst = max(worst, abs(as_number(got, "the mean, a number")
                                   - want))
    if worst > 1e-5:
        return Outcome(name, "fail", f"a mean is off by {worst:.3g}",
                       "Divide by n, not by the length of x.")
    if len(traces) != 1:
        return Outcome(name, "fail", f"traced {len(traces)} times", hint)
    return Outcome(name, "pass", f"traced once; all {2 * LENGTH} means "
                   "right")


trace_once = Exercise("Exercise 5.1: trace once for every n",
                      [_traces_once],
                      hints=["jit traces again for every new shape: keep the "
                             "shape the same whatever n is, and let n choose "
                             "which entries count."],
                      reread="5.3 jit: trace once, with stable shapes",
                      chapter="05_transformations", answer="mean_of_first",
                      level="warm-up",
                      starter=mean_of_first_starter,
                      solution=mean_of_first_solution)


# --- Exercise 5.2: donate the parameters ----------------------------------

def make_step_starter() -> Callable[..., Any]:
    """Return a jitted `sgd_step(params, x, y)`."""
    return jax.jit(sgd_step)


def make_step_solution() -> Callable[..., Any]:
    """Donating argument 0 lets XLA write the new parameters into the old
    ones' buffers."""
    return jax.jit(sgd_step, donate_argnums=0)


@described("every parameter's buffer is reused for its update")
def _donates(make_step: Callable[[], Any]) -> Outcome:
    name = description_of(_donates)
    params = init(jax.random.key(0), 32)
    x = jax.random.normal(jax.random.key(1), (8, 32))
    try:
        step = make_step()
        text = step.lower(params, x, x).compile().as_text()
    except Exception as err:
        return learner_error(name, err, "make_step() must return a "
                             "jax.jit-ed function.")
    # The params pytree's leaves are the module's first parameters.
    inputs = {a.parameter for a in hlo.aliases(text)}
    if inputs != set(range(len(params))):
        return Outcome(name, "fail", f"{len(hlo.aliases(text))} of "
                       f"{len(params)} outputs alias an input",
                       "jax.jit's donate_argnums names the arguments whose "
                       "buffers the call may reuse: which one holds the "
                       "parameters?")
    want = jax.jit(sgd_step)(params, x, x)
    got = step(jax.tree.map(jnp.copy, params), x, x)
    same = all(np.allclose(got[k], want[k], rtol=1e-5) for k in want)
    if not same:
        return Outcome(name, "fail", "aliased, but the update differs",
                       "Keep sgd_step as it is: only how it is jitted "
                       "changes.")
    return Outcome(name, "pass", "params aliased to the new params; same "
                   "update")


donate = Exercise("Exercise 5.2: a step that donates its parameters",
                  [_donates],
                  hints=["hlo.aliases(compiled_text) lists each output "
                         "that reuses an input's buffer."],
                  reread="5.3 jit: trace once, with stable shapes",
                  chapter="05_transformations", answer="make_step",
                  level="core",
                  starter=make_step_starter, solution=make_step_solution)


# --- Exercise 5.3: vmap the per-example loss --------------------------------

def batched_loss_starter(params: Any, xs: jax.Array, ys: jax.Array
                         ) -> jax.Array:
    """Per-example losses for a batch."""
    from helpers.workbook.ch05_transformations import transforms
    return jnp.stack([transforms.example_loss(params, x, y)
                      for x, y in zip(xs, ys)])


def batched_loss_solution(params: Any, xs: jax.Array, ys: jax.Array
                          ) -> jax.Array:
    """vmap over the examples, the parameters shared."""
    from helpers.workbook.ch05_transformations import transforms
    return jax.vmap(transforms.example_loss, in_axes=(None, 0, 0))(
        params, xs, ys)


def _batch(b: int) -> tuple[Any, jax.Array, jax.Array]:
    from helpers.workbook.ch05_transformations import transforms
    xs = jax.random.normal(jax.random.key(b), (b, 16))
    return transforms.init(jax.random.key(0), 16), xs, xs * 0.5


@described("as many kernels for 16 examples as for 4")
def _flat_kernels(fn: Callable[..., jax.Array]) -> Outcome:
    # 16 examples tell a loop from vmap as surely as 64 do, and a loop
    # unrolled 16 times compiles in a fraction of the time (each check of
    # a looping answer compiles it).
    name = description_of(_flat_kernels)
    if (empty := computes_nothing(name, fn, _batch(4))):
        return empty
    try:
        small, large = (hlo.kernel_count(jax.jit(fn), *_batch(b))
                        for b in (4, 16))
    except Exception as err:
        return learner_error(name, err, "")
    if large > small:
        return Outcome(name, "fail", f"{small} kernels for 4 examples, "
                       f"{large} for 16", "No Python loop over examples: "
                       "jax.vmap maps the function over the batch axis.")
    return Outcome(name, "pass", f"{large} kernels either way")


vmap_loss = Exercise(
    "Exercise 5.3: per-example losses without a loop",
    [matches_reference(batched_loss_solution, lambda: [_batch(4), _batch(9)],
                       rtol=1e-5), _flat_kernels,
     faster_than(batched_loss_starter, lambda: _batch(64))],
    hints=["vmap's in_axes says which arguments carry the batch: the "
           "parameters are shared by every example."],
    reread="5.4 vmap instead of a Python loop",
    chapter="05_transformations", answer="batched_loss", level="stretch",
    starter=batched_loss_starter, solution=batched_loss_solution)
