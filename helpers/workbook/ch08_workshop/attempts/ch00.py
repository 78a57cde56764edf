"""Chapter 0 (How to use this book): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations


import jax.numpy as jnp


# --- 0.1 root mean square ------------------------------------------------

def rms_no_square(x):
    return jnp.sqrt(jnp.mean(x))


def rms_no_root(x):
    return jnp.mean(jnp.square(x))


def rms_python_loop(x):
    total = 0.0
    for v in x:
        total = total + v * v
    return jnp.sqrt(total / x.shape[0])


def rms_as_a_float(x):
    # right numbers eagerly, but float() of a traced value cannot compile
    return jnp.sqrt(float(jnp.mean(x * x)))


def rms_norm(x):
    return jnp.linalg.norm(x) / jnp.sqrt(x.size)


def rms_dot(x):
    return jnp.sqrt(x @ x / x.shape[0])


ATTEMPTS = {
    "rms": {"starter": "Square first",
            "wrong": {rms_no_square: "Square first",
                      rms_no_root: "Square first",
                      rms_python_loop: "no Python loop",
                      rms_as_a_float: "instead of float()"},
            "right": [rms_norm, rms_dot]},
}
