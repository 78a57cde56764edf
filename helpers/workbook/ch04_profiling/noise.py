"""Chapter 4's statistics: how often a comparison of timings is wrong.

An A/A trial times one function against itself, so every verdict of a
difference is a false positive (`aa_trials`); nine comparisons at once
raise the chance of one (`familywise`). The power of a comparison (how
often it finds a real difference of a given size) and the coverage of its
interval are measured here by drawing runs from one machine's times,
rather than assumed from a formula.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from helpers.measuring import bench, stats


def aa_trials(fn: Callable[..., Any], *args: Any, trials: int = 200,
              repeat: int = 20, order: bench.Order = "random"
              ) -> pd.DataFrame:
    """``trials`` A/A experiments: ``fn`` timed against itself.

    Each trial times ``repeat`` calls as "a" and ``repeat`` as "b" in the
    given order and compares them; every verdict other than 'no detectable
    difference' is a false positive.

    Returns:
        One row per trial: ``trial``, ``p_value``, ``ratio``, ``verdict``.
    """
    rows = []
    for trial in range(trials):
        times = bench.interleaved({"a": fn, "b": fn}, *args, repeat=repeat,
                                  warmup=0, order=order, seed=trial)
        result = stats.compare(times["a"].times, times["b"].times,
                               n_resamples=100)
        rows.append({"trial": trial, "p_value": result.p_value,
                     "ratio": result.ratio, "verdict": result.verdict})
    return pd.DataFrame(rows)


def familywise(p_values: pd.Series, tests: int = 9, alpha: float = 0.05
               ) -> dict[str, float]:
    """Split p-values into families of ``tests`` (the source ran nine) and
    report how often a family holds at least one p below ``alpha``, as is,
    and with the Bonferroni correction (each p times ``tests``)."""
    groups = np.asarray(p_values)[:len(p_values) // tests * tests]
    if groups.size == 0:
        raise ValueError(f"need at least {tests} p-values to form a family.")
    families = groups.reshape(-1, tests)
    return {"families": len(families),
            "any_p_below_alpha": float((families < alpha).any(1).mean()),
            "bonferroni": float((families * tests < alpha).any(1).mean())}


def verdict_stability(a: Any, b: Any, sizes: list[int], draws: int = 200,
                      seed: int = 0, names: tuple[str, str] = ("a", "b")
                      ) -> pd.DataFrame:
    """How often `helpers.measuring.stats.decide` reaches each verdict when it
    sees only ``n`` runs of each version, drawn without replacement from the
    pools ``a`` and ``b``.

    Returns:
        One row per ``n`` with the fraction of draws giving each verdict,
        its column named after the versions (``names``): ``'<a> faster'``,
        ``'<b> faster'``, ``'no detectable difference'``.
    """
    rng = np.random.default_rng(seed)
    a, b = np.asarray(a, float), np.asarray(b, float)
    said = {stats.Verdict.A_FASTER: f"{names[0]} faster",
            stats.Verdict.B_FASTER: f"{names[1]} faster"}
    rows = []
    for n in sizes:
        if n > min(len(a), len(b)):
            raise ValueError(f"n = {n} exceeds the pools ({len(a)} and "
                             f"{len(b)} runs); pick smaller sizes.")
        verdicts = [stats.decide(rng.choice(a, n, replace=False),
                                 rng.choice(b, n, replace=False))
                    for _ in range(draws)]
        rows.append({"n": n, **{said.get(v, str(v)): verdicts.count(v)
                                / draws for v in stats.Verdict}})
    return pd.DataFrame(rows)


def synthetic_power(rel_diff: float, spread: float, n: int,
                    trials: int = 400, seed: int = 0) -> float:
    """Fraction of ``trials`` in which `helpers.measuring.stats.decide` finds a
    true ``rel_diff`` slowdown of b, for bell-shaped times with relative
    spread (IQR / median) ``spread`` and ``n`` runs a side."""
    rng = np.random.default_rng(seed)
    sigma = spread / 1.349  # a normal's IQR is 1.349 sigma
    found = 0
    for _ in range(trials):
        a = rng.normal(1.0, sigma, n)
        b = rng.normal(1.0, sigma, n) * (1 + rel_diff)
        found += stats.decide(a, b) == stats.Verdict.A_FASTER
    return found / trials


def resampled_power(pool: Any, rel_diff: float, n: int,
                    trials: int = 400, seed: int = 0) -> float:
    """Like `synthetic_power`, but on real timings: ``a`` and ``b`` are
    each ``n`` runs drawn from one machine's A/A ``pool``, and ``b``'s are
    made ``rel_diff`` slower. So the noise is the machine's own (skewed,
    with outliers), not the normal model `required_samples` assumes."""
    rng = np.random.default_rng(seed)
    pool = np.asarray(pool, float)
    found = 0
    for _ in range(trials):
        a = rng.choice(pool, n)
        b = rng.choice(pool, n) * (1 + rel_diff)
        found += stats.decide(a, b) == stats.Verdict.A_FASTER
    return found / trials


def interval_coverage(pool: Any, sizes: list[int], rel_diff: float = 0.03,
                      trials: int = 300, seed: int = 0) -> pd.DataFrame:
    """How often `helpers.measuring.stats.compare`'s interval for the ratio of
    medians covers the true ratio, for ``n`` runs a side drawn from one
    machine's ``pool`` (``b`` made ``rel_diff`` slower, so the true ratio
    of medians is ``1 / (1 + rel_diff)``). A 95% interval should cover it
    95% of the time; percentile bootstraps of medians can fall short at
    small ``n``, which this measures rather than assumes."""
    rng = np.random.default_rng(seed)
    pool = np.asarray(pool, float)
    truth = 1 / (1 + rel_diff)
    rows = []
    for n in sizes:
        covered = 0
        for _ in range(trials):
            a = rng.choice(pool, n)
            b = rng.choice(pool, n) * (1 + rel_diff)
            low, high = stats.compare(a, b, n_resamples=500).ratio_ci
            covered += low <= truth <= high
        rows.append({"n": n, "coverage": covered / trials})
    return pd.DataFrame(rows)
