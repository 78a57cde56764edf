"""Chapter 4 (Profiling and statistics): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations

import random
import statistics

import numpy as np

from helpers.measuring import stats


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


ATTEMPTS = {
    "decide": {"starter": "Alternate a and b",
               "wrong": {decide_one_after_other: "Alternate a and b",
                         decide_too_few: "Too few runs",
                         decide_returns_medians: "what stats.compare makes"},
               "right": [decide_fixed_alternating, decide_shuffled_pairs]},
    "significant": {"starter": "0.05 / 9",
                    "wrong": {significant_bonferroni: "relaxes as it goes",
                              significant_holm_without_stopping:
                                  "stops at the first failure",
                              significant_halved: "0.05 / 9"},
                    "right": [significant_array, significant_while]},
    "scope_totals": {"starter": "do not average",
                     "wrong": {totals_count: "do not average",
                               totals_max: "do not average",
                               totals_overall: "do not average"},
                     "right": [totals_series, totals_loop]},
}
