"""Chapter 6's exercises: find the GPU compile option that hands a matmul
to cuBLAS (6.1), set the same GPU flag where XLA reads it, for a whole
process (6.2), and keep only the flags this jaxlib knows (6.3).

Each has a starter (fails its check, with the intended hint) and a
solution (passes).
"""

from __future__ import annotations

import random
from typing import Any, Callable


from helpers.grading.answer_forms import as_mapping, describe
from helpers.grading.exercises import (
    Exercise,
    Outcome,
    described,
    description_of,
    learner_error,
    not_graded,
)
from helpers.page.prose import counted
from helpers.workbook.ch06_xla_flags import flag_runs

# --- Exercise 6.1: find the option ------------------------------------------

def options_starter() -> dict[str, Any]:
    """Return compiler options under which XLA:GPU compiles the bf16
    matmul with its epilogue, for an H100, to a cuBLAS call instead of a
    Triton GEMM fusion (kCustom)."""
    return {}


def options_solution() -> dict[str, Any]:
    """Triton's GEMMs off: the matmul goes to cuBLAS."""
    return {"xla_gpu_enable_triton_gemm": False}


@described("compiled for an H100, the matmul is a cuBLAS call, not a "
           "Triton fusion")
def _library_matmul(make_options: Callable[[], dict[str, Any]]
                    ) -> Outcome:
    from helpers.xla import crosscompile, fresh_process
    name = description_of(_library_matmul)
    hint = ("Look through helpers.xla.flag_registry.table(): one GPU flag "
            "turns Triton's GEMM fusions off. Pass it without the leading "
            "'--'.")
    try:
        options = as_mapping(make_options())
    except Exception as err:  # the learner's code may fail anyhow
        return learner_error(name, err, hint)
    if crosscompile.why_unavailable():
        return not_graded(name, "JAX's CUDA plugin, to compile for an "
                          "H100 (Linux on x86-64, or Colab)")
    try:
        found = crosscompile.run(flag_runs.library_calls_for_gpu,
                                 "matmul_epilogue", dict(options),
                                 keep_alive=True)
    except fresh_process.ChildFailed as err:  # an unknown option, say
        return Outcome(name, "fail", f"XLA refused the options: "
                       f"{err.reason}", hint)
    calls, kinds = found["custom calls"], found["fusion kinds"]
    seen = f"fusions: {counted(kinds)}; library calls: {counted(calls)}"
    if kinds.get("kCustom") or not any("cublas" in c for c in calls):
        return Outcome(name, "fail", seen, hint)
    return Outcome(name, "pass", seen)


find_the_option = Exercise(
    "Exercise 6.1: find the option that hands the matmul to cuBLAS",
    [_library_matmul],
    hints=["compile(compiler_options={...}) takes XLA flag names without "
           "the leading '--'.",
           "Its name has triton and gemm in it, and it enables them."],
    reread="6.5 What the GPU flags do, measured",
    chapter="06_xla_flags", answer="options", level="warm-up",
    starter=options_starter, solution=options_solution)


# --- Exercise 6.2: set the flag where XLA reads it --------------------------

TRITON_OFF = "--xla_gpu_enable_triton_gemm=false"
# Real GPU flags, at their defaults, that leave the matmul a Triton GEMM
# (and that compiler_options takes as well).
NEUTRAL_FLAGS = ("--xla_gpu_autotune_level=4",
                 "--xla_gpu_enable_latency_hiding_scheduler=false")


def calls_under_starter(flags: str) -> dict[str, int]:
    """The library calls of chapter 6's bf16 matmul with its epilogue
    (*matmul_epilogue*), compiled for an H100 with ``XLA_FLAGS=flags``."""
    import os

    from helpers.xla import crosscompile
    before = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = flags  # this process's, set too late
    try:
        found = crosscompile.run(flag_runs.library_calls_for_gpu,
                                 "matmul_epilogue", {}, keep_alive=True)
    finally:
        os.environ.pop("XLA_FLAGS")
        if before is not None:
            os.environ["XLA_FLAGS"] = before
    return found["custom calls"]


def calls_under_solution(flags: str) -> dict[str, int]:
    """The process that compiles for the H100 reads the flags as it
    starts: hand them to it."""
    from helpers.xla import crosscompile
    return crosscompile.run(flag_runs.library_calls_for_gpu,
                            "matmul_epilogue", {}, xla_flags=flags)[
        "custom calls"]


def _calls_cublas(calls: dict[str, int]) -> bool:
    return any("cublas" in name for name in calls)


def _calls_text(calls: dict[str, int]) -> str:
    """Library calls as the check reports them."""
    return counted(calls) if calls else "no library call"


@described("the Triton flag hands the matmul to cuBLAS, other flags do not")
def _flag_reaches_xla(fn: Callable[[str], dict[str, int]]) -> Outcome:
    from helpers.xla import crosscompile
    name = description_of(_flag_reaches_xla)
    hint = ("XLA reads XLA_FLAGS once, when a process starts JAX, and the "
            "process that compiles for the H100 is a child that "
            "crosscompile.run starts with flags of its own, never this "
            "process's: see what help(crosscompile.run) lets you hand it.")
    if crosscompile.why_unavailable():
        return not_graded(name, "JAX's CUDA plugin, to compile for an "
                          "H100 (Linux on x86-64, or Colab)")
    # Drawn anew at every check, so that no answer can know them: a
    # neutral flag alone, and Triton's flag beside another neutral one,
    # in either order.
    rng = random.Random()
    neutral = rng.choice(NEUTRAL_FLAGS)
    both = " ".join(rng.sample([TRITON_OFF, rng.choice(NEUTRAL_FLAGS)], 2))
    try:
        # One after the other: a learner's function may set os.environ.
        neutral_calls = as_mapping(fn(neutral))
        triton_off_calls = as_mapping(fn(both))
    except Exception as err:
        return learner_error(name, err, hint)
    found = (f"{neutral}: {_calls_text(neutral_calls)}; '{both}': "
             f"{_calls_text(triton_off_calls)}")
    if not _calls_cublas(triton_off_calls):
        return Outcome(name, "fail", found, hint)
    if _calls_cublas(neutral_calls):
        return Outcome(name, "fail", found, "A flag that does not touch "
                       "GEMMs leaves the matmul to Triton: read the calls "
                       "from the compiled module, not from the flag's "
                       "text.")
    return Outcome(name, "pass", found)


flag_reaches_xla = Exercise(
    "Exercise 6.2: set the flag where XLA reads it", [_flag_reaches_xla],
    hints=["Which process compiles for the H100, and when did it start?"],
    reread="6.3 Read once, at start",
    chapter="06_xla_flags", answer="calls_under", level="core",
    starter=calls_under_starter, solution=calls_under_solution)


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
    """Ask helpers.xla.known_flags, which tries each in a child process."""
    from helpers.xla.known_flags import unknown
    rejected = set(unknown(candidates))
    return [flag for flag in candidates if flag not in rejected]


@described("drops the made-up flag, keeps the real ones")
def _keeps_known(fn: Callable[[list[str]], list[str]]) -> Outcome:
    name = description_of(_keeps_known)
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
        return Outcome(name, "fail", _what_went_wrong(got, want, made_up),
                       "Test each flag where an abort cannot hurt: "
                       "helpers.xla.known_flags.unknown.")
    return Outcome(name, "pass", f"kept the {len(want)} real flags and "
                   f"dropped the made-up {made_up}")


def _what_went_wrong(got: list[str], want: list[str], made_up: str) -> str:
    """The difference between a learner's list and the right one, in
    words, one flag at a time (a flag's name never breaks in a list)."""
    if made_up in got:
        return f"kept the made-up {made_up}"
    lost = [flag for flag in want if flag not in got]
    if lost:
        return "dropped real flags: " + ", ".join(lost)
    return (f"kept the right flags but in another order or with extras: "
            f"{', '.join(got)}")


known_flags = Exercise("Exercise 6.3: keep only flags this jaxlib knows",
                       [_keeps_known],
                       hints=["An unknown flag in XLA_FLAGS aborts the "
                              "process that starts JAX."],
                       reread="6.3 Read once, at start",
                       chapter="06_xla_flags", answer="known", level="stretch",
                       starter=known_starter, solution=known_solution)
