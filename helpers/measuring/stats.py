"""Deciding from two samples of times which version is faster.

Times of the same program scatter: clocks change, caches warm, other
processes run. `compare` asks whether two samples differ by more than
that scatter explains, with tests that need no bell curve (GPU times are
skewed and have outliers):

- the Mann-Whitney U test (scipy's ``mannwhitneyu``; the source article's
  Wilcoxon rank-sum test is the same test) gives the p-value;
- the Hodges-Lehmann shift, the median of all differences ``a_i - b_j``,
  says by how many seconds, with the confidence interval that inverts the
  same test;
- the ratio of medians, with a bootstrap confidence interval (scipy's
  ``bootstrap``), says by what factor.

`decide` gives the verdict alone, faster, for simulations that decide
thousands of times. `required_samples` says how many runs each side needs
before a difference of a given size is found reliably. All of them assume
the runs are independent and that nothing but the version changed between
the two samples: measure the two versions interleaved, not one block after
the other (chapter 4).
"""

from __future__ import annotations

import dataclasses
import enum
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as scipy_stats

MIN_SAMPLES = 5  # fewer runs per side cannot reach p < 0.05 at all


class Verdict(enum.StrEnum):
    """What `compare` decides. Each member is also its text, so a verdict
    compares equal to ``'a faster'`` and prints as it reads."""

    A_FASTER = "a faster"
    B_FASTER = "b faster"
    NO_DIFFERENCE = "no detectable difference"

    def __repr__(self) -> str:  # tables and lists show 'a faster'
        return repr(self.value)


VERDICTS = tuple(Verdict)  # in the order tables list them


@dataclasses.dataclass(frozen=True)
class Comparison:
    """What `compare` found about two samples of times ``a`` and ``b``.

    Attributes:
        n_a, n_b: sample sizes.
        median_a, median_b: medians, in the samples' unit.
        ratio: ``median_a / median_b``; below 1 means ``a`` is faster.
        ratio_ci: bootstrap confidence interval of ``ratio``.
        shift: Hodges-Lehmann estimate of ``a - b`` (negative: ``a`` is
            faster), in the samples' unit.
        shift_ci: confidence interval of ``shift`` from the rank test.
        p_value: two-sided Mann-Whitney U p-value.
        prob_a_faster: the effect size, the chance that a random run of
            ``a`` beats a random run of ``b`` (ties count half): 0.5 when
            the two are alike, 1.0 when every run of ``a`` is faster.
        alpha: significance level; the intervals cover ``1 - alpha``.
        verdict: a `Verdict`: ``'a faster'``, ``'b faster'`` or
            ``'no detectable difference'``.
    """

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float
    ratio_ci: tuple[float, float]
    shift: float
    shift_ci: tuple[float, float]
    p_value: float
    prob_a_faster: float
    alpha: float
    verdict: Verdict

    def __str__(self) -> str:
        level = f"{1 - self.alpha:.0%}"
        return (f"{self.verdict} (p = {self.p_value:.2g}); median ratio a/b "
                f"{self.ratio:.3f}, {level} CI [{self.ratio_ci[0]:.3f}, "
                f"{self.ratio_ci[1]:.3f}]; P(a faster) = "
                f"{self.prob_a_faster:.2f}; n = {self.n_a}, {self.n_b}")


def compare(a: ArrayLike, b: ArrayLike, *, alpha: float = 0.05,
            n_resamples: int = 2000, seed: int = 0) -> Comparison:
    """Compare two samples of times (seconds, or any positive unit).

    Args:
        a, b: the times of each version, one per run.
        alpha: significance level of the test and the intervals.
        n_resamples: bootstrap resamples for the ratio's interval.
        seed: seeds the bootstrap, so a result can be reproduced.

    Returns:
        A `Comparison`. Its verdict names the faster version when the
        Mann-Whitney p-value is below ``alpha``.

    Raises:
        ValueError: fewer than 5 times on a side, a NaN or infinite time,
            a time <= 0, or ``alpha`` outside (0, 0.5].

    Example:
        >>> compare([1.0, 1.1, 1.0, 1.2, 1.1] * 4,
        ...         [2.0, 2.1, 2.2, 2.0, 2.1] * 4).verdict
        'a faster'
    """
    a, b = _samples(a, b, alpha)
    test = scipy_stats.mannwhitneyu(a, b, alternative="two-sided")
    shift, shift_ci = hodges_lehmann(a, b, alpha=alpha)
    return Comparison(
        n_a=len(a), n_b=len(b),
        median_a=float(np.median(a)), median_b=float(np.median(b)),
        ratio=float(np.median(a) / np.median(b)),
        ratio_ci=_ratio_ci(a, b, alpha, n_resamples, seed),
        shift=shift, shift_ci=shift_ci, p_value=float(test.pvalue),
        prob_a_faster=1.0 - float(test.statistic) / (len(a) * len(b)),
        alpha=alpha, verdict=_verdict(float(test.pvalue), shift, alpha))


def decide(a: ArrayLike, b: ArrayLike, *, alpha: float = 0.05) -> Verdict:
    """`compare`'s verdict alone, without its intervals and estimates.

    The same rule on the same numbers, so ``decide(a, b)`` always equals
    ``compare(a, b).verdict``; it skips the bootstrap and the interval
    search, the costly parts (for 39 runs a side, 0.9 ms against
    `compare`'s 6 ms on the book's CPU test machine). For simulations that
    decide thousands of times (chapter 4's power tables); to report a
    comparison, use `compare`.

    Raises:
        ValueError: as `compare` does, for the same bad samples or alpha.

    Example:
        >>> decide([1.0, 1.1, 1.0, 1.2, 1.1] * 4,
        ...        [2.0, 2.1, 2.2, 2.0, 2.1] * 4)
        'a faster'
    """
    a, b = _samples(a, b, alpha)
    p_value = float(scipy_stats.mannwhitneyu(
        a, b, alternative="two-sided").pvalue)
    if p_value >= alpha:  # no verdict either way: the shift is not needed
        return Verdict.NO_DIFFERENCE
    return _verdict(p_value, _shift(np.sort(a), np.sort(b)), alpha)


def _verdict(p_value: float, shift: float, alpha: float) -> Verdict:
    """The rule `compare` and `decide` share: a verdict only when the rank
    test is significant, and then the sign of the shift says which way the
    ranks lean."""
    if p_value >= alpha:
        return Verdict.NO_DIFFERENCE
    return Verdict.A_FASTER if shift < 0 else Verdict.B_FASTER


def _samples(a: ArrayLike, b: ArrayLike,
             alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Both samples checked and as float arrays, and ``alpha`` checked."""
    a, b = _times(a, "a"), _times(b, "b")
    if not 0 < alpha <= 0.5:
        raise ValueError(f"alpha is a probability in (0, 0.5]; got {alpha}.")
    return a, b


def _times(values: ArrayLike, label: str) -> np.ndarray:
    """``values`` as a float array, or a clear error saying what is wrong."""
    try:
        times = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError) as err:
        raise ValueError(f"sample {label} must be numbers (times); "
                         f"{err}") from err
    if len(times) < MIN_SAMPLES:
        raise ValueError(
            f"sample {label} has {len(times)} times; compare needs at least "
            f"{MIN_SAMPLES} per side (with fewer, no rank test can reach "
            "p < 0.05). Time more runs; required_samples() says how many.")
    if not np.all(np.isfinite(times)):
        raise ValueError(f"sample {label} holds NaN or infinite times; "
                         "drop the failed runs before comparing.")
    if np.any(times <= 0):
        raise ValueError(f"sample {label} holds times <= 0 (smallest "
                         f"{times.min()}); a run takes positive time. Was "
                         "the clock stopped before the work finished?")
    return times


def _ratio_ci(a: np.ndarray, b: np.ndarray, alpha: float,
              n_resamples: int, seed: int) -> tuple[float, float]:
    """Percentile bootstrap interval of median(a) / median(b), resampling
    each sample on its own (the two are independent)."""
    def ratio(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.median(x, axis=axis) / np.median(y, axis=axis)

    result = scipy_stats.bootstrap(
        (a, b), ratio, n_resamples=n_resamples, confidence_level=1 - alpha,
        method="percentile", vectorized=True, batch=200,
        rng=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return float(low), float(high)


def hodges_lehmann(a: ArrayLike, b: ArrayLike, *,
                   alpha: float = 0.05) -> tuple[float, tuple[float, float]]:
    """The Hodges-Lehmann shift of ``a`` over ``b`` and its interval.

    The estimate is the median of the ``n_a * n_b`` differences
    ``a_i - b_j``; the ``1 - alpha`` interval runs between two of their
    order statistics, chosen where the Mann-Whitney statistic crosses its
    critical value (normal approximation). The differences are never all
    formed: `_kth_difference` finds one by bisection, so 10,000 runs a side
    need no 800 MB array.

    Returns:
        ``(shift, (low, high))`` in the samples' unit.
    """
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    pairs = len(a) * len(b)
    z = scipy_stats.norm.ppf(1 - alpha / 2)
    half_width = z * math.sqrt(pairs * (len(a) + len(b) + 1) / 12)
    k = max(1, math.floor(pairs / 2 - half_width))
    return _shift(a, b), (_kth_difference(a, b, k),
                          _kth_difference(a, b, pairs - k + 1))


def _shift(a: np.ndarray, b: np.ndarray) -> float:
    """The median of all ``a_i - b_j``, for sorted a, b: the middle one,
    or the mean of the middle two when their number is even."""
    pairs = len(a) * len(b)
    middle = [_kth_difference(a, b, (pairs + 1) // 2),
              _kth_difference(a, b, pairs // 2 + 1)]
    return float(np.mean(middle))


def _kth_difference(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """The k-th smallest (1-based) of all ``a_i - b_j``, for sorted a, b.

    The number of pairs with ``a_i - b_j <= t`` grows with ``t`` and is
    counted with one `searchsorted`; bisection finds the smallest ``t``
    whose count reaches ``k``, which is that difference.
    """
    low, high = a[0] - b[-1], a[-1] - b[0]
    for _ in range(200):  # each step halves the interval
        middle = (low + high) / 2
        if middle in (low, high):  # adjacent floats: as close as it gets
            break
        # a_i - b_j <= t  <=>  b_j >= a_i - t
        at_most = len(a) * len(b) - np.searchsorted(b, a - middle).sum()
        if at_most >= k:
            high = middle
        else:
            low = middle
    return float(high)


def required_samples(rel_diff: float, spread: float, *, power: float = 0.9,
                     alpha: float = 0.05) -> int:
    """Runs per version for `compare` to find a relative difference.

    Noether's formula for the Mann-Whitney test (G. E. Noether, "Sample
    size determination for some common nonparametric tests", JASA 82,
    1987, 645-647), for times spread like a bell curve: a shift of
    ``rel_diff`` medians makes a run of the slower version lose with
    probability ``p = Phi(d)``, ``d`` being the shift in standard
    deviations of the difference of two runs, and each side needs
    ``(z_alpha/2 + z_power)^2 / (6 (p - 1/2)^2)`` runs.

    Args:
        rel_diff: the smallest relative difference worth finding, e.g.
            0.03 for 3%.
        spread: the relative spread of one version's times, IQR over
            median (`helpers.measuring.bench.Timing.rel_spread`).
        power: the chance of finding a true difference of that size.
        alpha: the significance level `compare` will use.

    Returns:
        Runs per version (at least 5).

    Raises:
        ValueError: a difference or spread <= 0, or power/alpha outside
            (0, 1).

    Example:
        >>> required_samples(0.03, 0.05)
        39
    """
    for label, value in (("rel_diff", rel_diff), ("spread", spread)):
        if not (isinstance(value, (int, float)) and math.isfinite(value)
                and value > 0):
            raise ValueError(f"{label} must be a positive number (a "
                             f"fraction such as 0.03); got {value!r}.")
    for label, value in (("power", power), ("alpha", alpha)):
        if not 0 < value < 1:
            raise ValueError(f"{label} is a probability in (0, 1); "
                             f"got {value!r}.")
    sigma = spread / (2 * scipy_stats.norm.ppf(0.75))  # IQR = 1.349 sigma
    # A run of the slower version minus one of the faster: mean rel_diff,
    # and both spreads add; the slower one's is (1 + rel_diff) times wider
    # because the spread is relative to each version's own median.
    spread_of_difference = sigma * math.hypot(1, 1 + rel_diff)
    p_slower_loses = scipy_stats.norm.cdf(rel_diff / spread_of_difference)
    z = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(power)
    n = z ** 2 / (6 * (p_slower_loses - 0.5) ** 2)
    return max(MIN_SAMPLES, math.ceil(n))
