"""The McRae norms (ESSLLI 2008 property generation) as the package sees them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from conceptcomb.common.contract import Benchmark, MetricInfo
from conceptcomb.common.errors import ConfigError

if TYPE_CHECKING:
    from conceptcomb.common.results import ScoreReport


def tasks() -> dict[str, list[MetricInfo]]:
    from conceptcomb.mcrae.metrics import metric_infos
    from conceptcomb.mcrae.tasks import all_specs

    return {spec.name: metric_infos() for spec in all_specs()}


def datasets() -> dict[str, Any]:
    from conceptcomb.mcrae.data import ESSLLI_NOUNS_DATASET, MCRAE_DATASET

    # Same data folder (mcrae/) for both, from two upstream repositories.
    return {"mcrae": MCRAE_DATASET, "esslli08-nouns": ESSLLI_NOUNS_DATASET}


def rescore(
    task: str, predictions: Path, _settings: Any, samples_output: Path | None, _options: Any
) -> ScoreReport:
    """``conceptcomb score``: McRae has no judge; the judge options are not used."""
    from conceptcomb.mcrae.rescore import score_report

    if samples_output is not None:
        raise ConfigError(
            f"--samples-output: {task} writes no per-item records (its evidence is the "
            "predictions file itself): drop the option."
        )
    return score_report(task, predictions)


# Title, paper, version, tasks and data: the card, eval.yaml beside this file.
BENCHMARK = Benchmark(key="mcrae")
