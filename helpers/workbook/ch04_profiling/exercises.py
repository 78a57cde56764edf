"""Chapter 4's exercises: decide which of two versions is faster (4.1),
decide nine comparisons at once (4.2), and total a profile's time per
scope (4.3). The first, in detail:

The learner writes ``decide(run)``: ``run('a')`` or ``run('b')`` performs
one run of that version and returns its time in seconds; ``decide`` chooses
how many runs of each to make and in what order, and returns
`helpers.measuring.stats.compare`'s result. It is graded on a *simulated*
machine whose answers are known exactly: runs are noisy, the first runs of each
version are slow (warm-up), and the machine slows down as it heats up
(drift), so a design that times all of one version and then all of the
other blames the drift on the version that ran later.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pandas as pd

from helpers.grading.answer_forms import (
    WrongAnswer,
    as_mapping,
    as_number,
    describe,
    leaves,
)
from helpers.grading.exercises import (
    Exercise,
    Outcome,
    described,
    description_of,
    learner_error,
    matches_reference,
)
from helpers.measuring import stats

BUDGET = 2000        # runs the simulated machine allows per case
SPREAD = 0.05        # IQR / median of one run's noise
WARMUP_RUNS = 3      # the first runs of each version are slow ...
WARMUP_FACTOR = 3.0  # ... by this factor
HEATING = 0.08       # the machine ends up 8% slower ...
HEATING_RUNS = 150   # ... with this time constant, in runs


class BudgetExceeded(RuntimeError):
    """``decide`` asked for more runs than the simulated machine allows."""


class SimulatedMachine:
    """Two versions whose true times are known, on a machine that warms up
    and heats up. Calling it with ``'a'`` or ``'b'`` makes one run."""

    def __init__(self, seconds_a: float, seconds_b: float, seed: int
                 ) -> None:
        self.seconds = {"a": seconds_a, "b": seconds_b}
        self.runs = {"a": 0, "b": 0}
        self._rng = np.random.default_rng(seed)

    def __call__(self, version: str) -> float:
        if version not in self.seconds:
            raise ValueError(f"run() takes 'a' or 'b'; got {version!r}.")
        total = sum(self.runs.values())
        if total >= BUDGET:
            raise BudgetExceeded(f"more than {BUDGET} runs; a 3% difference "
                                 "needs far fewer.")
        heat = 1 + HEATING * (1 - math.exp(-total / HEATING_RUNS))
        cold = WARMUP_FACTOR if self.runs[version] < WARMUP_RUNS else 1.0
        self.runs[version] += 1
        noise = self._rng.normal(1.0, SPREAD / 1.349)
        return self.seconds[version] * heat * cold * noise


def starter(run: Callable[[str], float]) -> stats.Comparison:
    """Time a, then b, 20 runs each, and compare."""
    a = [run("a") for _ in range(20)]
    b = [run("b") for _ in range(20)]
    return stats.compare(a, b)


def solution(run: Callable[[str], float]) -> stats.Comparison:
    """Warm both up, estimate the spread from a pilot, then alternate
    a and b for as many runs as `required_samples` asks for 3% (doubled,
    since the pilot's spread is itself uncertain)."""
    for _ in range(WARMUP_RUNS + 2):  # untimed: the first runs are slow
        run("a")
        run("b")
    pilot = [run(version) for _ in range(20) for version in "ab"]
    spread = np.subtract(*np.percentile(pilot, [75, 25])) / np.median(pilot)
    n = 2 * stats.required_samples(0.03, float(spread))
    a, b = [], []
    for _ in range(n):
        a.append(run("a"))
        b.append(run("b"))
    return stats.compare(a, b)


# (seconds of a, seconds of b, the verdict a correct design reaches)
CASES = [
    (1.00e-3, 1.00e-3, "no detectable difference"),
    (1.00e-3, 1.03e-3, "a faster"),
    (1.03e-3, 1.00e-3, "b faster"),
    (1.00e-3, 1.00e-3, "no detectable difference"),
]
# Each case is graded over many trials, each a fresh simulated machine, as
# the chapter teaches: one trial decides nothing. A case passes when at
# least PASS_TRIALS of TRIALS trials reach the right verdict with an
# interval that covers the true ratio. The unit tests measure the error
# rates of this rule: a correct design fails a case less than once in a
# hundred gradings, and a wrong one passes less than once in a hundred.
TRIALS = 40
PASS_TRIALS = 32
SEED_BASES = (11_000, 12_000, 13_000, 14_000)


def trial(decide: Callable[..., Any], index: int, seed: int
          ) -> tuple[bool, str]:
    """One trial of case ``index``: (right, what happened)."""
    seconds_a, seconds_b, expected = CASES[index]
    machine = SimulatedMachine(seconds_a, seconds_b, seed)
    result = decide(machine)
    if not isinstance(result, stats.Comparison):
        raise TypeError(f"decide returned a {type(result).__name__}, not "
                        "what stats.compare returns")
    truth = seconds_a / seconds_b
    if result.verdict != expected:
        return False, f"verdict {result.verdict!r}"
    if not result.ratio_ci[0] <= truth <= result.ratio_ci[1]:
        return False, "an interval that misses the true ratio"
    return True, "right"


def _case_criterion(index: int) -> Callable[[Callable[..., Any]], Outcome]:
    seconds_a, seconds_b, expected = CASES[index]
    name = (f"case {index + 1}: a takes {seconds_a * 1e3:.2f} ms, b "
            f"{seconds_b * 1e3:.2f} ms (expected {expected!r}; at least "
            f"{PASS_TRIALS} of {TRIALS} trials right)")

    @described(name)
    def criterion(decide: Callable[..., Any]) -> Outcome:
        outcomes = []
        for t in range(TRIALS):
            try:
                outcomes.append(trial(decide, index, SEED_BASES[index] + t))
            except Exception as err:  # the learner's code may fail anyhow
                return Outcome(name, "fail", f"trial {t + 1}: "
                               f"{type(err).__name__}: {err}",
                               "Time each version with run, and return "
                               "what stats.compare makes of the two "
                               "lists of times.")
        right = sum(ok for ok, _ in outcomes)
        wrong = [what for ok, what in outcomes if not ok]
        detail = f"{right} of {TRIALS} trials right"
        if wrong:
            common = max(set(wrong), key=wrong.count)
            detail += f"; most often wrong with {common}"
        if right >= PASS_TRIALS:
            return Outcome(name, "pass", detail)
        return Outcome(name, "fail", detail, _why(common))

    return criterion


def _why(what: str) -> str:
    """A hint for what went wrong most: too few runs, or a biased design."""
    if "interval" in what:
        return ("Leave the slow first runs out, and mix a and b in time so "
                "drift cannot tilt the ratio.")
    if stats.Verdict.NO_DIFFERENCE in what:
        return ("Too few runs to see 3% through 5% noise "
                "(stats.required_samples says how many), or drift cancelled "
                "the difference: mix the runs of a and b in time.")
    return ("A difference that is not there, or the wrong way round: does "
            "the machine change while you measure? Mix the runs of a and b "
            "in time.")


which_is_faster = Exercise(
    "Exercise 4.1: which is faster, and how sure are you?",
    [_case_criterion(i) for i in range(len(CASES))],
    hints=["The first few runs of each version are slow: run each a few "
           "times before keeping any time.",
           "The machine slows down as it runs. Timing all of a, then all "
           "of b, blames that on b. Alternate a and b.",
           "A 3% difference under 5% noise needs dozens of runs a side: "
           "stats.required_samples(0.03, spread) says how many."],
    reread="4.5 Deciding which version is faster",
    chapter="04_profiling", answer="decide", level="stretch",
    starter=starter, solution=solution)


# Exercise 4.2: nine tests, one decision.

def holm_starter(p_values: list[float], alpha: float = 0.05) -> list[bool]:
    """Which of several tests to call significant: each on its own."""
    return [p < alpha for p in p_values]


def holm_solution(p_values: list[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down rule: sort the p-values, compare the k-th smallest
    (k = 0, 1, ...) with alpha / (m - k), and stop at the first that
    fails; it and every larger p-value are not significant."""
    m = len(p_values)
    significant = [False] * m
    for k, index in enumerate(np.argsort(p_values)):
        if p_values[index] >= alpha / (m - k):
            break
        significant[index] = True
    return significant


_HOLM_CASES = [
    ([0.01, 0.04, 0.03, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9],),   # none pass
    ([0.001, 0.004, 0.03, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9],),  # two pass
    ([0.001, 0.011, 0.02, 0.3],),  # three: more than Bonferroni's two
    ([0.001, 0.02, 0.018, 0.04],),  # stops at 0.018, so 0.04 fails too
    ([1e-6] * 9,),                                          # all pass
    ([0.04],),                                              # one test
    ([0.3, 0.011, 0.2, 0.001, 0.02],),  # the smallest not in front
]


@described("keeps the family-wise error of nine null tests at 5%")
def _family_error(fn: Callable[..., Any]) -> Outcome:
    """Over 2000 families of nine A/A p-values (uniform), the share with
    any false positive must stay at or under 5%."""
    name = description_of(_family_error)
    rng = np.random.default_rng(0)
    families = rng.uniform(size=(2000, 9))
    hint = "Return one True/False per p-value."
    found = []
    for family in families:
        try:
            answer = fn(list(family))
        except Exception as err:  # the learner's code may fail anyhow
            return learner_error(name, err, hint)
        calls = leaves(answer)  # a list, a tuple or an array of booleans
        if len(calls) != 1 or calls[0].shape != (len(family),):
            raise WrongAnswer(f"returned {describe(answer)}; expected one "
                              f"True/False for each of the "
                              f"{len(family)} p-values")
        found.append(bool(np.any(calls[0])))
    rate = float(np.mean(found))
    detail = f"{rate:.1%} of 2000 families had a false positive"
    if rate > 0.06:  # 5% plus two standard errors of 2000 families
        return Outcome(name, "fail", detail, "With nine tests, compare "
                       "the smallest p-value with 0.05 / 9.")
    return Outcome(name, "pass", detail)


nine_tests = Exercise(
    "Exercise 4.2: nine tests, one decision",
    [_family_error,
     matches_reference(holm_solution, _HOLM_CASES,
                       hint="Holm's method takes the p-values from the "
                            "smallest up, each against a threshold that "
                            "relaxes as it goes, and stops at the first "
                            "failure.")],
    hints=["Nine tests at 5% each find something in about 37% of "
           "families with nothing to find.",
           "Bonferroni compares every p with alpha / m; Holm relaxes "
           "the threshold step by step and finds more."],
    reread="4.9 Pitfall 4: nine tests",
    chapter="04_profiling", answer="significant", level="core",
    starter=holm_starter, solution=holm_solution)


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


@described("the total per scope of 60 kernel events")
def _totals(fn: Callable[[pd.DataFrame], dict[str, float]]) -> Outcome:
    name = description_of(_totals)
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


scope_totals = Exercise("Exercise 4.3: time per scope", [_totals],
                        hints=["pandas groups rows by one column's values and"
                               " sums another column within each group."],
                        reread="4.4 A profile, read with pandas",
                        chapter="04_profiling", answer="scope_totals",
                        level="warm-up",
                        starter=scope_totals_starter,
                        solution=scope_totals_solution)
