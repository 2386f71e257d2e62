"""Inspect metrics shared by benchmarks."""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, metric


@metric
def total() -> Metric:
    """Sum of the values (counts of failures and the like)."""

    def compute(scores: list[SampleScore]) -> float:
        return float(sum(score.score.as_float() for score in scores))

    return compute
