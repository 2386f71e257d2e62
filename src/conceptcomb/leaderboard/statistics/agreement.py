"""How far two sets of ratings of the same questions agree: two judges (`conceptcomb judge
agree`), or a judge asked again against a bundle's stored ratings (``validate-bundle
--rejudge``). The libraries compute every figure:

* Spearman's rho and Kendall's tau-b: ``scipy.stats.spearmanr`` and ``kendalltau``;
* Krippendorff's alpha, ordinal (the two judges as two coders, each question a unit):
  the ``krippendorff`` package's ``alpha(level_of_measurement="ordinal")`` over the points
  of the rating scale: a rating read as an expected value (the local judge's 5.12) is
  rounded to its nearest point for alpha only (ordinal alpha counts categories; with one
  per distinct real value it costs seconds per call, and a bootstrap calls it a thousand
  times), the values both ratings take as its domain (the ordinal metric weighs the values
  between two ratings by how often they occur: a value no rating takes weighs nothing);
* their 95% intervals: ``scipy.stats.bootstrap`` of the questions as pairs (``paired=True``),
  percentile method, `N_RESAMPLES` resamples drawn by ``numpy.random.default_rng(SEED)``;
* the mean difference A - B with its t interval (`stats.paired_difference`), and the mean
  absolute difference with ``scipy.stats.ttest_1samp``'s t interval (`stats.mean_interval`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptcomb.leaderboard.statistics.stats import (
    LEVEL,
    N_RESAMPLES,
    SEED,
    Difference,
    Interval,
    mean_interval,
    paired_difference,
)


@dataclass(frozen=True)
class Estimate:
    """A statistic of the paired ratings and its percentile bootstrap interval."""

    value: float | None
    lower: float | None
    upper: float | None
    why: str | None = None  # why the value or its interval is missing (a reader asks)

    def to_json(self) -> dict[str, float | str | None]:
        found: dict[str, float | str | None] = {
            "value": self.value, "lower": self.lower, "upper": self.upper
        }  # fmt: skip
        if self.why:
            found["why"] = self.why
        return found

    def text(self, digits: int = 2) -> str:
        if self.value is None:
            return f"– ({self.why})" if self.why else "–"
        if self.lower is None or self.upper is None:
            return f"{self.value:.{digits}f}" + (f" (no interval: {self.why})" if self.why else "")
        return f"{self.value:.{digits}f} [{self.lower:.{digits}f}, {self.upper:.{digits}f}]"


@dataclass(frozen=True)
class Agreement:
    """Two ratings of the same n questions (A's, B's), compared."""

    n: int
    spearman: Estimate
    kendall: Estimate
    alpha: Estimate  # Krippendorff's, ordinal
    equal: float  # share of questions rated the same
    within_one: float  # share rated at most one point apart
    mean_difference: Difference | None  # A - B (A's mean rating less B's)
    mean_abs_difference: Interval | None  # |A - B|
    resamples: int = N_RESAMPLES
    level: float = LEVEL

    def to_json(self) -> dict[str, Any]:
        difference = self.mean_difference
        absolute = self.mean_abs_difference
        return {
            "n": self.n,
            "spearman": self.spearman.to_json(),
            "kendall": self.kendall.to_json(),
            "krippendorff_alpha_ordinal": self.alpha.to_json(),
            "share_equal": self.equal,
            "share_within_one": self.within_one,
            "mean_difference_a_minus_b": None if difference is None else difference.to_json(),
            "mean_abs_difference": None if absolute is None else absolute.to_json(),
            "bootstrap": {"resamples": self.resamples, "seed": SEED, "method": "percentile"},
            "level": self.level,
        }


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy import stats

    return float(stats.spearmanr(a, b).statistic)


def kendall(a: np.ndarray, b: np.ndarray) -> float:
    from scipy import stats

    return float(stats.kendalltau(a, b).statistic)


def ordinal_alpha(a: np.ndarray, b: np.ndarray, domain: np.ndarray | None = None) -> float:
    """Krippendorff's alpha, ordinal, of two coders (rows) over the questions (columns)."""
    import krippendorff

    values = np.unique(np.concatenate([a, b])) if domain is None else domain
    if len(values) < 2:
        return float("nan")  # one value in all ratings: alpha is undefined
    return float(
        krippendorff.alpha(
            reliability_data=np.vstack([a, b]),
            value_domain=values,
            level_of_measurement="ordinal",
        )
    )


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


def bootstrap_estimate(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    a: np.ndarray,
    b: np.ndarray,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Estimate:
    """``statistic(a, b)`` and the percentile interval of ``scipy.stats.bootstrap`` resampling
    the questions as pairs (a resample where the statistic is undefined, NaN, is left out)."""
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant resamples: scipy warns, the value is NaN
        value = statistic(a, b)
        if not np.isfinite(value):
            return Estimate(None, None, None, undefined_why(a, b))
        if len(a) < MIN_RESAMPLED:
            return Estimate(value, None, None, f"{len(a)} questions, fewer than {MIN_RESAMPLED}")
        result = stats.bootstrap(
            (a, b),
            statistic,
            paired=True,
            vectorized=False,
            n_resamples=n_resamples,
            confidence_level=level,
            method="percentile",
            random_state=np.random.default_rng(seed),
        )
    low, high = result.confidence_interval
    lower, upper = _finite(float(low)), _finite(float(high))
    if lower is None or upper is None:  # most resamples undefined (nearly constant ratings)
        why = f"undefined on most resamples of {len(a)} questions (too few, or too alike)"
        return Estimate(value, None, None, why)
    return Estimate(value, lower, upper)


# Below this many questions no bootstrap interval is drawn: resamples of two questions are
# mostly constant, their statistics undefined.
MIN_RESAMPLED = 3


def undefined_why(a: np.ndarray, b: np.ndarray) -> str:
    """Why a statistic of two ratings is undefined: too few questions, or no variation."""
    if len(a) < 2:
        return f"undefined: {len(a)} question{'' if len(a) == 1 else 's'} rated by both"
    constant = [name for name, x in (("A", a), ("B", b)) if len(np.unique(x)) < 2]
    if len(constant) == 2 and np.unique(np.concatenate([a, b])).size < 2:
        return f"undefined: every rating is {a[0]:g}, no variation"
    if constant:
        return f"undefined: {' and '.join(constant)} gave one rating to every question"
    return "undefined on these ratings"


def agreement(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Agreement:
    """A's and B's ratings of the same questions, in the same order (no missing rating)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    domain = np.unique(np.rint(np.concatenate([x, y])))

    def alpha(p: np.ndarray, q: np.ndarray) -> float:
        return ordinal_alpha(np.rint(p), np.rint(q), domain)

    gaps = np.abs(y - x)
    return Agreement(
        n=len(x),
        spearman=bootstrap_estimate(spearman, x, y, n_resamples, seed),
        kendall=bootstrap_estimate(kendall, x, y, n_resamples, seed),
        alpha=bootstrap_estimate(alpha, x, y, n_resamples, seed),
        equal=float(np.mean(gaps == 0.0)) if len(x) else 0.0,
        within_one=float(np.mean(gaps <= 1.0)) if len(x) else 0.0,
        mean_difference=paired_difference(x, y),
        mean_abs_difference=mean_interval(gaps),
        resamples=n_resamples,
    )
