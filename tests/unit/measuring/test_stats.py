import numpy as np
import pytest
from scipy import stats as scipy_stats

from helpers.measuring import stats as s


def _pairwise(a, b):
    return np.subtract.outer(np.asarray(a), np.asarray(b)).ravel()


def test_a_clear_difference_names_the_faster_side():
    rng = np.random.default_rng(0)
    fast, slow = rng.normal(1.0, 0.02, 40), rng.normal(1.2, 0.02, 40)
    assert s.compare(fast, slow).verdict == "a faster"
    result = s.compare(slow, fast)
    assert result.verdict == "b faster"
    assert result.p_value < 1e-10
    assert result.ratio == pytest.approx(1.2, rel=0.02)
    assert result.ratio_ci[0] < result.ratio < result.ratio_ci[1]
    assert result.prob_a_faster == 0.0
    assert "b faster" in str(result)


def test_the_same_distribution_gives_no_verdict():
    rng = np.random.default_rng(1)
    result = s.compare(rng.normal(1, 0.05, 50), rng.normal(1, 0.05, 50))
    assert result.verdict == "no detectable difference"
    assert result.p_value > 0.05
    assert result.ratio_ci[0] < 1 < result.ratio_ci[1]


def test_hodges_lehmann_is_the_median_of_all_differences():
    rng = np.random.default_rng(2)
    a, b = rng.gamma(2, 1, 37), rng.gamma(2, 1, 24) + 0.5
    shift, (low, high) = s.hodges_lehmann(a, b)
    diffs = np.sort(_pairwise(a, b))
    assert shift == pytest.approx(np.median(diffs), rel=1e-9)
    # The interval's ends are order statistics of the differences.
    assert np.min(np.abs(diffs - low)) < 1e-9
    assert np.min(np.abs(diffs - high)) < 1e-9
    assert low < shift < high


def test_effect_size_counts_pairs_where_a_wins():
    a, b = [1.0, 2.0, 3.0, 4.0, 5.0], [2.5, 3.5, 4.5, 5.5, 6.5]
    wins = np.mean(_pairwise(a, b) < 0)
    assert s.compare(a, b).prob_a_faster == pytest.approx(wins)


def test_shift_interval_covers_the_true_shift_95_percent_of_the_time():
    rng = np.random.default_rng(3)
    trials = 400
    covered = 0
    for _ in range(trials):
        a, b = rng.normal(0, 1, 30), rng.normal(0.4, 1, 30)
        _, (low, high) = s.hodges_lehmann(a, b)
        covered += low <= -0.4 <= high
    # Binomial sampling error: not significantly below 95%.
    test = scipy_stats.binomtest(covered, trials, 0.95, alternative="less")
    assert test.pvalue > 0.01, covered / trials


def test_decide_gives_compares_verdict():
    # Both directions, no difference, ties and unequal sizes: the verdict
    # alone must be the one compare reaches on the same samples.
    rng = np.random.default_rng(4)
    seen = set()
    for trial in range(300):
        n_a, n_b = rng.integers(5, 40, size=2)
        shift = rng.choice([-0.05, -0.01, 0.0, 0.01, 0.05])
        a = rng.gamma(20, 0.05, n_a)
        b = rng.gamma(20, 0.05, n_b) + shift
        if trial % 3 == 0:  # a coarse clock: many tied times
            a, b = np.round(a, 1), np.round(b, 1)
        a, b = np.clip(a, 0.1, None), np.clip(b, 0.1, None)
        verdict = s.decide(a, b)
        assert verdict == s.compare(a, b, n_resamples=50).verdict
        seen.add(verdict)
    assert seen == set(s.VERDICTS)


@pytest.mark.parametrize("a, alpha, message", [
    ([1.0, 2.0], 0.05, "has 2 times; compare needs at least 5"),
    ([1.0, 2.0, np.inf, 1.0, 1.0], 0.05, "NaN or infinite"),
    ([1.0] * 5, 0.9, "alpha is a probability"),
])
def test_decide_refuses_what_compare_refuses(a, alpha, message):
    with pytest.raises(ValueError, match=message):
        s.decide(a, [1.0] * 5, alpha=alpha)


def test_required_samples_grows_with_spread_and_shrinks_with_effect():
    assert s.required_samples(0.03, 0.05) == 39
    assert (s.required_samples(0.03, 0.02)
            < s.required_samples(0.03, 0.05)
            < s.required_samples(0.03, 0.10))
    assert (s.required_samples(0.10, 0.05)
            < s.required_samples(0.01, 0.05))
    # A huge effect still needs a few runs before ranks can be significant.
    assert s.MIN_SAMPLES <= s.required_samples(0.5, 0.01) <= 10


@pytest.mark.parametrize("a, message", [
    ([1.0, 2.0], "has 2 times; compare needs at least 5"),
    ([1.0, 2.0, np.nan, 1.0, 1.0], "NaN or infinite"),
    ([1.0, 2.0, 0.0, 1.0, 1.0], "times <= 0"),
    (["fast"] * 5, "must be numbers"),
])
def test_bad_samples_get_clear_errors(a, message):
    with pytest.raises(ValueError, match=message):
        s.compare(a, [1.0] * 5)


def test_bad_settings_get_clear_errors():
    with pytest.raises(ValueError, match="alpha is a probability"):
        s.compare([1.0] * 5, [1.0] * 5, alpha=5)
    with pytest.raises(ValueError, match="rel_diff must be a positive"):
        s.required_samples(0, 0.05)
    with pytest.raises(ValueError, match="spread must be a positive"):
        s.required_samples(0.03, float("nan"))
    with pytest.raises(ValueError, match="power is a probability"):
        s.required_samples(0.03, 0.05, power=90)



def test_required_samples_counts_the_slower_versions_wider_spread():
    # With a 30% difference the slower version's times spread 1.3 times
    # wider; a formula that ignored it recommended 38 runs, found 83%.
    rel_diff, spread, trials = 0.3, 0.5, 4000
    n = s.required_samples(rel_diff, spread)
    rng = np.random.default_rng(0)
    sigma = spread / 1.349  # a normal's IQR is 1.349 sigma
    a = rng.normal(1.0, sigma, (trials, n))
    b = rng.normal(1.0, sigma, (trials, n)) * (1 + rel_diff)
    found = int((scipy_stats.mannwhitneyu(a, b, axis=1).pvalue
                 < 0.05).sum())
    test = scipy_stats.binomtest(found, trials, 0.90, alternative="less")
    assert test.pvalue > 0.01, (n, found / trials)


def test_the_verdict_is_an_enum_that_reads_as_its_text():
    from helpers.measuring import stats as s

    result = s.compare([1.0, 1.1, 1.0, 1.2, 1.1] * 4,
                       [2.0, 2.1, 2.2, 2.0, 2.1] * 4)
    assert result.verdict is s.Verdict.A_FASTER
    assert result.verdict == "a faster" and f"{result.verdict}" == "a faster"
    assert s.VERDICTS == (s.Verdict.A_FASTER, s.Verdict.B_FASTER,
                          s.Verdict.NO_DIFFERENCE)
