"""Chapter 1 (Measuring): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations

import time
import timeit

import jax
import jax.numpy as jnp
import numpy as np


# --- 1.1 an honest timer --------------------------------------------------

def timer_with_compile(f, x, n=10):
    start = time.perf_counter()
    for _ in range(n):
        f(x).block_until_ready()
    return (time.perf_counter() - start) / n


def timer_total(f, x, n=10):
    f(x).block_until_ready()
    start = time.perf_counter()
    for _ in range(n):
        f(x).block_until_ready()
    return time.perf_counter() - start  # forgot to divide by n


def timer_nan(f, x, n=10):
    f(x).block_until_ready()
    return float("nan")


def timer_timeit(f, x, n=10):
    f(x).block_until_ready()
    runs = timeit.repeat(lambda: f(x).block_until_ready(), number=1,
                         repeat=n)
    return min(runs)


def timer_throughput(f, x, n=10):
    jax.block_until_ready(f(x))
    start = time.perf_counter()
    for _ in range(n):
        last = f(x)
    last.block_until_ready()  # calls queue in order: the last ends last
    return (time.perf_counter() - start) / n


# --- 1.2 the floor of a batched matmul ------------------------------------

def floor_no_output(b, m, k, n, itemsize, bandwidth, flop_rate):
    return max(itemsize * b * (m * k + k * n) / bandwidth,
               2 * b * m * k * n / flop_rate)


def floor_one_flop(b, m, k, n, itemsize, bandwidth, flop_rate):
    return max(itemsize * b * (m * k + k * n + m * n) / bandwidth,
               b * m * k * n / flop_rate)


def floor_added(b, m, k, n, itemsize, bandwidth, flop_rate):
    return (itemsize * b * (m * k + k * n + m * n) / bandwidth
            + 2 * b * m * k * n / flop_rate)


def floor_numpy(b, m, k, n, itemsize, bandwidth, flop_rate):
    sizes = np.array([m * k, k * n, m * n], dtype=np.float64)
    return np.maximum(itemsize * b * sizes.sum() / bandwidth,
                      2.0 * b * m * k * n / flop_rate)


def floor_jax(b, m, k, n, itemsize, bandwidth, flop_rate):
    moved = float(itemsize * b * (m * k + k * n + m * n))
    return jnp.maximum(moved / bandwidth, 2.0 * b * m * k * n / flop_rate)


# --- 1.3 which bound? -----------------------------------------------------

def bound_fixed_intensity(flops, n_bytes, flop_rate, bandwidth):
    return "compute" if flops / n_bytes > 1 else "memory"


def bound_reversed(flops, n_bytes, flop_rate, bandwidth):
    return "compute" if n_bytes / bandwidth >= flops / flop_rate else \
        "memory"


def bound_by_bytes(flops, n_bytes, flop_rate, bandwidth):
    return "memory" if n_bytes > flops else "compute"


def bound_ridge(flops, n_bytes, flop_rate, bandwidth):
    ridge = flop_rate / bandwidth  # flops per byte where the roofs meet
    return "memory" if flops / n_bytes <= ridge else "compute"


def bound_worded(flops, n_bytes, flop_rate, bandwidth):
    times = {"Memory-bound": n_bytes / bandwidth,
             "Compute-bound": flops / flop_rate}
    return max(times, key=times.get)


ATTEMPTS = {
    "time_call": {"starter": "wait until the result is ready",
                  "wrong": {timer_with_compile: "Leave the first",
                            timer_total: "divided by n",
                            timer_nan: "wait until the result is ready"},
                  "right": [timer_timeit, timer_throughput]},
    "matmul_floor": {"starter": "Count every byte",
                     "wrong": {floor_no_output: "Count every byte",
                               floor_one_flop: "k multiplies and k adds",
                               floor_added: "The floor is the larger"},
                     "right": [floor_numpy, floor_jax]},
    "which_bound": {"starter": "Compare the two times",
                    "wrong": {bound_fixed_intensity: "Compare the two",
                              bound_reversed: "Compare the two",
                              bound_by_bytes: "Compare the two"},
                    "right": [bound_ridge, bound_worded]},
}
