"""Chapter 3's exercises: rewrite the noisy-MLP loop so each step launches
fewer kernels (3.1), rewrite a filter's step so `fused_scan` can compile
it into one kernel (3.2), and give XLA a trip count it can see (3.3). The
loop itself is in `helpers.workbook.ch03_launches.variants`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from helpers.grading.exercises import (
    Exercise,
    Outcome,
    hlo_fact,
    jaxpr_fact,
    described,
    description_of,
    learner_error,
    matches_reference,
)
from helpers.pallas.scan import fused_scan
from helpers.workbook.ch03_launches.variants import (
    STATE,
    Weights,
    force,
    hoisted_step,
    init_weights,
    positive,
    step_loop_launches,
)
from helpers.xla import hlo

# --- Exercise 3.1: the noise drawn before the loop ---------------------------

EXERCISE_STEPS = 200


def step_noise(key: jax.Array, i: Any, dtype: Any = jnp.float32
               ) -> jax.Array:
    """The noise of step ``i``: a key folded with the step number, so any
    step's noise can be drawn without the ones before it."""
    return jax.random.normal(jax.random.fold_in(key, i), STATE, dtype)


def starter(weights: Weights, key: jax.Array) -> jax.Array:
    """Exercise 3.1 starter: a while loop that draws each step's noise
    inside the loop."""
    def body(state):
        i, momentum = state
        noise = step_noise(key, i)
        return i + 1, force(positive(weights), momentum) + noise

    _, momentum = jax.lax.while_loop(
        lambda s: s[0] < EXERCISE_STEPS, body, (0, jnp.zeros(STATE)))
    return momentum


def solution(weights: Weights, key: jax.Array) -> jax.Array:
    """Exercise 3.1: every step's noise drawn at once (the same numbers),
    then a scan whose body is only the MLP."""
    steps = jnp.arange(EXERCISE_STEPS)
    noise = jax.vmap(lambda i: step_noise(key, i))(steps)
    momentum, _ = jax.lax.scan(hoisted_step(positive(weights)),
                               jnp.zeros(STATE), noise)
    return momentum


def _exercise_inputs(seed: int) -> tuple[Weights, jax.Array]:
    key_w, key = jax.random.split(jax.random.key(seed))
    return init_weights(key_w), key


def loop_launches(text: str) -> int | None:
    """Kernels one pass of the step loop's body launches (None: no loop
    of EXERCISE_STEPS trips)."""
    return step_loop_launches(text, EXERCISE_STEPS)


def launches_per_step(text: str) -> float:
    """Kernels one call launches, loops unrolled by their trip counts,
    per step: what a rewrite saves however it shapes the loop (a loop of
    100 passes doing two steps each saves nothing).

    Raises:
        ValueError: a loop's trip count is unknown when compiling.
    """
    return hlo.kernel_count(text) / EXERCISE_STEPS


@functools.lru_cache(maxsize=1)
def _starter_launches() -> float:
    return launches_per_step(hlo.compiled_text(starter,
                                               *_exercise_inputs(0)))


# Kernels a rewrite may add once per call, before its loop: drawing every
# step's noise at once took 3 on an H100 (XLA:GPU, jax 0.11.2), 602 kernels
# for the starter and 605 for the solution, over 200 steps.
ONCE_PER_CALL = 4


def _no_more_launches(text: str) -> bool | str:
    """No more kernels per step than the starter, the few kernels a call
    launches once (`ONCE_PER_CALL`) aside, and no loop whose trip count
    is only known at run time. (Not "fewer": XLA:GPU in jax 0.11.2 fuses
    the starter's noise into its MLP kernels on an H100, 3 kernels per
    step with the noise in the loop or out of it.)"""
    if any(w.trip_count is None for w in hlo.while_loops(text)):
        return ("a loop's trip count is unknown when compiling, so every "
                "step also runs its condition and waits for it")
    return launches_within(launches_per_step(text), _starter_launches())


def launches_within(per_step: float, starter: float) -> bool | str:
    """True when ``per_step`` kernels a step are no more than the
    starter's, with `ONCE_PER_CALL` kernels spread over the steps; else
    what is wrong."""
    if per_step > starter + ONCE_PER_CALL / EXERCISE_STEPS:
        return (f"{per_step:.2f} kernels per step; the starter launches "
                f"{starter:.2f}, and a call may add {ONCE_PER_CALL} "
                "kernels once, before its loop")
    return True


def kernels_for_gpu() -> dict[str, int]:
    """The kernels one call of the starter and of the solution launches,
    loops unrolled, compiled for an H100 (run through
    `helpers.xla.crosscompile.run`)."""
    from helpers.xla import crosscompile
    return {fn.__name__: hlo.kernel_count(crosscompile.compile_for_gpu(
                fn, *_exercise_inputs(0)).as_text())
            for fn in (starter, solution)}


RANDOM = {"random_bits", "random_fold_in", "random_split", "threefry2x32",
          "rng_bit_generator", "rng_uniform"}


def _loop_bodies(jaxpr: Any) -> list[Any]:
    """The bodies of every while and scan in ``jaxpr``, at any depth
    (inside a jit, a vmap's batched loop, another loop)."""
    bodies = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in ("while", "scan"):
            body = eqn.params.get("body_jaxpr", eqn.params.get("jaxpr"))
            bodies.append(getattr(body, "jaxpr", body))
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else [param]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    bodies += _loop_bodies(inner)
    return bodies


def _no_noise_in_loops(closed: Any) -> bool | str:
    """No loop's body draws random numbers (jaxpr primitives `RANDOM`)."""
    from helpers.pallas.jaxprs import primitive_names
    drawn = set()
    for body in _loop_bodies(closed.jaxpr):
        drawn |= primitive_names(body) & RANDOM
    if drawn:
        return ("a loop's body still draws random numbers ("
                + ", ".join(sorted(drawn)) + ")")
    return True


fewer_launches = Exercise(
    "Exercise 3.1: the noise drawn before the loop",
    [matches_reference(starter, lambda: [_exercise_inputs(s) for s in (0, 1)],
                       rtol=1e-4, atol=1e-5,
                       hint="Draw exactly the same numbers: step i's noise "
                            "comes from fold_in(key, i)."),
     jaxpr_fact("no loop draws noise: every step's noise is drawn "
                "before the loop", _no_noise_in_loops,
                lambda: _exercise_inputs(0),
                hint="Which work in the body does not depend on the "
                     "momentum? It can all happen before the loop."),
     hlo_fact("no more kernels per step than the starter (all the call "
              "launches over its 200 steps, a few before the loop aside)",
              _no_more_launches, lambda: _exercise_inputs(0),
              hint="Keep the loop's bound a Python number, and move work "
                   "out of the body rather than into it.")],
    hints=["Every step's noise depends only on the key and the step's index, "
           "so all of it can be drawn before the loop, in one call.",
           "Then loop over the noise you drew: scan hands each step its slice"
           " of xs."],
    reread="3.2 The program in plain JAX",
    chapter="03_launches", answer="fast", level="core",
    starter=starter, solution=solution)


# --- Exercise 3.2: a step fused_scan accepts ---------------------------------

TAPS = 4  # the filter below remembers the last TAPS inputs


def filter_reference(history: jax.Array, x: jax.Array
                     ) -> tuple[jax.Array, jax.Array]:
    """A step of a moving-average filter with a shift register: drop the
    oldest input, append ``x``, output the mean. Written with a slice and a
    concatenation, which Triton cannot compile."""
    history = jnp.concatenate([history[1:], x[None]])
    return history, jnp.tanh(history.mean())


def filter_starter(history: jax.Array, x: jax.Array
                   ) -> tuple[jax.Array, jax.Array]:
    """Exercise 3.2 starter: the reference step itself."""
    return filter_reference(history, x)


def filter_solution(history: jax.Array, x: jax.Array
                    ) -> tuple[jax.Array, jax.Array]:
    """Exercise 3.2: the same shift written as a product with a shift
    matrix plus ``x`` placed by a mask: elementwise ops, a dot, a sum."""
    shift = jnp.eye(TAPS, k=1, dtype=history.dtype)  # moves i+1 to i
    last = jnp.arange(TAPS) == TAPS - 1
    history = shift @ history + jnp.where(last, x, 0.0)
    return history, jnp.tanh(history.mean())


def _filter_cases() -> list[tuple[jax.Array, jax.Array]]:
    rng = np.random.default_rng(3)
    return [(jnp.asarray(rng.normal(size=TAPS), jnp.float32),
             jnp.asarray(rng.normal(size=n), jnp.float32)) for n in (5, 40)]


@described("fused_scan accepts the step (checked against Triton)")
def _accepted_by_fused_scan(step: Callable[..., Any]) -> Outcome:
    name = description_of(_accepted_by_fused_scan)
    history, xs = _filter_cases()[0]
    try:
        fused_scan(step, history, xs, backend="triton")
    except NotImplementedError as err:
        return Outcome(name, "fail", str(err).split(". ")[0],
                       "Slices and concatenations have no Triton lowering: "
                       "move elements with a matrix product or a mask.")
    except Exception as err:  # the learner's code may fail anyhow
        return learner_error(name, err)
    return Outcome(name, "pass", "the kernel lowers to Triton IR")


# lax.scan of the reference step: its answers are computed on the first
# check and kept (`matches_reference`).
_matches_lax_scan = matches_reference(
    lambda h, xs: jax.lax.scan(filter_reference, h, xs), _filter_cases,
    rtol=1e-5, atol=1e-6)


@described(description_of(_matches_lax_scan))
def _same_as_lax_scan(step: Callable[..., Any]) -> Outcome:
    return _matches_lax_scan(lambda h, xs: fused_scan(
        step, h, xs, backend="triton", check=False))


fused_step = Exercise(
    "Exercise 3.2: a step fused_scan accepts",
    [_accepted_by_fused_scan, _same_as_lax_scan],
    hints=["fused_scan accepts element-wise operations and small matrix "
           "products: a shift by one can be a product with a fixed matrix.",
           "Putting x in the last slot needs no indexed update: compare an "
           "index vector with n - 1 and select."],
    reread="3.8 One kernel for the whole loop",
    chapter="03_launches", answer="filter_step", level="stretch",
    starter=filter_starter, solution=filter_solution)


# --- Exercise 3.3: a trip count XLA can see ---------------------------------

STEPS_33 = 200


def make_loop_starter() -> Callable[..., jax.Array]:
    """Return the thread's loop, jitted, to be called as
    ``loop(weights, key, 200)``."""
    from helpers.workbook.ch03_launches import variants
    return jax.jit(variants.run_steps)  # steps arrives traced


def make_loop_solution() -> Callable[..., jax.Array]:
    """With ``steps`` static, the bound is a constant of the program; XLA
    proves the trip count and skips the condition's round trip."""
    from helpers.workbook.ch03_launches import variants
    return jax.jit(variants.run_steps, static_argnums=2)


@described("same result, and the loop's trip count known when compiling")
def _trip_count(make_loop: Callable[[], Any]
                ) -> Outcome:
    from helpers.workbook.ch03_launches import variants
    name = description_of(_trip_count)
    hint = ("A bound passed as an argument is traced: its value is unknown "
            "when compiling. jax.jit can take an argument as static, "
            "a value fixed when compiling.")
    key_w, key = jax.random.split(jax.random.key(33))
    weights = variants.init_weights(key_w)
    found = []
    # Two step counts: a loop that ignores ``steps`` cannot pass both.
    for steps in (STEPS_33, STEPS_33 * 3 // 4):
        try:
            loop = make_loop()
            text = loop.lower(weights, key, steps).compile().as_text()
            got = loop(weights, key, steps)
        except Exception as err:
            return learner_error(name, err, "make_loop() must return a "
                                 "jitted function of (weights, key, "
                                 "steps).")
        want = variants.while_traced(weights, key, steps)
        if not np.allclose(got, want, rtol=1e-5):
            return Outcome(name, "fail", f"with steps={steps} the result "
                           "differs from the thread's loop", "Keep the "
                           "loop body; change only how steps reaches it.")
        counts = [w.trip_count for w in hlo.while_loops(text)]
        if not counts or None in counts:
            said = ", ".join("not proved" if c is None else str(c)
                             for c in counts) or "no loop found"
            return Outcome(name, "fail", f"trip counts: {said}", hint)
        if steps not in counts:
            runs = ", ".join(map(str, counts))
            return Outcome(name, "fail", f"steps={steps}, but the loops "
                           f"run {runs} times", "Keep the loop body; "
                           "change only how steps reaches it.")
        found.append(counts)
    return Outcome(name, "pass", "trip counts: " + "; ".join(
        ", ".join(map(str, counts)) for counts in found))


static_trip_count = Exercise(
    "Exercise 3.3: a trip count XLA can see", [_trip_count],
    hints=["hlo.while_loops(text) shows each loop's trip count."],
    reread="3.4 Why a while loop waits for the host",
    chapter="03_launches", answer="make_loop", level="warm-up",
    starter=make_loop_starter, solution=make_loop_solution)
