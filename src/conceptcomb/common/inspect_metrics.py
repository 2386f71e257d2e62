"""Inspect metrics shared by benchmarks."""

from __future__ import annotations

import math

from inspect_ai.scorer import Metric, SampleScore, metric

from conceptcomb.common.results import sem


@metric
def totals(names: list[str]) -> Metric:
    """Each named per-item count's sum over the samples (failures and the like)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        sums = dict.fromkeys(names, 0.0)
        for score in scores:
            value = score.score.value
            if isinstance(value, dict):
                for name in names:
                    count = value.get(name)
                    if isinstance(count, int | float) and not math.isnan(count):
                        sums[name] += float(count)
        return sums

    return compute


@metric
def means(names: list[str]) -> Metric:
    """Each named per-item value's mean and standard error (``NAME_stderr``), in one pass.

    What ``{NAME: [mean(), stderr()]}`` gives, for a group of many names (ccpt_tp's 16
    confusion-matrix cells): Inspect computes such a dict by deep-copying every sample's
    score once per name, also about once a second while the task runs (its progress
    display), which made these cells cost more than the rest of the task's scoring.
    Undefined values (NaN, missing) are left out, as there; a name with none is NaN.
    """

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        columns: dict[str, list[float]] = {name: [] for name in names}
        for score in scores:
            value = score.score.value
            if not isinstance(value, dict):
                continue
            for name, column in columns.items():
                cell = value.get(name)
                if isinstance(cell, int | float) and not math.isnan(cell):
                    column.append(float(cell))
        results: dict[str, float] = {}
        for name, column in columns.items():
            error = sem(column)
            results[name] = sum(column) / len(column) if column else math.nan
            results[f"{name}_stderr"] = math.nan if error is None else error
        return results

    return compute
