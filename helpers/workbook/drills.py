"""Short exercises, one more for each of chapters 1 to 6, so that every
chapter has a warm-up, a core and a stretch exercise.

Each has a ``*_starter`` (fails its check, with the intended hint) and a
``*_solution`` (passes).
"""

from __future__ import annotations

import random
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from helpers import hlo, xla_flags
from helpers.answers import as_choice, as_mapping, as_number, describe
from helpers.exercises import (Exercise, Outcome, faster_than,
                               learner_error, matches_reference)


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


def _bound(fn: Callable[..., str]) -> Outcome:
    name = f"names the right bound in {len(_BOUND_CASES)} cases"
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


WHICH_BOUND = Exercise("Exercise 1.3: which bound?", [_bound],
                       hints=["A matrix-vector product does 2 flops per "
                              "element it reads."],
                       chapter="01_measuring", answer="which_bound",
                       level="warm-up",
                       starter=which_bound_starter,
                       solution=which_bound_solution)


# --- Exercise 2.3: bytes the problem must move ----------------------------

def problem_bytes_starter(k: int, itemsize: int) -> float:
    """Bytes (1e6, 3, K) @ (1e6, K, 1) must move at least."""
    return itemsize * 1e6 * 3 * k  # only the left operand


def problem_bytes_solution(k: int, itemsize: int) -> float:
    """Read both operands once, write the (1e6, 3, 1) result once."""
    return itemsize * 1e6 * (3 * k + k + 3)


PROBLEM_BYTES = Exercise(
    "Exercise 2.3: the bytes behind the bandwidth axis",
    [matches_reference(problem_bytes_solution,
                       [(k, s) for k in (5, 25, 50) for s in (4, 8)],
                       rtol=1e-12, hint="Count both inputs and the output."
                       )],
    hints=["a holds 3 K numbers per batch element, b holds K, the result 3."],
    chapter="02_fusion", answer="problem_bytes", level="warm-up",
    starter=problem_bytes_starter, solution=problem_bytes_solution)


# --- Exercise 3.3: a trip count XLA can see ---------------------------------

STEPS_33 = 200


def make_loop_starter() -> Callable[..., jax.Array]:
    """Return the thread's loop, jitted, to be called as
    ``loop(weights, key, 200)``."""
    from helpers.workbook import launches
    return jax.jit(launches.run_steps)  # steps arrives traced


def make_loop_solution() -> Callable[..., jax.Array]:
    """With ``steps`` static, the bound is a constant of the program; XLA
    proves the trip count and skips the condition's round trip."""
    from helpers.workbook import launches
    return jax.jit(launches.run_steps, static_argnums=2)


def _trip_count(make_loop: Callable[[], Any]
                ) -> Outcome:
    from helpers.workbook import launches
    name = "same result, and the loop's trip count known when compiling"
    hint = ("A bound passed as an argument is traced: its value is unknown "
            "when compiling. Mark it static (static_argnums=2).")
    key_w, key = jax.random.split(jax.random.key(33))
    weights = launches.init_weights(key_w)
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
        want = launches.while_traced(weights, key, steps)
        if not np.allclose(got, want, rtol=1e-5):
            return Outcome(name, "fail", f"with steps={steps} the result "
                           "differs from the thread's loop", "Keep the "
                           "loop body; change only how steps reaches it.")
        counts = [w.trip_count for w in hlo.while_loops(text)]
        if not counts or None in counts:
            return Outcome(name, "fail", f"trip counts {counts}", hint)
        if steps not in counts:
            return Outcome(name, "fail", f"steps={steps}, but the loops "
                           f"run {counts} times", "Keep the loop body; "
                           "change only how steps reaches it.")
        found.append(counts)
    return Outcome(name, "pass", f"trip counts {found}")


STATIC_TRIP_COUNT = Exercise(
    "Exercise 3.3: a trip count XLA can see", [_trip_count],
    hints=["hlo.while_loops(text) shows each loop's trip count."],
    chapter="03_launches", answer="make_loop", level="warm-up",
    starter=make_loop_starter, solution=make_loop_solution)


# --- Exercise 4.3: time per scope ------------------------------------------

def scope_totals_starter(kernels: pd.DataFrame) -> dict[str, float]:
    """Total device time (µs) per scope, from a table of kernel events."""
    return kernels.groupby("scope")["dur_us"].mean().to_dict()


def scope_totals_solution(kernels: pd.DataFrame) -> dict[str, float]:
    """Sum, not mean: a scope that launches many short kernels costs
    their total."""
    return kernels.groupby("scope")["dur_us"].sum().to_dict()


def _events() -> pd.DataFrame:
    rng = np.random.default_rng(43)
    scopes = rng.choice(["attn_q_k", "attn_v", "mlp"], size=60)
    return pd.DataFrame({"scope": scopes,
                         "dur_us": rng.exponential(10.0, size=60)})


def _totals(fn: Callable[[pd.DataFrame], dict[str, float]]) -> Outcome:
    name = "the total per scope of 60 kernel events"
    events = _events()
    try:
        got = fn(events.copy())
    except Exception as err:
        return learner_error(name, err, "Group the rows by 'scope'.")
    want = scope_totals_solution(events)
    got = {scope: as_number(value, f"the µs of {scope!r}, a number")
           for scope, value in as_mapping(got, keys=list(want)).items()}
    wrong = {scope: round(got[scope], 2) for scope in want
             if not np.isclose(got[scope], want[scope])}
    if wrong:
        return Outcome(name, "fail", f"wrong totals {wrong}", "Sum the "
                       "durations, do not average them.")
    return Outcome(name, "pass", "every scope's total right")


SCOPE_TOTALS = Exercise("Exercise 4.3: time per scope", [_totals],
                        hints=["DataFrame.groupby('scope')['dur_us']."],
                        chapter="04_profiling", answer="scope_totals",
                        level="warm-up",
                        starter=scope_totals_starter,
                        solution=scope_totals_solution)


# --- Exercise 5.3: vmap the per-example loss --------------------------------

def batched_loss_starter(params: Any, xs: jax.Array, ys: jax.Array
                         ) -> jax.Array:
    """Per-example losses for a batch."""
    from helpers.workbook import transforms
    return jnp.stack([transforms.example_loss(params, x, y)
                      for x, y in zip(xs, ys)])


def batched_loss_solution(params: Any, xs: jax.Array, ys: jax.Array
                          ) -> jax.Array:
    """vmap over the examples, the parameters shared."""
    from helpers.workbook import transforms
    return jax.vmap(transforms.example_loss, in_axes=(None, 0, 0))(
        params, xs, ys)


def _batch(b: int) -> tuple[Any, jax.Array, jax.Array]:
    from helpers.workbook import transforms
    xs = jax.random.normal(jax.random.key(b), (b, 16))
    return transforms.init(jax.random.key(0), 16), xs, xs * 0.5


def _flat_kernels(fn: Callable[..., jax.Array]) -> Outcome:
    # 16 examples tell a loop from vmap as surely as 64 do, and a loop
    # unrolled 16 times compiles in a fraction of the time (each check of
    # a looping answer compiles it).
    name = "as many kernels for 16 examples as for 4"
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


VMAP_LOSS = Exercise(
    "Exercise 5.3: per-example losses without a loop",
    [matches_reference(batched_loss_solution, lambda: [_batch(4), _batch(9)],
                       rtol=1e-5), _flat_kernels,
     faster_than(batched_loss_starter, lambda: _batch(64))],
    hints=["in_axes=(None, 0, 0): params shared, examples mapped."],
    chapter="05_transformations", answer="batched_loss", level="stretch",
    starter=batched_loss_starter, solution=batched_loss_solution)


# --- Exercise 6.2: set the flag where XLA reads it --------------------------

OWN_FUSIONS = "--xla_cpu_experimental_ynn_fusion_type="


def fusions_under_starter(flags: str) -> dict[str, int]:
    """Fusion kinds of flags.reduction_program compiled for the CPU under
    XLA_FLAGS=flags."""
    import os

    from helpers.workbook import flags as chapter
    os.environ["XLA_FLAGS"] = flags  # too late: JAX has started
    fn, args = chapter.reduction_program(64)
    args = jax.device_put(args, jax.devices("cpu")[0])
    text = fn.lower(*args).compile().as_text()
    os.environ.pop("XLA_FLAGS")
    return hlo.launch_summary(text)["fusion kinds"]


def fusions_under_solution(flags: str) -> dict[str, int]:
    """A fresh process reads the flags when it starts."""
    from helpers.workbook import flags as chapter
    result = chapter.in_child("reduction", flags, {"JAX_PLATFORMS": "cpu"})
    return result["fusion kinds"]


# Real flags that leave this reduction's fusions as they are.
NEUTRAL_FLAGS = ("--xla_cpu_enable_fast_math=false", "--xla_dump_hlo_as_text")


def _flag_reaches_xla(fn: Callable[[str], dict[str, int]]) -> Outcome:
    name = "the ynn flag changes the fusions you report, other flags do not"
    hint = ("XLA read XLA_FLAGS when this process started JAX; run the "
            "compilation in a new process (helpers.workbook.flags.in_child)"
            ".")
    # Drawn anew at every check, so that no answer can know them: a
    # neutral flag alone (the fusions without ynn's), and the ynn flag
    # beside another neutral one, in either order.
    rng = random.Random()
    neutral = rng.choice(NEUTRAL_FLAGS)
    both = " ".join(rng.sample([OWN_FUSIONS, rng.choice(NEUTRAL_FLAGS)], 2))
    try:
        # One after the other: a learner's function may set os.environ.
        other, own = fn(neutral), fn(both)
    except Exception as err:
        return learner_error(name, err, hint)
    other, own = as_mapping(other), as_mapping(own)
    found = f"{neutral}: {other}; {both!r}: {own}"
    if "kCustom" in own or "kLoop" not in own:
        return Outcome(name, "fail", found, hint)
    if "kCustom" not in other:
        return Outcome(name, "fail", found, "A flag that does not touch "
                       "fusions should leave XLA's own (kCustom): read "
                       "the kinds from the compiled module, not from the "
                       "flag's text.")
    return Outcome(name, "pass", found)


FLAG_REACHES_XLA = Exercise(
    "Exercise 6.2: set the flag where XLA reads it", [_flag_reaches_xla],
    hints=["subprocess.run([sys.executable, ...], env={..., 'XLA_FLAGS': "
           "flags}) starts a Python that reads them."],
    chapter="06_xla_flags", answer="fusions_under", level="core",
    starter=fusions_under_starter, solution=fusions_under_solution)


# --- Exercise 6.3: keep only flags this jaxlib knows ------------------------

# Flags every jaxlib the book supports knows (checked by a unit test).
_REAL_FLAGS = ["--xla_gpu_autotune_level=2", "--xla_dump_hlo_as_text",
               "--xla_backend_optimization_level=2",
               "--xla_cpu_enable_fast_math=false",
               "--xla_gpu_enable_command_buffer="]


def candidates(rng: random.Random | None = None) -> list[str]:
    """Three real flags and one made up from a real name and a random
    suffix, shuffled: a new list at each check, so that only testing the
    flags (not recognising a list seen before) gets it right."""
    rng = rng or random.Random()
    chosen = rng.sample(_REAL_FLAGS, 3)
    name, _, value = rng.choice(_REAL_FLAGS).partition("=")
    suffix = "".join(rng.choice("abcdefghkmnpqrstuvwxyz") for _ in range(4))
    made_up = f"{name}_{suffix}" + (f"={value}" if value else "")
    listed = chosen + [made_up]
    while True:  # an order that sorting the real ones would not give
        rng.shuffle(listed)
        kept = [flag for flag in listed if flag != made_up]
        if kept not in (sorted(kept), sorted(kept, reverse=True)):
            return listed


def known_starter(candidates: list[str]) -> list[str]:
    """The candidates the installed jaxlib accepts, in order."""
    return list(candidates)  # one unknown flag aborts the whole process


def known_solution(candidates: list[str]) -> list[str]:
    """Ask helpers.xla_flags, which tries each in a child process."""
    rejected = set(xla_flags.unknown(candidates))
    return [flag for flag in candidates if flag not in rejected]


def _keeps_known(fn: Callable[[list[str]], list[str]]) -> Outcome:
    name = "drops the made-up flag, keeps the real ones"
    offered = candidates()
    try:
        got = fn(list(offered))
    except Exception as err:
        return learner_error(name, err, "")
    made_up = next(f for f in offered if f.split("=")[0] not in
                   {r.split("=")[0] for r in _REAL_FLAGS})
    want = [flag for flag in offered if flag != made_up]
    if isinstance(got, str) or not hasattr(got, "__iter__"):
        return Outcome(name, "fail", f"returned {describe(got)}; expected "
                       "a list of flags")
    got = list(got)
    if got != want:
        return Outcome(name, "fail", f"offered {offered}, got {got}",
                       "Test each flag where an abort cannot hurt: "
                       "helpers.xla_flags.unknown.")
    return Outcome(name, "pass", f"offered {offered}; dropped {made_up}")


KNOWN_FLAGS = Exercise("Exercise 6.3: keep only flags this jaxlib knows",
                       [_keeps_known],
                       hints=["An unknown flag in XLA_FLAGS aborts the "
                              "process that starts JAX."],
                       chapter="06_xla_flags", answer="known", level="stretch",
                       starter=known_starter, solution=known_solution)
