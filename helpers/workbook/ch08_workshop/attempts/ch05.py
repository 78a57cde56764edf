"""Chapter 5 (Transformations): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations


import jax
import jax.numpy as jnp

from helpers.workbook.ch05_transformations import transforms


# --- 5.1 trace once --------------------------------------------------

def mean_of_first_formula(x, n):
    return (n + 1) / 2  # right for 1, 2, 3, ... only


def mean_of_first_whole_length(x, n):
    keep = jnp.arange(x.shape[0]) < n
    return jnp.mean(jnp.where(keep, x, 0.0))


def mean_of_first_int(x, n):
    return jnp.mean(x[:int(n)])


def mean_of_first_weights(x, n):
    return jnp.sum(x * (jnp.arange(x.size) < n)) / n


def mean_of_first_cumsum(x, n):
    return jnp.cumsum(x)[n - 1] / n


# --- 5.2 donate the parameters ----------------------------------------------

def make_step_donates_x():
    return jax.jit(transforms.sgd_step, donate_argnums=1)


def make_step_not_jitted():
    return transforms.sgd_step


def make_step_wrong_rate():
    return jax.jit(lambda p, x, y: transforms.sgd_step(p, x, y, lr=0.2),
                   donate_argnums=0)


def make_step_by_name():
    return jax.jit(transforms.sgd_step, donate_argnames="params")


def make_step_wrapped():
    def step(params, x, y):
        return transforms.sgd_step(params, x, y)

    return jax.jit(step, donate_argnums=(0,))


# --- 5.3 per-example losses ------------------------------------------------

def batched_lax_map(params, xs, ys):
    return jax.lax.map(lambda xy: transforms.example_loss(params, *xy),
                       (xs, ys))


def batched_mean(params, xs, ys):
    return jnp.mean(jax.vmap(transforms.example_loss, in_axes=(None, 0, 0))(
        params, xs, ys))


def batched_wrong_pairs(params, xs, ys):
    return jax.vmap(transforms.example_loss, in_axes=(None, 0, 0))(
        params, xs, ys[::-1])


def batched_closure(params, xs, ys):
    return jax.vmap(lambda x, y: transforms.example_loss(params, x, y))(
        xs, ys)


def batched_tree_axes(params, xs, ys):
    axes = (jax.tree.map(lambda _: None, params), 0, 0)
    return jax.vmap(transforms.example_loss, in_axes=axes)(params, xs, ys)


ATTEMPTS = {
    "mean_of_first": {"starter": "mask the entries beyond n",
                      "wrong": {mean_of_first_formula: "Divide by n",
                                mean_of_first_whole_length: "Divide by n",
                                mean_of_first_int: "mask the entries"},
                      "right": [mean_of_first_weights,
                                mean_of_first_cumsum]},
    "make_step": {"starter": "which one holds the parameters",
                  "wrong": {make_step_donates_x:
                            "which one holds the parameters",
                            make_step_not_jitted: "jax.jit-ed function",
                            make_step_wrong_rate: "Keep sgd_step as it is"},
                  "right": [make_step_by_name, make_step_wrapped]},
    "batched_loss": {"starter": "jax.vmap maps",
                     "wrong": {batched_lax_map: "jax.vmap maps",
                               batched_mean: "element by element",
                               batched_wrong_pairs: "element by element"},
                     "right": [batched_closure, batched_tree_axes]},
}
