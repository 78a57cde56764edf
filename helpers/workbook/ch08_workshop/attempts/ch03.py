"""Chapter 3 (Kernel launches): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations


import jax
import jax.numpy as jnp

from helpers.workbook.ch03_launches import exercises as launches_exercises
from helpers.workbook.ch03_launches import variants


# --- 3.1 the noise drawn before the loop ------------------------------------

def fast_unrolled(weights, key):
    # two steps per pass, each still drawing its noise: the same launches
    # per step, in a loop of 100 passes
    pos = variants.positive(weights)

    def two_steps(i, momentum):
        for j in (0, 1):
            noise = launches_exercises.step_noise(key, 2 * i + j)
            momentum = variants.force(pos, momentum) + noise
        return momentum

    return jax.lax.fori_loop(0, launches_exercises.EXERCISE_STEPS // 2,
                             two_steps, jnp.zeros(variants.STATE))


def fast_noise_in_scan(weights, key):
    pos = variants.positive(weights)

    def step(momentum, i):
        return variants.force(pos, momentum) + launches_exercises.step_noise(
            key, i), None

    momentum, _ = jax.lax.scan(step, jnp.zeros(variants.STATE),
                               jnp.arange(launches_exercises.EXERCISE_STEPS))
    return momentum


def fast_other_numbers(weights, key):
    noise = jax.random.normal(key, (launches_exercises.EXERCISE_STEPS,
                                    *variants.STATE))
    momentum, _ = jax.lax.scan(
        variants.hoisted_step(variants.positive(weights)),
        jnp.zeros(variants.STATE), noise)
    return momentum


def fast_traced_bound(weights, key):
    # the noise drawn first, but a while loop whose bound is an array:
    # every step also runs the condition
    noise = jax.vmap(lambda i: launches_exercises.step_noise(key, i))(
        jnp.arange(launches_exercises.EXERCISE_STEPS))
    pos = variants.positive(weights)

    def body(state):
        i, momentum = state
        return i + 1, variants.force(pos, momentum) + noise[i]

    # always EXERCISE_STEPS, but only known when it runs
    bound = jnp.where(jax.random.uniform(key) < 2.0,
                      launches_exercises.EXERCISE_STEPS, 0)
    return jax.lax.while_loop(lambda s: s[0] < bound, body,
                              (0, jnp.zeros(variants.STATE)))[1]


def fast_noise_in_jitted_helper(weights, key):
    # the noise still drawn in the loop, hidden inside a jitted helper
    pos = variants.positive(weights)
    noisy = jax.jit(lambda i: launches_exercises.step_noise(key, i))

    def step(momentum, i):
        return variants.force(pos, momentum) + noisy(i), None

    return jax.lax.scan(step, jnp.zeros(variants.STATE),
                        jnp.arange(launches_exercises.EXERCISE_STEPS))[0]


def fast_fori(weights, key):
    steps = jnp.arange(launches_exercises.EXERCISE_STEPS)
    noise = jax.vmap(lambda i: launches_exercises.step_noise(key, i))(steps)
    pos = variants.positive(weights)

    def body(i, momentum):
        return variants.force(pos, momentum) + noise[i]

    return jax.lax.fori_loop(0, launches_exercises.EXERCISE_STEPS, body,
                             jnp.zeros(variants.STATE))


def fast_keys_first(weights, key):
    keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(
        jnp.arange(launches_exercises.EXERCISE_STEPS))
    noise = jax.vmap(lambda k: jax.random.normal(k, variants.STATE))(keys)
    pos = variants.positive(weights)

    def step(momentum, n):
        return variants.force(pos, momentum) + n, None

    return jax.lax.scan(step, jnp.zeros(variants.STATE), noise)[0]


# --- 3.2 a step fused_scan accepts ------------------------------------------

def filter_roll(history, x):
    history = jnp.roll(history, -1).at[-1].set(x)
    return history, jnp.tanh(history.mean())


def filter_shift_backwards(history, x):
    shift = jnp.eye(launches_exercises.TAPS, k=-1, dtype=history.dtype)
    last = jnp.arange(launches_exercises.TAPS) == launches_exercises.TAPS - 1
    history = shift @ history + jnp.where(last, x, 0.0)
    return history, jnp.tanh(history.mean())


def filter_no_tanh(history, x):
    shift = jnp.eye(launches_exercises.TAPS, k=1, dtype=history.dtype)
    last = jnp.arange(launches_exercises.TAPS) == launches_exercises.TAPS - 1
    history = shift @ history + jnp.where(last, x, 0.0)
    return history, history.mean()


def filter_where(history, x):
    taps = launches_exercises.TAPS
    index = jnp.arange(taps)
    moved = jnp.eye(taps, k=1, dtype=history.dtype) @ history
    history = jnp.where(index == taps - 1, x, moved)
    return history, jnp.tanh(jnp.sum(history) / taps)


def filter_one_hot(history, x):
    taps = launches_exercises.TAPS
    shift = jnp.eye(taps, k=1, dtype=history.dtype)
    slot = (jnp.arange(taps) == taps - 1).astype(history.dtype)
    history = jnp.dot(shift, history) + x * slot
    return history, jnp.tanh(history.mean())


# --- 3.3 a trip count XLA can see -----------------------------------------

def make_loop_traced_lambda():
    return jax.jit(lambda w, k, s: variants.run_steps(w, k, s))


def make_loop_not_jitted():
    return variants.run_steps


def make_loop_changed_body():
    return jax.jit(lambda w, k, steps: variants.run_steps(w, k, steps + 1),
                   static_argnums=2)


def make_loop_by_name():
    return jax.jit(variants.run_steps, static_argnames="steps")


def make_loop_wrapped():
    def loop(weights, key, steps):
        return variants.run_steps(weights, key, steps)

    return jax.jit(loop, static_argnums=(2,))


ATTEMPTS = {
    "fast": {"starter": "does not depend on the momentum",
             "wrong": {fast_unrolled: "does not depend on the momentum",
                       fast_noise_in_scan: "does not depend on the",
                       fast_noise_in_jitted_helper: "does not depend on",
                       fast_traced_bound: "loop's bound a Python number",
                       fast_other_numbers: "exactly the same numbers"},
             "right": [fast_fori, fast_keys_first]},
    "filter_step": {"starter": "matrix product or a mask",
                    "wrong": {filter_roll: "matrix product or a mask",
                              filter_shift_backwards: "element by element",
                              filter_no_tanh: "element by element"},
                    "right": [filter_where, filter_one_hot]},
    "make_loop": {"starter": "take an argument as static",
                  "wrong": {make_loop_traced_lambda:
                            "take an argument as static",
                            make_loop_not_jitted: "must return a jitted",
                            make_loop_changed_body: "Keep the loop body"},
                  "right": [make_loop_by_name, make_loop_wrapped]},
}
