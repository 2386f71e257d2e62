"""CCPT as the package sees it: its tasks, data, rescoring and what the judge scores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from conceptcomb.common.contract import Benchmark, MetricInfo
from conceptcomb.common.errors import ConceptcombError

if TYPE_CHECKING:
    from conceptcomb.common.results import ScoreReport
    from conceptcomb.scorers.judge_settings import JudgeSettings


def tasks() -> dict[str, list[MetricInfo]]:
    from conceptcomb.ccpt.methods.oracle import oracle_metric_infos
    from conceptcomb.ccpt.metrics import metric_infos
    from conceptcomb.ccpt.tasks import all_specs, method_specs

    found = {spec.name: metric_infos(spec) for spec in all_specs()}
    for spec in method_specs():
        found[spec.name] = oracle_metric_infos(spec) if spec.oracle else metric_infos(spec)
    return found


def datasets() -> dict[str, Any]:
    from conceptcomb.ccpt.data import CCPT_DATASET

    return {CCPT_DATASET.key: CCPT_DATASET}


def rescore(
    task: str,
    predictions: Path,
    settings: JudgeSettings,
    samples_output: Path | None,
    options: dict[str, Any],
) -> ScoreReport:
    """``conceptcomb score``: judge saved replies (``options``: ``npc_modifier``)."""
    from conceptcomb.ccpt.methods.oracle_rescore import rescore_oracle
    from conceptcomb.ccpt.modifiers import resolve_npc_modifier
    from conceptcomb.ccpt.rescore import rescore as rescore_replies

    modifier = options.get("npc_modifier")
    if modifier and not task.startswith("ccpt_npc_"):
        raise ConceptcombError(
            f"--npc-modifier applies to the noun phrase completion tasks (ccpt_npc_*), "
            f"not {task}: drop it."
        )
    score = rescore_oracle if task.endswith("_oracle") else rescore_replies
    report = score(task, predictions, settings, samples_output, resolve_npc_modifier(modifier))
    if samples_output is not None:  # where `submit-bundle` finds the per-item evidence
        report.samples_output = str(samples_output)
    return report


def judged(task: str) -> bool:
    """Property-type prediction is scored against the gold type; the rest by the judge."""
    return not task.startswith("ccpt_tp")


# Title, paper, version, tasks and data: the card, eval.yaml beside this file.
BENCHMARK = Benchmark(key="ccpt")
