"""AbsPyramid (abstraction detection and generation) as the package sees it."""

from __future__ import annotations

from typing import Any

from conceptcomb.common.contract import Benchmark, MetricInfo


def tasks() -> dict[str, list[MetricInfo]]:
    from conceptcomb.abspyramid.metrics import metric_infos
    from conceptcomb.abspyramid.tasks import all_specs

    return {spec.name: metric_infos(spec) for spec in all_specs()}


def datasets() -> dict[str, Any]:
    from conceptcomb.abspyramid.data import ABSPYRAMID_DATASET

    # Published on the Hugging Face hub only: the revision is pinned, no sha256 to check.
    return {ABSPYRAMID_DATASET.key: ABSPYRAMID_DATASET}


# Title, paper, version, tasks and data: the card, eval.yaml beside this file.
BENCHMARK = Benchmark(key="abspyramid")
