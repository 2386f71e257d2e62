"""The metrics every toy task reports."""

from __future__ import annotations

from conceptcomb.common.contract import PROPORTION, MetricInfo


def metric_infos() -> list[MetricInfo]:
    return [MetricInfo("exact_match", True, "mean", "EM", scale=PROPORTION)]
