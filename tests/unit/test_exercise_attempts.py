"""Every exercise, tried as learners would: the starter and at least three
plausible wrong attempts fail, each with the hint meant for that mistake;
the reference solution and two correct answers written differently pass
(or, where a criterion needs a GPU, pass everything this machine grades).

The exercises come from `helpers.workbook.ch08_workshop.workshop.exercises()`;
ATTEMPTS must cover each of them, so a new exercise cannot go untested.
"""

from __future__ import annotations

import functools
import json
import random
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from helpers.measuring import stats
from helpers.multi_device import sendrecv
from helpers.workbook.ch03_launches import exercises as launches_exercises
from helpers.workbook.ch03_launches import variants
from helpers.workbook.ch05_transformations import transforms
from helpers.workbook.ch06_xla_flags import exercises as xla_flags_exercises
from helpers.workbook.ch06_xla_flags import flag_runs
from helpers.workbook.ch07_multi_gpu import exercises as multi_gpu_exercises
from helpers.workbook.ch08_workshop import workshop
from helpers.xla import hlo

_ROOT = Path(__file__).parents[2]


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


# --- 2.1 K=25 at kInput speed ---------------------------------------------

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


# --- 3.1 fewer launches per step -------------------------------------------

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


# --- 4.1 which is faster ----------------------------------------------------

def decide_one_after_other(run):
    for version in "ab":
        for _ in range(5):
            run(version)
    a = [run("a") for _ in range(200)]
    b = [run("b") for _ in range(200)]
    return stats.compare(a, b)


def decide_too_few(run):
    for _ in range(5):
        run("a")
        run("b")
    a, b = [], []
    for _ in range(5):
        a.append(run("a"))
        b.append(run("b"))
    return stats.compare(a, b)


def decide_returns_medians(run):
    a = [run("a") for _ in range(50)]
    b = [run("b") for _ in range(50)]
    return statistics.median(a), statistics.median(b)


def decide_fixed_alternating(run):
    for _ in range(6):
        run("a")
        run("b")
    a, b = [], []
    for _ in range(300):
        a.append(run("a"))
        b.append(run("b"))
    return stats.compare(a, b)


def decide_shuffled_pairs(run):
    order = random.Random(7)
    for version in "ababab":
        run(version)
    times = {"a": [], "b": []}
    for _ in range(280):
        pair = ["a", "b"]
        order.shuffle(pair)
        for version in pair:
            times[version].append(run(version))
    return stats.compare(times["a"], times["b"])


# --- 4.2 nine tests, one decision -------------------------------------------

def significant_bonferroni(p_values, alpha=0.05):
    return [p < alpha / len(p_values) for p in p_values]


def significant_holm_without_stopping(p_values, alpha=0.05):
    m = len(p_values)
    calls = [False] * m
    for k, index in enumerate(np.argsort(p_values)):
        calls[index] = p_values[index] < alpha / (m - k)
    return calls


def significant_halved(p_values, alpha=0.05):
    return [p < alpha / 2 for p in p_values]


def significant_array(p_values, alpha=0.05):
    p = np.asarray(p_values)
    order = np.argsort(p)
    thresholds = alpha / (len(p) - np.arange(len(p)))
    passing = p[order] < thresholds
    first_failure = len(p) if passing.all() else int(np.argmin(passing))
    calls = np.zeros(len(p), dtype=bool)
    calls[order[:first_failure]] = True
    return calls  # a NumPy boolean array, not a list


def significant_while(p_values, alpha=0.05):
    ranked = sorted(range(len(p_values)), key=lambda i: p_values[i])
    calls = [False] * len(p_values)
    k = 0
    while k < len(ranked) and \
            p_values[ranked[k]] < alpha / (len(ranked) - k):
        calls[ranked[k]] = True
        k += 1
    return tuple(calls)


# --- 4.3 time per scope ------------------------------------------------------

def totals_count(kernels):
    return kernels.groupby("scope")["dur_us"].count().to_dict()


def totals_max(kernels):
    return kernels.groupby("scope")["dur_us"].max().to_dict()


def totals_overall(kernels):
    total = kernels["dur_us"].sum()
    return {scope: total for scope in kernels["scope"].unique()}


def totals_series(kernels):
    return kernels.groupby("scope")["dur_us"].sum()  # a Series


def totals_loop(kernels):
    totals = {}
    for scope, duration in zip(kernels["scope"], kernels["dur_us"]):
        totals[scope] = totals.get(scope, 0.0) + float(duration)
    return totals


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


# --- 6.1 find the option ---------------------------------------------

def options_with_dashes():
    return {"--xla_cpu_experimental_ynn_fusion_type": ""}


def options_other_flag():
    return {"xla_backend_optimization_level": 0}


def options_misspelt():
    return {"xla_cpu_experimental_ynn_fusion_types": ""}


def options_from_flag_text():
    flag = "--xla_cpu_experimental_ynn_fusion_type="
    name, _, value = flag.removeprefix("--").partition("=")
    return {name: value}


def options_dict_call():
    return dict(xla_cpu_experimental_ynn_fusion_type="")


# --- 6.2 set the flag where XLA reads it ---------------------------------

def fusions_under_same_process(xla_flags):
    return hlo.launch_summary(_compile_reduction_here({}))["fusion kinds"]


def fusions_under_child_without_flags(xla_flags):
    return flag_runs.in_child("reduction", "", {"JAX_PLATFORMS": "cpu"})[
        "fusion kinds"]


def fusions_under_constant(xla_flags):
    return {"kLoop": 1}


def fusions_under_any_flag(xla_flags):
    # hard-coded from the flag's text: any flag "changes" the fusions
    return {"kLoop": 3} if xla_flags else {"kCustom": 1}


def _compile_reduction_here(options):
    fn, args = flag_runs.reduction_program(64)
    args = jax.device_put(args, jax.devices("cpu")[0])
    return fn.lower(*args).compile(compiler_options=options).as_text()


def fusions_under_compiler_options(xla_flags):
    # XLA_FLAGS parsed into per-compilation options: same effect, no child
    def value(text):
        return {"true": True, "false": False}.get(text, text)

    options = {}
    for flag in xla_flags.split():
        key, _, text = flag.removeprefix("--").partition("=")
        options[key] = value(text) if "=" in flag else True
    return hlo.launch_summary(_compile_reduction_here(options))[
        "fusion kinds"]


_SCRIPT = """
import json
import jax
from helpers.xla import hlo
from helpers.workbook.ch06_xla_flags import flag_runs
fn, args = flag_runs.reduction_program(64)
text = fn.lower(*args).compile().as_text()
print(json.dumps(hlo.launch_summary(text)["fusion kinds"]))
"""


def fusions_under_subprocess(xla_flags):
    env = {"XLA_FLAGS": xla_flags, "JAX_PLATFORMS": "cpu",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env,
                          capture_output=True, text=True, check=True,
                          cwd=str(_ROOT))
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- 6.3 keep only flags this jaxlib knows --------------------------------

def known_by_prefix(candidates):
    return [c for c in candidates if c.startswith("--xla_")]


def known_by_a_list_seen_once(candidates):
    return [c for c in candidates if "made_up" not in c]


def known_sorted(candidates):
    from helpers.xla import xla_flags
    rejected = set(xla_flags.unknown(candidates))
    return sorted(c for c in candidates if c not in rejected)


def known_one_at_a_time(candidates):
    from helpers.xla import xla_flags
    return [c for c in candidates if not xla_flags.unknown([c])]


def known_as_tuple(candidates):
    from helpers.xla import xla_flags
    rejected = xla_flags.unknown(candidates)
    return tuple(c for c in candidates if c not in rejected)


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


# --- the table: wrong attempts with their hints, right alternatives --------

ATTEMPTS = {
    "rms": {"starter": "Square first",
            "wrong": {rms_no_square: "Square first",
                      rms_no_root: "Square first",
                      rms_python_loop: "no Python loop",
                      rms_as_a_float: "instead of float()"},
            "right": [rms_norm, rms_dot]},
    "time_call": {"starter": "block_until_ready",
                  "wrong": {timer_with_compile: "Leave the first",
                            timer_total: "divided by n",
                            timer_nan: "block_until_ready"},
                  "right": [timer_timeit, timer_throughput]},
    "matmul_floor": {"starter": "Count every byte",
                     "wrong": {floor_no_output: "Count every byte",
                               floor_one_flop: "2 * b * m * k * n",
                               floor_added: "The floor is the larger"},
                     "right": [floor_numpy, floor_jax]},
    "which_bound": {"starter": "Compare the two times",
                    "wrong": {bound_fixed_intensity: "Compare the two",
                              bound_reversed: "Compare the two",
                              bound_by_bytes: "Compare the two"},
                    "right": [bound_ridge, bound_worded]},
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
    "make_loop": {"starter": "static_argnums=2",
                  "wrong": {make_loop_traced_lambda: "static_argnums=2",
                            make_loop_not_jitted: "must return a jitted",
                            make_loop_changed_body: "Keep the loop body"},
                  "right": [make_loop_by_name, make_loop_wrapped]},
    "decide": {"starter": "Alternate a and b",
               "wrong": {decide_one_after_other: "Alternate a and b",
                         decide_too_few: "Too few runs",
                         decide_returns_medians: "return stats.compare"},
               "right": [decide_fixed_alternating, decide_shuffled_pairs]},
    "significant": {"starter": "0.05 / 9",
                    "wrong": {significant_bonferroni: "alpha / (m - k)",
                              significant_holm_without_stopping:
                                  "stop at the first failure",
                              significant_halved: "0.05 / 9"},
                    "right": [significant_array, significant_while]},
    "scope_totals": {"starter": "do not average",
                     "wrong": {totals_count: "do not average",
                               totals_max: "do not average",
                               totals_overall: "do not average"},
                     "right": [totals_series, totals_loop]},
    "mean_of_first": {"starter": "mask the entries beyond n",
                      "wrong": {mean_of_first_formula: "Divide by n",
                                mean_of_first_whole_length: "Divide by n",
                                mean_of_first_int: "mask the entries"},
                      "right": [mean_of_first_weights,
                                mean_of_first_cumsum]},
    "make_step": {"starter": "donate_argnums=0",
                  "wrong": {make_step_donates_x: "donate_argnums=0",
                            make_step_not_jitted: "jax.jit-ed function",
                            make_step_wrong_rate: "Keep sgd_step as it is"},
                  "right": [make_step_by_name, make_step_wrapped]},
    "batched_loss": {"starter": "jax.vmap maps",
                     "wrong": {batched_lax_map: "jax.vmap maps",
                               batched_mean: "element by element",
                               batched_wrong_pairs: "element by element"},
                     "right": [batched_closure, batched_tree_axes]},
    "options": {"starter": "flag_registry.table()",
                "wrong": {options_with_dashes: "without the leading '--'",
                          options_other_flag: "flag_registry.table()",
                          options_misspelt: "flag_registry.table()"},
                "right": [options_from_flag_text, options_dict_call]},
    "fusions_under": {"starter": "in a new process",
                      "wrong": {fusions_under_same_process:
                                    "in a new process",
                                fusions_under_child_without_flags:
                                    "in a new process",
                                fusions_under_constant:
                                    "from the compiled module",
                                fusions_under_any_flag:
                                    "not from the flag's text"},
                      "right": [fusions_under_compiler_options,
                                fusions_under_subprocess]},
    "known": {"starter": "helpers.xla.xla_flags.unknown",
              "wrong": {known_by_prefix: "helpers.xla.xla_flags.unknown",
                        known_by_a_list_seen_once:
                            "helpers.xla.xla_flags.unknown",
                        known_sorted: "helpers.xla.xla_flags.unknown"},
              "right": [known_one_at_a_time, known_as_tuple]},
    "block_specs": {"starter": "w_out by its rows",
                    "wrong": {specs_swapped: "w_out by its rows",
                              specs_both_columns: "w_out by its rows",
                              specs_only_w_in: "w_out by its rows",
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
EXERCISES = {e.answer: e for e in workshop.exercises()}
SLOW = {"decide", "fusions_under", "known"}  # seconds a check, not less


def test_every_exercise_is_tried():
    assert set(ATTEMPTS) == set(EXERCISES)


def _graded_right(report):
    """Passed, or passed all this machine could grade (GPU criteria)."""
    return report.status in ("passed", "passed where graded")


def _cases(kind):
    return [pytest.param(answer, i, id=f"{answer}-{i}")
            for answer, tries in ATTEMPTS.items()
            for i in range(len(tries[kind]) + (kind == "wrong"))]


@pytest.mark.slow
@pytest.mark.parametrize("answer,index", _cases("wrong"))
def test_wrong_attempts_fail_with_the_intended_hint(answer, index):
    exercise, tries = EXERCISES[answer], ATTEMPTS[answer]
    if index == len(tries["wrong"]):
        attempt, hint = exercise.starter, tries["starter"]
    else:
        attempt, hint = list(tries["wrong"].items())[index]
    report = exercise.check(attempt)
    assert report.failed, report.text()
    assert any(hint in h for h in report.failed_hints()), report.text()


@pytest.mark.slow
@pytest.mark.parametrize("answer,index", _cases("right"))
def test_correct_answers_written_differently_pass(answer, index):
    report = EXERCISES[answer].check(ATTEMPTS[answer]["right"][index])
    assert _graded_right(report), report.text()


@functools.cache
def _solution_report(answer):
    """The reference solution's first check (its compile included)."""
    exercise = EXERCISES[answer]
    return exercise.check(exercise.solution)


@pytest.mark.slow
@pytest.mark.parametrize("answer", sorted(ATTEMPTS))
def test_the_solution_passes_and_checks_quickly(answer):
    first = _solution_report(answer)
    assert _graded_right(first), first.text()
    if answer in SLOW:  # child processes, a simulated machine: their
        return          # designs take what they take, every time
    exercise = EXERCISES[answer]
    start = time.perf_counter()
    report = exercise.check(exercise.solution)
    seconds = time.perf_counter() - start
    assert _graded_right(report), report.text()
    assert seconds < 5, f"{seconds:.1f} s after the first compile"


@pytest.mark.slow
def test_a_graded_part_is_said_and_passes_only_on_a_gpu():
    # what a CPU cannot grade: the GPU time targets, and psend
    from helpers.measuring import machine
    partial = {a for a in ATTEMPTS
               if _solution_report(a).status == "passed where graded"}
    if machine.on_gpu():
        assert partial <= {"pass_along"}  # one GPU: psend needs four
    else:
        assert partial >= {"bmv", "batched_loss", "pass_along"}
        for answer in partial:
            skipped = [o for o in _solution_report(answer).outcomes
                       if o.status == "skip"]
            assert all(o.detail.startswith("not graded here: needs ")
                       for o in skipped)


@pytest.mark.slow
def test_the_flags_offered_in_exercise_6_3_are_real_here():
    from helpers.xla import xla_flags
    assert xla_flags.unknown(xla_flags_exercises._REAL_FLAGS) == []
    offered = xla_flags_exercises.candidates(random.Random(0))
    assert len(xla_flags.unknown(offered)) == 1


def test_an_answer_in_the_wrong_form_is_named():
    predict = EXERCISES["predict"]
    report = predict.check(lambda k: "fast")
    assert "answer 'kInput' or 'kLoop'" in report.outcomes[0].detail
    bound = EXERCISES["which_bound"].check(lambda *case: None)
    assert "returned None; answer 'memory' or 'compute'" in \
        bound.outcomes[0].detail
    totals = EXERCISES["scope_totals"].check(lambda kernels: 42.0)
    assert "expected a dict (or a pandas Series)" in \
        totals.outcomes[0].detail


# Found by a review after the table above was written: each must fail.
def _holm_in_sorted_order(p_values, alpha=0.05):
    m, calls, going = len(p_values), [], True
    for k, p in enumerate(sorted(p_values)):
        going = going and p < alpha / (m - k)
        calls.append(going)
    return calls  # in sorted order, not the input's


def _holm_sorting_its_input(p_values, alpha=0.05):
    p_values.sort()  # changes the caller's list
    return _holm_in_sorted_order(p_values, alpha)


@pytest.mark.parametrize("answer,attempt", [
    ("significant", _holm_in_sorted_order),
    ("significant", _holm_sorting_its_input),
    ("time_call", lambda f, x, n=10: 0.02),  # the chapter's number
    ("make_loop", lambda: jax.jit(
        lambda w, k, steps: variants.run_steps(w, k, 200))),
    ("matmul_floor", lambda b, m, k, n, itemsize, bandwidth, flop_rate:
        max(itemsize * b * (m * k + k + m) / bandwidth,
            2 * b * m * k * n / flop_rate)),  # chapter 2's count, copied
])
def test_attempts_a_review_found(answer, attempt):
    assert EXERCISES[answer].check(attempt).failed
    # and the cases are intact for the next learner
    assert EXERCISES[answer].check(EXERCISES[answer].solution).status in (
        "passed", "passed where graded")


def test_a_timer_in_milliseconds_is_told_to_report_seconds():
    def in_ms(f, x, n=10):
        return 1e3 * timer_timeit(f, x, n)

    report = EXERCISES["time_call"].check(in_ms)
    assert "Report seconds" in report.failed_hints()[0]


def test_a_grouped_frame_with_the_key_as_a_column_passes_4_3():
    def totals(kernels):
        return kernels.groupby("scope", as_index=False)["dur_us"].sum()

    assert EXERCISES["scope_totals"].check(totals).passed
