"""`conceptcomb.leaderboard.statistics.stats` against scipy, statsmodels and Inspect, computed
here on the same arrays independently."""

from __future__ import annotations

import math
from inspect import signature

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score, stderr
from scipy import stats as scipy_stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from conceptcomb.leaderboard.statistics import stats
from conceptcomb.leaderboard.statistics.corpus import Mean

RNG = np.random.default_rng(7)
A = RNG.normal(50, 20, 120)
B = A - 4 + RNG.normal(0, 10, 120)  # correlated with A, as two models on the same items are
UNITS = [f"np{i // 3}" for i in range(120)]  # 40 noun phrases, three items each


def test_a_run_against_itself_gives_zero_an_empty_interval_and_p_one() -> None:
    for units in (None, UNITS):
        same = stats.paired_difference(A, A, units)
        assert same is not None
        assert (same.difference, same.lower, same.upper, same.p) == (0.0, 0.0, 0.0, 1.0)
    right = (RNG.random(50) > 0.5) * 100.0
    same = stats.paired_difference(right, right)
    assert same is not None and (same.difference, same.lower, same.upper, same.p) == (0, 0, 0, 1)
    mean = Mean(A)
    values = stats.bootstrap_distribution(mean, len(A), 200)
    boot = stats.bootstrap_difference((mean.value(), values), (mean.value(), values), len(A))
    assert (boot.difference, boot.lower, boot.upper, boot.p) == (0.0, 0.0, 0.0, 1.0)


def test_one_difference_on_every_item_up_to_rounding_is_exact() -> None:
    """A - B of 0.1 on each item leaves rounding errors (~1e-17) as its spread: scipy's t test
    then gives p ~ 1e-48 or 1e-300 (as `judge agree` once printed); the difference has no
    spread, so its interval is the point and p is 0 (1 where it is 0)."""
    shifted = A - 0.1
    assert np.std(A - shifted) > 0  # rounding, which the t test takes for a spread
    for units in (None, UNITS):
        diff = stats.paired_difference(A, shifted, units)
        assert diff is not None and diff.lower == diff.upper == diff.difference
        assert diff.difference == pytest.approx(0.1) and diff.p == 0.0 and diff.stderr == 0.0
    nearly = shifted.copy()
    nearly[0] += 1e-6  # a real spread, however small, keeps its interval
    diff = stats.paired_difference(A, nearly)
    assert diff is not None and diff.stderr > 0 and diff.lower < diff.difference < diff.upper


def test_the_paired_t_difference_is_scipys() -> None:
    found = stats.paired_difference(A, B)
    test = scipy_stats.ttest_rel(A, B)
    low, high = test.confidence_interval(0.95)
    assert found is not None and found.method == "t"
    assert found.difference == pytest.approx(np.mean(A - B), abs=1e-12)
    assert (found.lower, found.upper) == (pytest.approx(low), pytest.approx(high))
    assert found.p == pytest.approx(test.pvalue)
    assert found.stderr == pytest.approx(np.std(A - B, ddof=1) / math.sqrt(len(A)))
    assert found.correlation == pytest.approx(np.corrcoef(A, B)[0, 1])
    d = TTestPower().solve_power(nobs=len(A), alpha=0.05, power=0.8)
    assert found.mdd == pytest.approx(d * np.std(A - B, ddof=1))
    assert found.n == 120


def test_undefined_items_are_left_out_of_both() -> None:
    a, b = A.copy(), B.copy()
    a[3], b[10] = np.nan, np.nan
    found = stats.paired_difference(a, b)
    keep = np.isfinite(a) & np.isfinite(b)
    assert found is not None and found.n == 118
    assert found.p == pytest.approx(scipy_stats.ttest_rel(a[keep], b[keep]).pvalue)


def test_right_or_wrong_items_take_the_exact_mcnemar_p() -> None:
    a = (RNG.random(200) < 0.6) * 100.0
    b = np.where(RNG.random(200) < 0.8, a, 100.0 - a)
    found = stats.paired_difference(a, b)
    ra, rb = a == 100.0, b == 100.0
    table = [[np.sum(ra & rb), np.sum(ra & ~rb)], [np.sum(~ra & rb), np.sum(~ra & ~rb)]]
    assert found is not None and found.method.startswith("exact McNemar")
    assert found.p == pytest.approx(mcnemar(table, exact=True).pvalue)
    discordant = int(table[0][1] + table[1][0])
    binomial = scipy_stats.binomtest(int(table[0][1]), discordant, 0.5).pvalue
    assert found.p == pytest.approx(binomial)
    assert found.difference == pytest.approx(np.mean(a) - np.mean(b))


def test_the_clustered_standard_error_is_inspects() -> None:
    scores = [
        SampleScore(score=Score(value=float(v)), sample_id=i, sample_metadata={"np": u})
        for i, (v, u) in enumerate(zip(A, UNITS, strict=True))
    ]
    inspect_se = stderr(cluster="np")(scores)
    assert stats.clustered_stderr(A, UNITS) == pytest.approx(inspect_se, rel=1e-12)
    interval = stats.mean_interval(A, UNITS, "noun phrase")
    assert interval is not None and interval.stderr == pytest.approx(inspect_se, rel=1e-12)
    assert interval.method == "t, clustered"
    assert (interval.clusters, interval.unit) == (40, "noun phrase")


def test_the_clustered_difference_is_statsmodels_cluster_regression() -> None:
    d = A - B
    codes = np.unique(UNITS, return_inverse=True)[1]
    fit = OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    found = stats.paired_difference(A, B, UNITS, "noun phrase")
    assert found is not None and found.method == "t, clustered" and found.clusters == 40
    assert found.stderr == pytest.approx(fit.bse[0], rel=1e-10)
    low, high = fit.conf_int(0.05)[0]
    assert (found.lower, found.upper) == (pytest.approx(low), pytest.approx(high))
    assert found.p == pytest.approx(fit.pvalues[0], rel=1e-8)


def test_items_of_their_own_unit_are_not_clustered() -> None:
    interval = stats.mean_interval(A, [str(i) for i in range(len(A))])
    assert interval is not None and interval.method == "t" and interval.clusters is None
    low, high = scipy_stats.ttest_1samp(A, 0).confidence_interval(0.95)
    assert (interval.lower, interval.upper) == (pytest.approx(low), pytest.approx(high))


def test_holm_is_statsmodels() -> None:
    """Our Holm (statsmodels' runs a full garbage collection on each call) gives what
    statsmodels gives: ties, values adjusted above 1, one p-value, random sets."""
    cases = [[0.01, 0.04, 0.03, 0.5], [0.2, 0.2, 0.01, 0.2], [0.3, 0.6, 0.9], [0.04]]
    rng = np.random.default_rng(0)
    cases += [list(rng.uniform(0, 0.2, size)) for size in (2, 7, 30)]
    for p in cases:
        expected = list(multipletests(p, alpha=stats.ALPHA, method="holm")[1])
        assert stats.holm(p) == pytest.approx(expected, abs=1e-15), p
    assert stats.holm([]) == []


def test_the_bootstrap_draws_what_scipy_draws() -> None:
    """Percentile interval of a mean: the same resamples as ``scipy.stats.bootstrap`` with a
    generator of the same seed, so the same interval and standard error."""
    mean = Mean(A)
    values = stats.bootstrap_distribution(mean, len(A), 500, seed=3)
    interval = stats.bootstrap_interval(mean.value(), values, len(A))
    # scipy 1.15 renamed the generator's keyword `rng` (SPEC 7); before it, `random_state`.
    keyword = "rng" if "rng" in signature(scipy_stats.bootstrap).parameters else "random_state"
    result = scipy_stats.bootstrap(
        (A,), np.mean, n_resamples=500, method="percentile", vectorized=True,
        **{keyword: np.random.default_rng(3)},
    )  # fmt: skip
    low, high = result.confidence_interval
    assert (interval.lower, interval.upper) == (pytest.approx(low), pytest.approx(high))
    assert interval.stderr == pytest.approx(result.standard_error)
    assert interval.resamples == 500 and interval.method == "bootstrap, percentile"


def test_a_bootstrap_difference_of_two_runs_of_a_mean() -> None:
    a, b = Mean(A), Mean(B)
    da = stats.bootstrap_distribution(a, len(A), 1000)
    db = stats.bootstrap_distribution(b, len(A), 1000)
    found = stats.bootstrap_difference((a.value(), da), (b.value(), db), len(A))
    assert found.difference == pytest.approx(np.mean(A) - np.mean(B))
    assert found.lower < found.difference < found.upper
    # close to the paired t interval for a mean this size
    t = stats.paired_difference(A, B)
    assert t is not None and found.stderr == pytest.approx(t.stderr, rel=0.15)
    assert found.p < 0.01 and found.resamples == 1000


def test_the_resample_counts_count_the_seeded_draws() -> None:
    """Counted a block of rows at a time (1,000 items: 65 rows a block), they are the draws
    of ``default_rng(seed).integers(0, n, (resamples, n))``, row by row."""
    drawn = np.random.default_rng(12).integers(0, 1000, (200, 1000))
    assert np.array_equal(drawn, stats.resample_indices(1000, 200, seed=12))
    counts = stats.resample_counts(1000, 200, seed=12)
    expected = np.stack([np.bincount(row, minlength=1000) for row in drawn])
    assert np.array_equal(counts, expected) and not counts.flags.writeable


def test_the_items_needed_are_statsmodels_solve_power_on_the_pilots_effect_size() -> None:
    pilot = stats.paired_difference(A, B)
    assert pilot is not None
    sd = float(np.std(A - B, ddof=1))
    for target in (2.0, 5.0):
        plan = stats.items_needed(pilot, target)
        n = TTestPower().solve_power(effect_size=target / sd, alpha=0.05, power=0.8)
        assert plan.items == math.ceil(n) and plan.effect_size == pytest.approx(target / sd)
        assert plan.units is None and plan.method == "paired t"
    # at the pilot's own MDD the pilot's n is (about) what it takes
    assert stats.items_needed(pilot, pilot.mdd).items == pytest.approx(len(A), abs=1)


def test_items_that_share_units_need_the_design_effect_more() -> None:
    shared = A + np.repeat(RNG.normal(0, 15, 40), 3)  # a unit's items move together
    pilot = stats.paired_difference(shared, B, UNITS, "noun phrase")
    independent = stats.paired_difference(shared, B)
    assert pilot is not None and independent is not None and pilot.clusters == 40
    d = shared - B
    se = stats.clustered_stderr(d, UNITS)
    design = (se / (np.std(d, ddof=1) / math.sqrt(len(d)))) ** 2
    plan = stats.items_needed(pilot, 5.0)
    n = TTestPower().solve_power(effect_size=5.0 / np.std(d, ddof=1), alpha=0.05, power=0.8)
    assert plan.design_effect == pytest.approx(design) and design > 1
    assert plan.items == math.ceil(n * design) > stats.items_needed(independent, 5.0).items
    assert plan.units == math.ceil(plan.items / 3) and plan.unit == "noun phrase"


def test_a_bootstrap_pilot_plans_from_its_standard_error() -> None:
    mean = Mean(A)
    other = Mean(B)
    boot = stats.bootstrap_difference(
        (mean.value(), stats.bootstrap_distribution(mean, len(A), 400)),
        (other.value(), stats.bootstrap_distribution(other, len(B), 400)),
        len(A),
    )
    plan = stats.items_needed(boot, 3.0)
    z = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.8)
    assert plan.items == math.ceil(len(A) * (z * boot.stderr / 3.0) ** 2)
