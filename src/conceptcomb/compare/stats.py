"""The statistics of one run's intervals and of comparing two runs on the same items: the one
module that `conceptcomb compare`, leaderboard bundles, the Every Eval Ever export,
``validate-bundle`` and the report call (nothing else computes an interval).

The recipe is Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (arXiv 2411.00640): report each score with a standard error built from
the items (the central limit theorem), cluster the standard error where items share a unit,
compare two models on the same items through their per-item differences, and say how large a
difference the number of items could detect. Each function below names its formula; the
libraries compute what they can:

* one run, a metric that is a mean over items: the mean with the t interval of
  ``scipy.stats.ttest_1samp`` (standard error s / sqrt(n), n - 1 degrees of freedom); where
  items share a unit (`clustered_stderr`), the clustered standard error and a t interval
  with C - 1 degrees of freedom, as Inspect's ``stderr(cluster=...)`` and ``ci(cluster=...)``;
* two runs, a mean metric (`paired_difference`): the per-item differences d_i = a_i - b_i,
  their mean, ``scipy.stats.ttest_rel`` (standard error s_d / sqrt(n), where
  Var(a - b) = Var(a) + Var(b) - 2 Cov(a, b): pairing removes the items' shared difficulty),
  or the clustered standard error of the d_i with C - 1 degrees of freedom; for items that are
  right or wrong (two values, 0 and 1 or 0 and 100), the p-value of the exact McNemar test
  (``statsmodels.stats.contingency_tables.mcnemar(exact=True)``: a binomial test on the
  discordant items), beside the t interval of the difference;
* a corpus metric (BLEU, CIDEr, macro-F1: not a mean over items): a seeded paired
  bootstrap (`resample_counts`, `bootstrap_interval`, `bootstrap_difference`) that resamples
  items with replacement and computes the metric again on each resample
  (`conceptcomb.compare.corpus`); percentile interval, the resamples' standard deviation as
  standard error, and a two-sided p-value from the resampled differences centred on their
  mean (Koehn 2004, "Statistical Significance Tests for Machine Translation Evaluation";
  sacrebleu's paired bootstrap does the same);
* the minimum detectable difference (`mdd_t`, `mdd_normal`): the smallest true difference
  that a two-sided 5% test finds with 80% power given this number of items and the observed
  spread of the differences (Miller's power analysis; statsmodels' ``TTestPower`` for the
  paired t test, (z_0.975 + z_0.80) x standard error otherwise);
* Holm's step-down adjustment of all the p-values printed together (`holm`:
  ``statsmodels.stats.multitest.multipletests(method="holm")``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

LEVEL = 0.95  # every interval here: 95%, two-sided
ALPHA = 0.05  # the tests' level, and the minimum detectable difference's
POWER = 0.80  # the power of the minimum detectable difference
N_RESAMPLES = 1000  # the bootstrap's default
SEED = 20241101  # the bootstrap's default seed (a fixed one: intervals are reproducible)

T_METHOD = "t"
CLUSTERED_METHOD = "t, clustered"
BOOTSTRAP_METHOD = "paired bootstrap, percentile"
MCNEMAR_METHOD = "exact McNemar"


# --- one run --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """A run's metric with its standard error and 95% interval, and how they were made."""

    value: float
    stderr: float | None
    lower: float | None
    upper: float | None
    method: str  # the interval's: "t", "t, clustered", "bootstrap, percentile"
    stderr_method: str  # "analytic", "clustered", "bootstrap"
    n: int  # items
    clusters: int | None = None  # units, when clustered
    unit: str | None = None  # what the clusters are ("noun phrase")
    resamples: int | None = None  # bootstrap resamples
    level: float = LEVEL

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Interval:
        return cls(**{key: data.get(key) for key in cls.__dataclass_fields__ if key in data})


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return array[np.isfinite(array)]


def clustered_stderr(values: Sequence[float] | np.ndarray, units: Sequence[Any]) -> float:
    """The clustered standard error of a mean (Miller 2024, appendix A, with Inspect's finite
    cluster correction C / (C - 1)): sqrt(C / (C - 1) * sum_c (sum_{i in c} (x_i - mean))^2) / n.
    Equal to Inspect's ``stderr(cluster=...)``, and to statsmodels' ``OLS(x, 1)`` with
    ``cov_type="cluster"`` (whose correction is the same for one regressor); 0 for one cluster,
    as Inspect gives."""
    x = np.asarray(values, dtype=float)
    _, codes = np.unique(np.asarray(units, dtype=object).astype(str), return_inverse=True)
    clusters = int(codes.max()) + 1 if len(codes) else 0
    if clusters < 2:
        return 0.0
    sums = np.bincount(codes, weights=x - x.mean(), minlength=clusters)
    return float(math.sqrt(float(np.sum(sums**2)) * clusters / (clusters - 1)) / len(x))


def _shared(units: Sequence[Any] | None, n: int) -> tuple[np.ndarray, int] | None:
    """The units as codes and their number, where some items share one (else None)."""
    if units is None:
        return None
    _, codes = np.unique(np.asarray(units, dtype=object).astype(str), return_inverse=True)
    clusters = int(codes.max()) + 1 if n else 0
    return (codes, clusters) if 1 < clusters < n else None


def mean_interval(
    values: Sequence[float] | np.ndarray,
    units: Sequence[Any] | None = None,
    unit: str | None = None,
    level: float = LEVEL,
) -> Interval | None:
    """A mean over items (undefined items, NaN, left out as the frameworks' means leave them):
    ``scipy.stats.ttest_1samp``'s t interval, or, where items share a unit, the clustered
    standard error with a t interval on C - 1 degrees of freedom (Inspect's ``ci(method="t",
    cluster=...)``). None without two defined items."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    keep = np.isfinite(x)
    x = x[keep]
    n = len(x)
    if n < 2:
        return None
    mean = float(np.mean(x))
    shared = _shared(None if units is None else np.asarray(units, dtype=object)[keep], n)
    if shared is not None:
        codes, clusters = shared
        se = clustered_stderr(x, codes)
        half = float(stats.t.ppf(0.5 + level / 2, clusters - 1)) * se
        return Interval(
            mean, se, mean - half, mean + half, CLUSTERED_METHOD, "clustered", n, clusters, unit
        )
    se = float(np.std(x, ddof=1) / math.sqrt(n))
    if se == 0.0:
        return Interval(mean, 0.0, mean, mean, T_METHOD, "analytic", n)
    low, high = stats.ttest_1samp(x, 0.0).confidence_interval(level)
    return Interval(mean, se, float(low), float(high), T_METHOD, "analytic", n)


# --- two runs on the same items -------------------------------------------------------------
@dataclass(frozen=True)
class Difference:
    """A - B on the paired items, with its uncertainty."""

    a: float
    b: float
    difference: float
    stderr: float
    lower: float
    upper: float
    p: float
    n: int  # paired items (defined in both runs)
    mdd: float | None  # minimum detectable difference (80% power, 5% two-sided)
    method: str
    correlation: float | None = None  # of the per-item scores (None: corpus metric, constant)
    clusters: int | None = None
    unit: str | None = None
    resamples: int | None = None
    level: float = LEVEL

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def binary_scale(a: np.ndarray, b: np.ndarray) -> float | None:
    """The value of a right item where both runs' items are right or wrong (0 and 1, or 0 and
    100 for a percentage); None otherwise."""
    values = np.unique(np.concatenate([a, b]))
    if len(values) > 2 or (len(values) == 2 and values[0] != 0.0):
        return None
    top = float(values[-1]) if len(values) else 0.0
    return top if top in (0.0, 1.0, 100.0) else None


def mcnemar_p(a: np.ndarray, b: np.ndarray, right: float) -> float:
    """Exact McNemar p-value (statsmodels) of paired right/wrong items."""
    from statsmodels.stats.contingency_tables import mcnemar

    ra, rb = a == right, b == right
    table = [[int(np.sum(ra & rb)), int(np.sum(ra & ~rb))], [int(np.sum(~ra & rb)), 0]]
    table[1][1] = int(np.sum(~ra & ~rb))
    return float(min(1.0, mcnemar(table, exact=True).pvalue))


def _correlation(a: np.ndarray, b: np.ndarray) -> float | None:
    if len(a) < 2 or np.std(a) == 0.0 or np.std(b) == 0.0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def _degenerate(mean: float) -> tuple[float, float, float, float]:
    """Every difference the same: no spread, so the interval is the point and p is 1 for a
    difference of 0 (a run against itself), 0 otherwise. (se, lower, upper, p)"""
    return 0.0, mean, mean, 1.0 if mean == 0.0 else 0.0


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    units: Sequence[Any] | None = None,
    unit: str | None = None,
    level: float = LEVEL,
) -> Difference | None:
    """A mean metric of two runs on the same items, in the same order (an item undefined in
    either run, NaN, left out). Without shared units: ``scipy.stats.ttest_rel`` (difference,
    its t interval and p), and for right/wrong items the exact McNemar p-value instead of the
    t test's; with shared units: the clustered standard error of the differences and the t
    distribution with C - 1 degrees of freedom (McNemar assumes independent items, so it is
    not used there). None with fewer than two paired items."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = len(a)
    if n < 2:
        return None
    d = a - b
    mean = float(np.mean(d))
    base = {"a": float(np.mean(a)), "b": float(np.mean(b)), "difference": mean, "n": n}
    base["correlation"] = _correlation(a, b)
    shared = _shared(None if units is None else np.asarray(units, dtype=object)[keep], n)
    if shared is not None:
        codes, clusters = shared
        se = clustered_stderr(d, codes)
        if se == 0.0:
            se, low, high, p = _degenerate(mean)
        else:
            crit = float(stats.t.ppf(0.5 + level / 2, clusters - 1))
            low, high = mean - crit * se, mean + crit * se
            p = float(2 * stats.t.sf(abs(mean / se), clusters - 1))
        return Difference(
            **base, stderr=se, lower=low, upper=high, p=p, mdd=mdd_normal(se),
            method=CLUSTERED_METHOD, clusters=clusters, unit=unit, level=level,
        )  # fmt: skip
    sd = float(np.std(d, ddof=1))
    if sd == 0.0:
        se, low, high, p = _degenerate(mean)
    else:
        test = stats.ttest_rel(a, b)
        low, high = (float(v) for v in test.confidence_interval(level))
        se, p = sd / math.sqrt(n), float(test.pvalue)
    method = T_METHOD
    right = binary_scale(a, b)
    if right is not None and right > 0:
        p, method = mcnemar_p(a, b, right), f"{MCNEMAR_METHOD} (p); t interval"
    return Difference(
        **base, stderr=se, lower=low, upper=high, p=p, mdd=mdd_t(sd, n), method=method, level=level
    )


# --- power ----------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def _effect_size(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """Cohen's d a paired t test on n items detects with this power (statsmodels solves the
    noncentral t); cached: it depends on n only."""
    from statsmodels.stats.power import TTestPower

    return float(np.ravel(TTestPower().solve_power(nobs=n, alpha=alpha, power=power))[0])


def mdd_t(sd: float, n: int) -> float | None:
    """Minimum detectable difference of a paired t test: Cohen's d for n items (80% power,
    5% two-sided) times the standard deviation of the differences."""
    if n < 2:
        return None
    return _effect_size(n) * sd


def mdd_normal(stderr: float) -> float:
    """Minimum detectable difference from a standard error (clustered, bootstrap):
    (z_{1-alpha/2} + z_{power}) x SE = 2.80 x SE for 5% and 80%."""
    from scipy import stats

    return float((stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(POWER)) * stderr)


# --- many comparisons -----------------------------------------------------------------------
def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (statsmodels ``multipletests``), in the given order."""
    if not pvalues:
        return []
    from statsmodels.stats.multitest import multipletests

    return [float(p) for p in multipletests(list(pvalues), alpha=ALPHA, method="holm")[1]]


# --- the bootstrap --------------------------------------------------------------------------
class Resampled(Protocol):
    """A corpus metric over n items (`conceptcomb.compare.corpus`)."""

    def value(self) -> float:
        """The metric on all items."""

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        """The metric on each resample: ``counts`` is (resamples x n), how often each item is
        drawn (each row sums to n)."""


def resample_indices(n: int, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The items drawn, (resamples x n): ``numpy.random.default_rng(seed).integers(0, n,
    (resamples, n))``, the draw ``scipy.stats.bootstrap`` makes with that generator."""
    return np.random.default_rng(seed).integers(0, n, (n_resamples, n))


@lru_cache(maxsize=16)
def _counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    indices = resample_indices(n, n_resamples, seed)
    rows = np.arange(n_resamples)[:, None] * n
    counts = np.bincount((indices + rows).ravel(), minlength=n_resamples * n)
    counts = counts.reshape(n_resamples, n).astype(float)
    counts.flags.writeable = False
    return counts


def resample_counts(n: int, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> np.ndarray:
    """How often each item is drawn in each resample of `resample_indices` (resamples x n).
    Every run of a task with the same n items (in the same order) gets the same resamples:
    paired by construction, and each run's resampled metric is computed once, whatever the
    number of comparisons it is in."""
    return _counts(n, n_resamples, seed)


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    low, high = np.percentile(values, [50 * (1 - level), 50 * (1 + level)])
    return float(low), float(high)


def bootstrap_distribution(
    metric: Resampled, n: int, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """The metric on each of the ``n_resamples`` seeded resamples of its n items."""
    return np.asarray(metric.resampled(resample_counts(n, n_resamples, seed)), dtype=float)


def bootstrap_interval(
    value: float, distribution: np.ndarray, n: int, level: float = LEVEL
) -> Interval:
    """A corpus metric's percentile interval and bootstrap standard error (the standard
    deviation of its resampled values, ddof 1)."""
    finite = distribution[np.isfinite(distribution)]
    low, high = _percentiles(finite, level) if len(finite) else (None, None)
    se = float(np.std(finite, ddof=1)) if len(finite) > 1 else None
    return Interval(
        value, se, low, high, "bootstrap, percentile", "bootstrap", n,
        resamples=len(distribution), level=level,
    )  # fmt: skip


def bootstrap_difference(
    a: tuple[float, np.ndarray], b: tuple[float, np.ndarray], n: int, level: float = LEVEL
) -> Difference:
    """A - B from both runs' values on all items and on the same resamples: the observed
    difference, the percentile interval and standard deviation of the resampled
    differences, and p = (1 + #{|d_r - mean(d)| >= |observed|}) / (R + 1), two-sided."""
    (value_a, dist_a), (value_b, dist_b) = a, b
    d = dist_a - dist_b
    d = d[np.isfinite(d)]
    observed = value_a - value_b
    if len(d) < 2:
        nan = float("nan")
        return Difference(value_a, value_b, observed, nan, nan, nan, nan, n, None, BOOTSTRAP_METHOD)
    se = float(np.std(d, ddof=1))
    if se == 0.0:
        se, low, high, p = _degenerate(observed)
    else:
        low, high = _percentiles(d, level)
        extreme = int(np.sum(np.abs(d - d.mean()) >= abs(observed) - 1e-12 * max(1, abs(observed))))
        p = (1 + extreme) / (len(d) + 1)
    return Difference(
        value_a, value_b, observed, se, low, high, float(min(1.0, p)), n, mdd_normal(se),
        BOOTSTRAP_METHOD, resamples=len(d), level=level,
    )  # fmt: skip
