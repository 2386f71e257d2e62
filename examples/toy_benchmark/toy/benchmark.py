"""The toy as the package sees it: listed in `conceptcomb.benchmarks.REGISTRY` by this module."""

from __future__ import annotations

from conceptcomb.common.contract import Benchmark, MetricInfo
from conceptcomb.toy.metrics import metric_infos
from conceptcomb.toy.tasks import all_specs


def tasks() -> dict[str, list[MetricInfo]]:
    """Every task name -> the metrics it reports (lm-eval and Inspect report these names)."""
    return {spec.name: metric_infos() for spec in all_specs()}


def datasets() -> dict:
    return {}  # pinned sources (`conceptcomb data fetch toy`): none, the words are in data.py


# No eval.yaml (card): the title and paper are given here.
BENCHMARK = Benchmark(key="toy", title="Toy: repeat a word", paper="nobody (2026)")
