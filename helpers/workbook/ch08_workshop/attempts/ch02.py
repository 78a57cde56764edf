"""Chapter 2 (Fusion): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations


import jax.numpy as jnp
import numpy as np


# --- 2.1 K=25 through the reduction emitter ---------------------------------

def bmv_einsum(a, b):
    return jnp.einsum("...ik,...kj->...ij", a, b)


def bmv_pad_to_30(a, b):
    pad = [(0, 0)] * (a.ndim - 1) + [(0, 30 - a.shape[-1])]
    products = jnp.pad(a, pad) * jnp.pad(b[..., 0], pad[1:])[..., None, :]
    return products.sum(-1, keepdims=True)


def bmv_dropped_axis(a, b):
    return (a * b[..., 0][..., None, :]).sum(-1)


def bmv_pad_to_64(a, b):
    k = a.shape[-1]
    zeros_a = jnp.zeros((*a.shape[:-1], 64 - k), a.dtype)
    zeros_b = jnp.zeros((*b.shape[:-2], 64 - k, 1), b.dtype)
    wide_a = jnp.concatenate([a, zeros_a], axis=-1)
    wide_b = jnp.concatenate([b, zeros_b], axis=-2)
    return jnp.sum(wide_a * jnp.swapaxes(wide_b, -1, -2), axis=-1,
                   keepdims=True)


def bmv_pad_then_matmul(a, b):
    k = a.shape[-1]
    wide = 32 if k <= 32 else k
    a = jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, wide - k)])
    b = jnp.pad(b, [(0, 0)] * (b.ndim - 2) + [(0, wide - k), (0, 0)])
    return (a * b[..., 0][..., None, :]).sum(axis=-1)[..., None]


# --- 2.2 predict the fusion kind --------------------------------------------

def predict_multiples(k):
    return "kInput" if k % 32 == 0 else "kLoop"


def predict_threshold(k):
    return "kInput" if k >= 32 else "kLoop"


def predict_upside_down(k):
    return "kLoop" if k >= 32 or 32 % k == 0 else "kInput"


def predict_bit_trick(k):
    power_of_two = k & (k - 1) == 0
    return "KINPUT" if k >= 32 or power_of_two else "kloop"


def predict_table(k):
    return "kInput" if k in {2, 4, 8, 16} or k > 31 else "kLoop"


# --- 2.3 bytes behind the bandwidth axis -----------------------------------

def bytes_no_output(k, itemsize):
    return itemsize * 1e6 * (3 * k + k)


def bytes_no_batch(k, itemsize):
    return itemsize * (3 * k + k + 3)


def bytes_bits(k, itemsize):
    return 8 * itemsize * 1e6 * (4 * k + 3)


def bytes_grouped(k, itemsize):
    return itemsize * 1_000_000 * (4 * k + 3)


def bytes_by_operand(k, itemsize):
    a, b, out = (1e6, 3, k), (1e6, k, 1), (1e6, 3, 1)
    return itemsize * sum(np.prod(s) for s in (a, b, out))


ATTEMPTS = {
    "bmv": {"starter": "rows of at least 32",
            "wrong": {bmv_einsum: "rows of at least 32",
                      bmv_pad_to_30: "rows of at least 32",
                      bmv_dropped_axis: "element by element"},
            "right": [bmv_pad_to_64, bmv_pad_then_matmul]},
    "predict": {"starter": "powers of two",
                "wrong": {predict_multiples: "powers of two",
                          predict_threshold: "powers of two",
                          predict_upside_down: "powers of two"},
                "right": [predict_bit_trick, predict_table]},
    "problem_bytes": {"starter": "both inputs and the output",
                      "wrong": {bytes_no_output: "both inputs and the",
                                bytes_no_batch: "both inputs and the",
                                bytes_bits: "both inputs and the"},
                      "right": [bytes_grouped, bytes_by_operand]},
}
