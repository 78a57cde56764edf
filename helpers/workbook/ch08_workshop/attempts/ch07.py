"""Chapter 7 (Multi-GPU communication): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations


import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from helpers.multi_device import sendrecv
from helpers.workbook.ch07_multi_gpu import exercises as multi_gpu_exercises


# --- 7.1 one all-reduce ---------------------------------------------------

def specs_swapped():
    return {"w_in": P("model", None), "w_out": P(None, "model")}


def specs_both_columns():
    return {"w_in": P(None, "model"), "w_out": P(None, "model")}


def specs_only_w_in():
    return {"w_in": P(None, "model"), "w_out": P()}


def specs_short_form():
    return {"w_out": P("model"), "w_in": P(None, "model")}


def specs_plain_tuples():
    # tuples and lists mean what PartitionSpecs of them mean
    return {"w_in": (None, "model"), "w_out": ["model", None]}


def specs_axis_names_only():
    return {"w_in": "model", "w_out": "model"}


def specs_tuple_axis():
    return {"w_in": jax.sharding.PartitionSpec(None, ("model",)),
            "w_out": jax.sharding.PartitionSpec(("model",), None)}


# --- 7.2 a ring without deadlock ------------------------------------------

def pass_along_forward_only(y):
    forward = [(s, s + 1) for s in range(multi_gpu_exercises.DEVICES - 1)]
    sent = sendrecv.psend(y, "stage", forward)
    like = jax.ShapeDtypeStruct(y.shape, y.dtype)
    return sendrecv.precv(sent, like, "stage", forward)


def pass_along_nothing(y):
    return y


def pass_along_back_edge_by_send(y):
    back = [(multi_gpu_exercises.DEVICES - 1, 0)]
    sent = sendrecv.psend(y, "stage", back)
    like = jax.ShapeDtypeStruct(y.shape, y.dtype)
    return sendrecv.precv(sent, like, "stage", back)


def pass_along_one_permute(y):
    devices = multi_gpu_exercises.DEVICES
    ring = [(s, (s + 1) % devices) for s in range(devices)]
    return jax.lax.ppermute(y, "stage", ring)


def pass_along_two_permutes(y):
    last = multi_gpu_exercises.DEVICES - 1
    forward = [(s, s + 1) for s in range(last)]
    from_previous = jax.lax.ppermute(y, "stage", forward)
    from_last = jax.lax.ppermute(y, "stage", [(last, 0)])
    return jnp.where(jax.lax.axis_index("stage") == 0, from_last,
                     from_previous)


# --- 7.3 all-reduce from ring shifts ---------------------------------------

def ring_all_gather(x, axis):
    return jax.lax.all_gather(x, axis).sum(0)


def ring_whole_vector(x, axis):
    p = jax.lax.axis_size(axis)
    shift = [(s, (s + 1) % p) for s in range(p)]
    total, moving = x, x
    for _ in range(p - 1):
        moving = jax.lax.ppermute(moving, axis, shift)
        total = total + moving
    return total  # right sums, but p - 1 shifts of everything


def ring_reduce_scatter_only(x, axis):
    p = jax.lax.axis_size(axis)
    me = jax.lax.axis_index(axis)
    chunks = x.reshape(p, -1)
    shift = [(s, (s + 1) % p) for s in range(p)]
    acc = chunks[me]
    for k in range(p - 1):
        acc = jax.lax.ppermute(acc, axis, shift) + chunks[(me - 1 - k) % p]
    return jnp.zeros_like(chunks).at[(me + 1) % p].set(acc).reshape(x.shape)


def ring_backwards(x, axis):
    p = jax.lax.axis_size(axis)
    me = jax.lax.axis_index(axis)
    chunks = x.reshape(p, -1)
    back = [(s, (s - 1) % p) for s in range(p)]  # receive from me + 1
    acc = chunks[me]
    for k in range(p - 1):
        acc = jax.lax.ppermute(acc, axis, back) + chunks[(me + 1 + k) % p]
    out = jnp.zeros_like(chunks).at[(me - 1) % p].set(acc)
    for k in range(p - 1):
        acc = jax.lax.ppermute(acc, axis, back)
        out = out.at[(me + k) % p].set(acc)
    return out.reshape(x.shape)


def ring_one_hot_writes(x, axis):
    p = jax.lax.axis_size(axis)
    me = jax.lax.axis_index(axis)
    chunks = x.reshape(p, -1)
    shift = [(s, (s + 1) % p) for s in range(p)]
    rows = jnp.arange(p)[:, None]
    acc = chunks[me]
    for k in range(p - 1):
        acc = jax.lax.ppermute(acc, axis, shift) + chunks[(me - 1 - k) % p]
    out = jnp.where(rows == (me + 1) % p, acc, 0.0)
    for k in range(p - 1):
        acc = jax.lax.ppermute(acc, axis, shift)
        out = jnp.where(rows == (me - k) % p, acc, out)
    return out.reshape(x.shape)


def ring_in_loops(x, axis):
    # the same ring, its shifts in two fori_loops: 6 permutes run per call
    p = jax.lax.axis_size(axis)
    me = jax.lax.axis_index(axis)
    chunks = x.reshape(p, -1)
    shift = [(s, (s + 1) % p) for s in range(p)]

    def reduce_step(k, acc):
        return jax.lax.ppermute(acc, axis, shift) + chunks[(me - 1 - k) % p]

    acc = jax.lax.fori_loop(0, p - 1, reduce_step, chunks[me])
    out = jnp.zeros_like(chunks).at[(me + 1) % p].set(acc)

    def gather_step(k, state):
        acc, out = state
        acc = jax.lax.ppermute(acc, axis, shift)
        return acc, out.at[(me - k) % p].set(acc)

    return jax.lax.fori_loop(0, p - 1, gather_step, (acc, out))[1].reshape(
        x.shape)


ATTEMPTS = {
    "block_specs": {"starter": "part of w_out that reads",
                    "wrong": {specs_swapped: "part of w_out that reads",
                              specs_both_columns: "part of w_out that reads",
                              specs_only_w_in: "part of w_out that reads",
                              specs_axis_names_only: "one spec per weight"},
                    "right": [specs_short_form, specs_tuple_axis,
                              specs_plain_tuples]},
    "pass_along": {"starter": "edge 3 -> 0",
                   "wrong": {pass_along_forward_only: "reach the next one",
                             pass_along_nothing: "reach the next one",
                             pass_along_back_edge_by_send:
                                 "reach the next one"},
                   "right": [pass_along_one_permute,
                             pass_along_two_permutes]},
    "ring_psum": {"starter": "No psum",
                  "wrong": {ring_all_gather: "No psum",
                            ring_whole_vector: "No psum",
                            ring_reduce_scatter_only: "which chunk"},
                  "right": [ring_backwards, ring_one_hot_writes,
                            ring_in_loops]},
}
