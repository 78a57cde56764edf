"""Chapter 1 (Measuring JAX on a GPU correctly): its three exercises, an
honest timer (1.1), a matmul's floor (1.2) and which bound a kernel
meets (1.3).

Exercise 1.1 asks for a timer. It is graded on a *simulated* device whose
calls return at once, whose results become ready only later, and whose first
call "compiles" for a while, so the check is exact and needs no GPU: a timer
that does not wait measures the dispatch; one that keeps the first call
measures the compile.

Exercise 1.2 asks for the roofline floor of a batched matrix product.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any, Callable

import numpy as np

from helpers.grading.answer_forms import WrongAnswer, as_choice, as_number
from helpers.grading.exercises import (
    Exercise,
    Outcome,
    described,
    description_of,
    learner_error,
    matches_reference,
)

DEVICE_S = 0.020   # simulated device time of one call (the chapter's)
COMPILE_S = 0.300  # simulated compile time of the first call
# Each check draws the device time anew from this range, so a timer must
# measure it: a number written into the answer cannot pass.
DEVICE_RANGE_S = (0.010, 0.040)


class _Pending:
    """The result of a simulated call: ready the device's time after
    dispatch, one call after another, like kernels queued on one GPU
    stream."""

    def __init__(self, ready_at: float) -> None:
        self._ready_at = ready_at

    def block_until_ready(self) -> "_Pending":
        time.sleep(max(0.0, self._ready_at - time.perf_counter()))
        return self


class SimulatedDevice:
    """A function that behaves like a jitted function on a GPU: the first
    call compiles (blocking), later calls only enqueue work."""

    def __init__(self, device_s: float = DEVICE_S) -> None:
        self.device_s = device_s
        self.calls = 0
        self._busy_until = 0.0

    def __call__(self, x: Any) -> _Pending:
        self.calls += 1
        if self.calls == 1:
            time.sleep(COMPILE_S)
        start = max(time.perf_counter(), self._busy_until)
        self._busy_until = start + self.device_s
        return _Pending(self._busy_until)


def starter(f: Callable[[Any], Any], x: Any, n: int = 10) -> float:
    """Seconds per call of f(x) in the steady state."""
    f(x)  # warm-up: the first call compiles
    start = time.perf_counter()
    for _ in range(n):
        f(x)
    return (time.perf_counter() - start) / n


def solution(f: Callable[[Any], Any], x: Any, n: int = 10) -> float:
    """Warm up (which compiles), then time each call until its result is
    ready, and report the median."""
    f(x).block_until_ready()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        f(x).block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@described("measures the device time of one call")
def _timer_criterion(timer: Callable[..., float]) -> Outcome:
    name = description_of(_timer_criterion)
    hint = ("A call returns when its work is queued: wait until the "
            "result is ready before stopping the clock, and leave the "
            "first call out.")
    device = SimulatedDevice(random.uniform(*DEVICE_RANGE_S))
    try:
        answer = timer(device, None)
    except Exception as err:  # the learner's code may fail anyhow
        return learner_error(name, err, hint)
    if device.calls < 2:
        return Outcome(name, "fail", f"your timer called f {device.calls} "
                       "times; it must call it to time it (once to "
                       "compile, then the calls it times)", hint)
    # Finite and positive first: NaN would slip through the range tests.
    try:
        measured = as_number(answer, "seconds per call, a number")
    except WrongAnswer as err:
        return Outcome(name, "fail", str(err), hint)
    if measured <= 0:
        return Outcome(name, "fail", f"reported {measured} s per call; a "
                       "call takes a positive time", hint)
    device_s = device.device_s
    detail = (f"reported {measured * 1e3:.2f} ms per call; the simulated "
              f"device took {device_s * 1e3:.1f} ms this time")
    for factor, unit in ((1e3, "milliseconds"), (1e6, "microseconds")):
        if 0.8 * factor * device_s <= measured <= 1.25 * factor * device_s:
            return Outcome(name, "fail", detail + f": that reads as {unit}",
                           "Report seconds, as time.perf_counter() "
                           "gives them.")
    if measured < 0.5 * device_s:
        return Outcome(name, "fail", detail + ": that is the dispatch, "
                       "not the work", hint)
    if measured > 1.25 * device_s:
        return Outcome(name, "fail", detail + ": more than one call; the "
                       "compile leaked in, or several calls were added up",
                       "Leave the first (compiling) call out of the "
                       "timing, and report the time of one call (the "
                       "median, or the total divided by n).")
    return Outcome(name, "pass", detail)


honest_timer = Exercise(
    "Exercise 1.1: an honest timer",
    [_timer_criterion],
    hints=["A call returns when the work is queued, not when it is done.",
           "The first call of a jitted function compiles it."],
    reread="1.3 Asynchronous dispatch",
    chapter="01_measuring", answer="time_call", level="warm-up",
    starter=starter, solution=solution)


def floor_starter(b, m, k, n, itemsize, bandwidth, flop_rate):
    """Seconds at least for (b,m,k) @ (b,k,n): fill in the two terms."""
    memory_s = itemsize * b * m * k / bandwidth  # only reads a: too few
    compute_s = 0.0
    return max(memory_s, compute_s)


def floor_solution(b, m, k, n, itemsize, bandwidth, flop_rate):
    """Bytes: read a and b once, write the output once. Flops: one multiply
    and one add per (batch, row, column, k). The floor is the larger."""
    moved = itemsize * b * (m * k + k * n + m * n)
    flops = 2 * b * m * k * n
    return max(moved / bandwidth, flops / flop_rate)


# Round, made-up ceilings (not measurements): the check is about formulas.
_FAST = (3.0e12, 5.0e14)
_FLOOR_CASES = [
    (1_000_000, 3, 25, 1, 4, *_FAST),      # the fusion chapter's shapes
    (1_000_000, 3, 25, 1, 8, *_FAST),      # float64
    (1, 8192, 8192, 8192, 2, *_FAST),      # a large bf16 matmul
    (64, 128, 64, 128, 4, 1.0e11, 1.0e12),  # a slow machine
    (4096, 16, 16, 16, 4, *_FAST),         # memory-bound with n > 1
]

matmul_floor = Exercise(
    "Exercise 1.2: the floor of a batched matmul",
    [matches_reference(floor_solution, _FLOOR_CASES, rtol=1e-6, atol=0.0,
                       hint="Count every byte: both inputs read once, the "
                            "output written once.")],
    hints=["Count the bytes of all three arrays: both inputs are read once, "
           "the output written once.",
           "Each output element takes k multiplies and k adds.",
           "The floor is the larger of the time the bytes take and the time "
           "the flops take."],
    reread="1.8 The two floors",
    chapter="01_measuring", answer="matmul_floor", level="core",
    starter=floor_starter, solution=floor_solution)


# --- Exercise 1.3: which bound? ------------------------------------------

def which_bound_starter(flops: float, n_bytes: float, flop_rate: float,
                        bandwidth: float) -> str:
    """'memory' or 'compute': which limit sets the floor of this work."""
    return "compute"  # matmuls are compute-bound... always?


def which_bound_solution(flops: float, n_bytes: float, flop_rate: float,
                         bandwidth: float) -> str:
    """The larger of the two times is the floor; it names the bound."""
    return "memory" if n_bytes / bandwidth >= flops / flop_rate else \
        "compute"


def _bound_cases() -> list[tuple[float, float, float, float]]:
    """(flops, bytes, flop/s, bytes/s): five named cases on round made-up
    ceilings, then 40 random ones spread over twelve decades, so that no
    fixed threshold on flops per byte gets them all right."""
    named = [
        (2 * 8192 ** 3, 3 * 2 * 8192 ** 2, 5e14, 3e12),  # big bf16 matmul
        (2 * 1e6 * 3 * 25, 4 * 1e6 * 103, 5e14, 3e12),   # chapter 2's
        (1e6, 8e6, 1e13, 1e12),                           # elementwise
        (2 * 64 ** 3, 3 * 4 * 64 ** 2, 1e12, 1e11),       # small, slow
        (2 * 512 ** 3, 3 * 4 * 512 ** 2, 5e14, 3e12),     # 85 flop/byte on
    ]                                                     # a 167 ridge
    rng = np.random.default_rng(13)
    spread = 10 ** rng.uniform([6, 6, 11, 10], [18, 15, 16, 13],
                               size=(40, 4))
    return named + [(float(a), float(b), float(c), float(d))
                    for a, b, c, d in spread]


_BOUND_CASES = _bound_cases()


@described(f"names the right bound in {len(_BOUND_CASES)} cases")
def _bound(fn: Callable[..., str]) -> Outcome:
    name = description_of(_bound)
    hint = ("Compare the two times: bytes / bandwidth and flops / "
            "flop_rate.")
    wrong = []
    for case in _BOUND_CASES:
        try:
            got = fn(*case)
        except Exception as err:
            return learner_error(name, err,
                                 "Return 'memory' or 'compute'.")
        got = as_choice(got, ("memory", "compute"))
        if got != which_bound_solution(*case):
            wrong.append(case)
    if wrong:
        flops, n_bytes, rate, bandwidth = wrong[0]
        return Outcome(name, "fail", f"wrong in {len(wrong)} cases, e.g. "
                       f"flops={flops:.3g}, bytes={n_bytes:.3g}, flop/s="
                       f"{rate:.3g}, bytes/s={bandwidth:.3g}: it is "
                       f"{which_bound_solution(*wrong[0])!r}", hint)
    return Outcome(name, "pass", f"all {len(_BOUND_CASES)} right")


which_bound = Exercise("Exercise 1.3: which bound?", [_bound],
                       hints=["A matrix-vector product does 2 flops per "
                              "element it reads."],
                       reread="1.8 The two floors",
                       chapter="01_measuring", answer="which_bound",
                       level="warm-up",
                       starter=which_bound_starter,
                       solution=which_bound_solution)
