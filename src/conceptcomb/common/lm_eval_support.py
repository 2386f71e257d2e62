"""Aggregations that lm-eval task YAML names by path (``!function ...``)."""

from __future__ import annotations

from collections.abc import Sequence


def total(values: Sequence[float]) -> float:
    """Aggregation for counts (format and judge failures): their sum."""
    return float(sum(values))
