"""Scoring CCPT replies made elsewhere (``conceptcomb score ccpt_... --predictions``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.docs import chat_messages
from conceptcomb.ccpt.metrics import aggregate, metric_infos
from conceptcomb.ccpt.modifiers import LEMMA, task_rule
from conceptcomb.ccpt.scoring import ItemScore, score_replies
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec, spec_by_name, task_version
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.evalcard import load_card
from conceptcomb.common.predictions import read_predictions
from conceptcomb.common.results import MetricValue, ScoreReport
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import preflight_judge

log = logging.getLogger("conceptcomb")


def rescore(
    task: str,
    predictions_path: Path,
    settings: JudgeSettings,
    samples_output: Path | None = None,
    npc_modifier: str = LEMMA,
) -> ScoreReport:
    """Parse, judge and aggregate exactly as the task does inside lm-eval or Inspect."""
    spec = spec_by_name(task)
    npc_modifier = task_rule(spec.kind, npc_modifier)
    predictions = read_predictions(predictions_path)
    if predictions.task and predictions.task != task:
        raise ConfigError(
            f"{predictions_path} holds replies of {predictions.task}, not {task}: "
            f"run `conceptcomb score {predictions.task} --predictions {predictions_path}`."
        )
    items = [CcptItem.from_doc(p.doc, origin=p.origin) for p in predictions.items]
    replies = [p.response for p in predictions.items]
    if spec.generative:
        preflight_judge(settings)  # before the first item: a judge that cannot work stops here
    scores, usage = score_replies(spec, items, replies, settings, npc_modifier)
    aggregates = aggregate(spec, [score.metrics for score in scores])
    infos = {info.name: info for info in metric_infos(spec)}
    metrics = {
        name: MetricValue(value.value, value.stderr, value.n, infos[name].higher_is_better)
        for name, value in aggregates.items()
    }
    if samples_output is not None:
        docs = [p.doc for p in predictions.items]
        _write_samples(samples_output, task, items, scores, replies, docs)
    notes = []
    if spec.generative and settings.judge == "local":
        notes.append(
            "local judge: the ratings of a small local model do not agree with human ones; "
            "run `conceptcomb judge calibrate` to see how far it is from human ratings."
        )
    return ScoreReport(
        task=task,
        version=task_version(),
        filter_name="judged" if spec.generative else "none",
        metrics=metrics,
        predictions=str(predictions_path),
        source_format=predictions.source_format,
        n_items=len(items),
        usage=usage.as_dict() if usage else None,
        notes=notes,
        options=scoring_options(spec, npc_modifier),
        n_total=card_samples(task),
    )


def card_samples(task: str) -> int | None:
    """The task's test-set size, the card's: no option of `conceptcomb score` changes it."""
    card = load_card(__package__ or "conceptcomb.ccpt")
    return card.tasks[task].dataset_samples if task in card.tasks else None


def scoring_options(spec: CcptTaskSpec, npc_modifier: str) -> dict[str, str]:
    """The options a CCPT score depends on beyond the task's name: which modifier noun
    phrase completion judges (the other tasks take none that `conceptcomb score` uses)."""
    return {"npc_modifier": npc_modifier} if spec.kind == NPC_EMERGENT else {}


def _write_samples(
    path: Path,
    task: str,
    items: list[CcptItem],
    scores: list[ItemScore],
    replies: list[str],
    docs: list[dict],
) -> None:
    """Per item: the core's record, the raw reply, the item and the chat the task would
    have sent it (from the doc the reply came with; leaderboard bundles read them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for item, score, reply, doc in zip(items, scores, replies, docs, strict=True):
            line = {**score.to_json(), "response": reply, "doc": item.as_doc()}
            line["messages"] = chat_messages(task, doc)
            handle.write(json.dumps(line) + "\n")
