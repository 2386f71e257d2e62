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
  (the formula of ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``, a binomial
  test on the discordant items, computed for many pairs at once; the tests check it against
  statsmodels), beside the t interval of the difference;
* a corpus metric (BLEU, CIDEr, macro-F1: not a mean over items): a seeded paired
  bootstrap (`resample_counts`, `bootstrap_interval`, `bootstrap_difference`) that resamples
  items with replacement and computes the metric again on each resample
  (`conceptcomb.leaderboard.statistics.corpus`); percentile interval, the resamples' standard
  deviation as standard error, and a two-sided p-value from the resampled differences centred
  on their mean, the bootstrap's null distribution (Efron and Tibshirani 1993, "An Introduction
  to the Bootstrap", ch. 16; Koehn 2004 brought the paired bootstrap to corpus metrics);
* the minimum detectable difference (`mdd_t`, `mdd_normal`): the smallest true difference
  that a two-sided 5% test finds with 80% power given this number of items and the observed
  spread of the differences (Miller's power analysis; statsmodels' ``TTestPower`` for the
  paired t test, (z_0.975 + z_0.80) x standard error otherwise);
* the items a paired test needs (`items_needed`, ``compare --target-difference``): from a
  pilot comparison's spread of the per-item differences, the n at which a two-sided 5% paired
  t test finds a true difference D with 80% power (statsmodels' ``TTestPower().solve_power``
  on the effect size D / s_d); where items share units, that n times the design effect
  (the clustered variance of the mean difference over the independent one, Kish 1965), and
  the units it takes at the pilot's items per unit; for a corpus metric n x (2.80 SE / D)^2;
* Holm's step-down adjustment of all the p-values printed together (`holm`:
  ``statsmodels.stats.multitest.multipletests(method="holm")``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from conceptcomb.common.collector import heap_frozen

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
    codes = np.unique(unit_codes(units), return_inverse=True)[1]
    clusters = int(codes.max()) + 1 if len(codes) else 0
    if clusters < 2:
        return 0.0
    sums = np.bincount(codes, weights=x - x.mean(), minlength=clusters)
    return float(math.sqrt(float(np.sum(sums**2)) * clusters / (clusters - 1)) / len(x))


def unit_codes(units: Sequence[Any]) -> np.ndarray:
    """Each item's unit as an integer code (codes of the same unit are equal)."""
    array = np.asarray(units)
    if array.dtype.kind in "iu":
        return array
    return np.unique(np.asarray(units, dtype=object).astype(str), return_inverse=True)[1]


def _shared(units: Sequence[Any] | np.ndarray | None, n: int) -> tuple[np.ndarray, int] | None:
    """The units as codes and their number, where some items share one (else None)."""
    if units is None:
        return None
    codes = np.unique(unit_codes(units), return_inverse=True)[1]  # 0..C-1 over these items
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
    cluster=...)``). None without two defined items. The t quantile from scipy.special
    (`_t_critical`): importing scipy.stats takes seconds, most of a bundle's making."""
    x = np.asarray(values, dtype=float)
    keep = np.isfinite(x)
    x = x[keep]
    n = len(x)
    if n < 2:
        return None
    mean = float(np.mean(x))
    shared = _shared(None if units is None else _select(units, keep), n)
    if shared is not None:
        codes, clusters = shared
        se = clustered_stderr(x, codes)
        half = _t_critical(level, clusters - 1) * se
        return Interval(
            mean, se, mean - half, mean + half, CLUSTERED_METHOD, "clustered", n, clusters, unit
        )
    se = float(np.std(x, ddof=1) / math.sqrt(n))
    if se == 0.0:
        return Interval(mean, 0.0, mean, mean, T_METHOD, "analytic", n)
    half = _t_critical(level, n - 1) * se  # ttest_1samp(x).confidence_interval(level)
    return Interval(mean, se, mean - half, mean + half, T_METHOD, "analytic", n)


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
    sd: float | None = None  # the per-item differences' standard deviation (mean metrics)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _select(units: Sequence[Any] | np.ndarray, keep: np.ndarray) -> np.ndarray:
    array = np.asarray(units)
    return array[keep] if array.dtype.kind in "iu" else np.asarray(units, dtype=object)[keep]


@lru_cache(maxsize=4096)
def _t_critical(level: float, df: int) -> float:
    """``scipy.stats.t.ppf(0.5 + level / 2, df)``, from scipy.special (a second to import,
    where scipy.stats takes several)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2))


def binary_scale(a: np.ndarray, b: np.ndarray) -> float | None:
    """The value of a right item where both runs' items are right or wrong (0 and 1, or 0 and
    100 for a percentage); None otherwise."""
    for top in (1.0, 100.0):
        if np.all((a == 0.0) | (a == top)) and np.all((b == 0.0) | (b == top)):
            return top if np.any(a == top) or np.any(b == top) else 0.0
    return None


def _correlations(a: np.ndarray, b: np.ndarray) -> list[float | None]:
    """Pearson's r of each row's per-item scores (None where either is constant), all rows
    at once (``einsum``: a dot product per row through BLAS waited milliseconds each for
    its threads on a loaded machine)."""
    if a.shape[1] < 2:
        return [None] * a.shape[0]
    da, db = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
    products = np.einsum("ij,ij->i", da, db)
    norms = np.sqrt(np.einsum("ij,ij->i", da, da) * np.einsum("ij,ij->i", db, db))
    return [float(p / m) if m > 0 else None for p, m in zip(products, norms, strict=True)]


def _degenerate(mean: float) -> tuple[float, float, float, float]:
    """Every difference the same: no spread, so the interval is the point and p is 1 for a
    difference of 0 (a run against itself), 0 otherwise. (se, lower, upper, p)"""
    return 0.0, mean, mean, 1.0 if mean == 0.0 else 0.0


def _no_spread(sd: float, a: np.ndarray, b: np.ndarray) -> bool:
    """Every difference the same, up to floating point: a - b of items that differ by one
    constant (0.1 on each item) has a spread of rounding errors (~1e-17), which the t test
    would turn into p ~ 1e-300 and an interval of nothing."""
    scale = max(float(np.abs(a).max()), float(np.abs(b).max()))
    return not sd > _ROUNDING * scale


_ROUNDING = 1e-12  # a spread below this fraction of the values' size is rounding


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    units: Sequence[Any] | None = None,
    unit: str | None = None,
    level: float = LEVEL,
) -> Difference | None:
    """A mean metric of two runs on the same items, in the same order (an item undefined in
    either run, NaN, left out): `paired_differences` of one pair. None with fewer than two
    paired items."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    if int(keep.sum()) < 2:
        return None
    codes = None if units is None else unit_codes(_select(units, keep))
    return paired_differences(a[keep][None, :], b[keep][None, :], codes, unit, level)[0]


def paired_differences(
    a: np.ndarray,
    b: np.ndarray,
    units: np.ndarray | None = None,
    unit: str | None = None,
    level: float = LEVEL,
) -> list[Difference]:
    """Many pairs of runs on the same n items at once (rows of ``a`` and ``b``, no NaN; n >= 2):
    for each the per-item differences d = a - b. Without shared units:
    ``scipy.stats.ttest_rel(a, b, axis=1)`` (the difference, its t interval and p), and for
    right/wrong items the exact McNemar p-value instead of the t test's: statsmodels'
    ``mcnemar(exact=True)``, 2 * Binomial(b + c, 1/2).cdf(min(b, c)) on the b and c items only
    one run got right, computed for all rows at once. With shared units: the clustered
    standard error of each row's differences (`clustered_stderr`) and the t distribution
    with C - 1 degrees of freedom (McNemar assumes independent items: not used there)."""
    from scipy import stats

    count, n = a.shape
    d = a - b
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    shared = _shared(units, n)
    clusters = None
    if shared is not None:
        codes, clusters = shared
        sums = np.zeros((count, clusters))
        for row in range(count):  # a bincount per row: C sums of deviations
            sums[row] = np.bincount(codes, weights=d[row] - mean[row], minlength=clusters)
        se = np.sqrt(np.sum(sums**2, axis=1) * clusters / (clusters - 1)) / n
        df = clusters - 1
        crit = _t_critical(level, df)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = 2 * stats.t.sf(np.abs(mean / se), df)
        low, high = mean - crit * se, mean + crit * se
        mdd = _z_sum() * se
        methods = [CLUSTERED_METHOD] * count
    else:
        se = sd / math.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # rows of equal differences
            test = stats.ttest_rel(a, b, axis=1)
            low, high = (np.atleast_1d(v) for v in test.confidence_interval(level))
        p = np.atleast_1d(test.pvalue).astype(float)
        mdd = _effect_size(n) * sd
        methods = [T_METHOD] * count
        for row, value in _mcnemar_rows(a, b).items():
            p[row], methods[row] = value, f"{MCNEMAR_METHOD} (p); t interval"
    found = []
    correlations = _correlations(a, b)
    for row in range(count):
        lo, hi, pv, error = float(low[row]), float(high[row]), float(p[row]), float(se[row])
        if _no_spread(float(sd[row]), a[row], b[row]):
            error, lo, hi, pv = _degenerate(float(mean[row]))
        found.append(
            Difference(
                a=float(a[row].mean()),
                b=float(b[row].mean()),
                difference=float(mean[row]),
                stderr=error,
                lower=lo,
                upper=hi,
                p=min(1.0, pv),
                n=n,
                mdd=float(mdd[row]),
                method=methods[row],
                correlation=correlations[row],
                clusters=clusters,
                unit=unit if clusters else None,
                level=level,
                sd=float(sd[row]),
            )
        )
    return found


def _mcnemar_rows(a: np.ndarray, b: np.ndarray) -> dict[int, float]:
    """Row -> the exact McNemar p-value, for the rows whose items are right or wrong."""
    from scipy import stats

    found = {}
    for row in range(a.shape[0]):
        right = binary_scale(a[row], b[row])
        if right:
            ra, rb = a[row] == right, b[row] == right
            n1, n2 = int(np.sum(ra & ~rb)), int(np.sum(~ra & rb))
            found[row] = float(min(1.0, 2 * stats.binom.cdf(min(n1, n2), n1 + n2, 0.5)))
    return found


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


@lru_cache(maxsize=1)
def _z_sum() -> float:
    from scipy import stats

    return float(stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(POWER))


def mdd_normal(stderr: float) -> float:
    """Minimum detectable difference from a standard error (clustered, bootstrap):
    (z_{1-alpha/2} + z_{power}) x SE = 2.80 x SE for 5% and 80%."""
    return _z_sum() * stderr


@dataclass(frozen=True)
class ItemsNeeded:
    """How many items (and units) a paired comparison needs to find a true difference
    ``target`` with 80% power at 5% (two-sided), planned from a pilot comparison."""

    target: float
    items: int | None  # None: the pilot's differences have no spread to plan from
    method: str  # "paired t", "paired t, design effect", "normal, from the bootstrap SE"
    effect_size: float | None = None  # target / s_d (Cohen's d of the differences)
    design_effect: float | None = None  # clustered variance / independent variance
    units: int | None = None  # units (noun phrases, concept sets) at the pilot's items per unit
    unit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}


def solve_items(effect_size: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """The (fractional) n at which a two-sided paired t test of this effect size has this
    power: ``statsmodels.stats.power.TTestPower().solve_power``."""
    from statsmodels.stats.power import TTestPower

    with warnings.catch_warnings():  # a root it cannot bracket: checked below, not printed
        warnings.simplefilter("ignore")
        found = float(
            np.ravel(
                TTestPower().solve_power(
                    effect_size=effect_size, alpha=alpha, power=power, alternative="two-sided"
                )
            )[0]
        )
        if math.isfinite(found):
            return found
        # An effect so large that the solver's bracket starts above the root: two items
        # (the fewest a paired t test takes) have the power already, or the effect is 0.
        if TTestPower().power(effect_size=effect_size, nobs=2, alpha=alpha) >= power:
            return 2.0
    return math.nan  # not solved: `items_needed` plans nothing


def items_needed(pilot: Difference, target: float) -> ItemsNeeded:
    """The items a paired test needs to detect ``target`` (in the metric's units), from a
    pilot `Difference`: its differences' spread (which holds the runs' correlation:
    Var(a - b) = Var(a) + Var(b) - 2 Cov(a, b)). Clustered pilots inflate the independent
    n by the design effect (SE_clustered / SE_independent)^2 and give the units that many
    items take; a bootstrap pilot scales its n by (2.80 SE / target)^2."""
    target = abs(float(target))
    if pilot.sd is None:  # a corpus metric: the standard error shrinks as 1 / sqrt(n)
        if not pilot.stderr or not math.isfinite(pilot.stderr):
            return ItemsNeeded(target, None, BOOTSTRAP_METHOD)
        items = math.ceil(pilot.n * (_z_sum() * pilot.stderr / target) ** 2)
        return ItemsNeeded(target, max(items, 2), "normal, from the bootstrap SE")
    if pilot.sd == 0.0:
        return ItemsNeeded(target, None, "paired t")
    effect = target / pilot.sd
    independent = solve_items(effect)
    if not math.isfinite(independent):
        return ItemsNeeded(target, None, "paired t", effect)
    if not pilot.clusters:
        return ItemsNeeded(target, math.ceil(independent), "paired t", effect)
    design = (pilot.stderr * math.sqrt(pilot.n) / pilot.sd) ** 2
    items = math.ceil(independent * design)
    units = math.ceil(items * pilot.clusters / pilot.n)
    return ItemsNeeded(target, items, "paired t, design effect", effect, design, units, pilot.unit)


# --- many comparisons -----------------------------------------------------------------------
def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (statsmodels ``multipletests``), in the given order.
    statsmodels runs ``gc.collect()`` on every Holm call (0.14-0.15), ~0.5 s in a process
    holding a large heap: the heap is frozen around it (`heap_frozen`), so that collection
    walks only what the call made."""
    if not pvalues:
        return []
    from statsmodels.stats.multitest import multipletests

    with heap_frozen():
        adjusted = multipletests(list(pvalues), alpha=ALPHA, method="holm")[1]
    return [float(p) for p in adjusted]


# --- the bootstrap --------------------------------------------------------------------------
class Resampled(Protocol):
    """A corpus metric over n items (`conceptcomb.leaderboard.statistics.corpus`)."""

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
    """`resample_indices` counted a block of rows at a time (the generator gives the same
    draws in blocks as at once; a block's arrays stay in the processor's cache)."""
    rng = np.random.default_rng(seed)
    counts = np.empty((n_resamples, n))
    block = max(1, 2**16 // max(n, 1))
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        drawn = rng.integers(0, n, (rows, n)) + np.arange(rows)[:, None] * n
        counts[start : start + rows] = np.bincount(drawn.ravel(), minlength=rows * n).reshape(
            rows, n
        )
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


def bootstrap_distributions(
    metrics: Sequence[Resampled], n: int, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> list[np.ndarray]:
    """`bootstrap_distribution` of several metrics over the same n items, on the same
    resamples; what they share is computed once (`corpus.resampled_together`:
    the CIDEr-D of many runs of one task)."""
    from conceptcomb.leaderboard.statistics.corpus import resampled_together

    return resampled_together(metrics, resample_counts(n, n_resamples, seed))


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
