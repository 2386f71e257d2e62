"""Inspect metrics shared by benchmarks: counts and grouped means read from each score's
metadata (`GROUPED_METRICS`), not from its value.

Inspect walks a score's value dict key by key, for every sample, each time it computes the
metrics: its epoch reducer (even for one epoch) and each per-key metric's copy of every
score; and it computes them about once a second while a task runs, to show them. Counts
and groups of many means (ccpt_tp's 16 confusion-matrix cells) would cost more there than
the rest of the task's scoring, so the scorers keep them beside the item's record
(`conceptcomb.frameworks.inspect_tasks.ItemMetrics`), and these metrics read them from
every epoch's score, reducing each sample's epochs as Inspect's mean reducer would.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from inspect_ai.scorer import Metric, SampleScore, metric

from conceptcomb.common.evidence import GROUPED_METRICS
from conceptcomb.common.results import sem


def _per_sample(scores: Iterable[SampleScore], names: list[str]) -> dict[str, list[float]]:
    """Per name, each sample's mean over its epochs of that value (undefined ones left out,
    as Inspect's mean reducer does; a sample with none is left out), in one pass."""
    samples: dict[object, dict[str, list[float]]] = {}
    for score in scores:
        grouped = (score.score.metadata or {}).get(GROUPED_METRICS)
        epochs = samples.setdefault(id(score) if score.sample_id is None else score.sample_id, {})
        for name in names:
            value = grouped.get(name) if isinstance(grouped, dict) else None
            if isinstance(value, int | float) and not math.isnan(value):
                epochs.setdefault(name, []).append(float(value))
    columns: dict[str, list[float]] = {name: [] for name in names}
    for epochs in samples.values():
        for name, values in epochs.items():
            columns[name].append(sum(values) / len(values))
    return columns


@metric(scores="unreduced")
def totals(names: list[str]) -> Metric:
    """Each named per-item count's sum over the samples (failures and the like)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {name: float(sum(column)) for name, column in _per_sample(scores, names).items()}

    return compute


@metric(scores="unreduced")
def means(names: list[str]) -> Metric:
    """Each named per-item value's mean and standard error (``NAME_stderr``), in one pass:
    what ``{NAME: [mean(), stderr()]}`` gives, for a group of many names. Undefined values
    (NaN, missing) are left out, as there; a name with none is NaN."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        results: dict[str, float] = {}
        for name, column in _per_sample(scores, names).items():
            error = sem(column)
            results[name] = sum(column) / len(column) if column else math.nan
            results[f"{name}_stderr"] = math.nan if error is None else error
        return results

    return compute
