"""Scoring CCPT replies: parse, ask the judge, compute the per-item metrics.

Framework-agnostic. lm-eval's filter and the ``conceptcomb score`` command call
`score_replies` on a whole task at once (all judge questions go out together, deduplicated
and cached); Inspect's scorer calls `score_reply` per sample with a shared session. Both
end in `finish_item`, so the two frameworks give the same numbers for the same replies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conceptcomb.ccpt.answers import ParsedAnswer, completion_texts, parse_answer
from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.metrics import (
    FORMAT_FAILURES,
    NON_DICT_ANSWERS,
    format_failure_metrics,
    judge_failure_metrics,
    relevance_metrics,
    type_prediction_metrics,
    unjudged_metrics,
)
from conceptcomb.ccpt.modifiers import LEMMA, prefetch
from conceptcomb.ccpt.tasks import NPC_EMERGENT, TYPE_PREDICTION, CcptTaskSpec
from conceptcomb.scorers.judge_base import JudgeReply, snapshot_of
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import JudgeUsage, RatingSession, rate_prompts
from conceptcomb.scorers.relevance import RelevanceQuestion, rating_to_relevance

# Roles of the three judge questions: noun phrase, head noun, modifier (each with P).
ROLES = ("noun_phrase", "head", "modifier")


@dataclass
class ItemScore:
    """Everything we know about one scored reply; `metrics` may hold NaN (undefined)."""

    item_id: str
    answer: ParsedAnswer | None
    metrics: dict[str, float]
    questions: dict[str, RelevanceQuestion] = field(default_factory=dict)
    ratings: dict[str, float | None] = field(default_factory=dict)
    # The judge's raw answer per role (`JudgeReply.reply`; a cached rating's cached answer),
    # None where it wrote none (a failed request, the judge off).
    answers: dict[str, str | None] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    judge: str | None = None  # the judge's identity, when one rated this reply
    judge_snapshot: str | None = None  # the model its answers named, where they named one

    def defined_metrics(self) -> dict[str, float]:
        return {k: v for k, v in self.metrics.items() if not math.isnan(v)}

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe record (NaN -> null) for logs and samples.

        Each judged question holds its ``rating`` and the judge's raw answer (``reply``).
        Noun phrase completion adds ``modifier``: the modifier as read from the reply and as
        judged, the rule (``npc_modifier``) and where the judged one came from.
        """
        record: dict[str, Any] = {
            "item_id": self.item_id,
            "answer": self.answer.fields if self.answer else None,
            "answer_in_dict_format": self.answer.in_dict if self.answer else None,
            "judged": {
                role: {
                    "concept": q.concept,
                    "property": q.prop,
                    "rating": self.ratings.get(role),
                    "reply": self.answers.get(role),
                }
                for role, q in self.questions.items()
            },
            "metrics": {k: (None if math.isnan(v) else v) for k, v in self.metrics.items()},
            "errors": self.errors,
            "judge": self.judge,
        }
        if self.judge_snapshot:
            record["judge_snapshot"] = self.judge_snapshot
        if self.answer is not None and self.answer.modifier is not None:
            record["modifier"] = self.answer.modifier.to_json()
        return record


def judge_questions(
    spec: CcptTaskSpec, item: CcptItem, answer: Mapping[str, str]
) -> dict[str, RelevanceQuestion]:
    """The three (concept, property) pairs the judge rates for one parsed answer.

    Property induction: the item's noun phrase, head and modifier with the generated
    property. Noun-phrase completion: the generated noun phrase and modifier and the given
    head, with the given property.
    """
    if spec.kind == NPC_EMERGENT:
        concepts = (answer["combination"], item.root, answer["modifier"])
        prop = item.property
    else:
        concepts = (item.combination, item.root, item.modifier)
        prop = answer["property"]
    return {role: RelevanceQuestion(c, prop) for role, c in zip(ROLES, concepts, strict=True)}


def _with_format_count(answer: ParsedAnswer | None, metrics: dict[str, float]) -> dict:
    metrics[NON_DICT_ANSWERS] = float(answer is not None and not answer.in_dict)
    return metrics


def plan_item(
    spec: CcptTaskSpec, item: CcptItem, reply: str, npc_modifier: str = LEMMA
) -> ItemScore:
    """Parse a reply; for generative tasks attach the judge questions still to be answered.

    ``npc_modifier`` (lemma or surface) picks the modifier judged for noun phrase completion.
    """
    answer = parse_answer(spec.kind, reply, head=item.root, npc_modifier=npc_modifier)
    if spec.kind == TYPE_PREDICTION:
        predicted = answer.fields["property_type"] if answer else None
        metrics = type_prediction_metrics(item.label, predicted)
        return ItemScore(item.item_id, answer, _with_format_count(answer, metrics))
    if answer is None:
        return ItemScore(item.item_id, None, _with_format_count(None, format_failure_metrics(spec)))
    questions = judge_questions(spec, item, answer.fields)
    metrics = _with_format_count(answer, unjudged_metrics(spec))
    return ItemScore(item.item_id, answer, metrics, questions)


def finish_item(
    spec: CcptTaskSpec, planned: ItemScore, replies: Mapping[str, JudgeReply]
) -> ItemScore:
    """Fill in ratings and metrics from the judge's replies (keyed by prompt)."""
    if not planned.questions:
        return planned
    for role, question in planned.questions.items():
        reply = replies[question.prompt]
        planned.ratings[role] = reply.rating
        planned.answers[role] = reply.reply or None
        if not reply.ok:
            planned.errors.append(f"{role}: {reply.error}")
    planned.judge_snapshot = snapshot_of(replies[q.prompt] for q in planned.questions.values())
    if planned.errors:
        planned.metrics = _with_format_count(planned.answer, judge_failure_metrics(spec))
        return planned
    relevances = [rating_to_relevance(planned.ratings[role]) for role in ROLES]  # type: ignore[arg-type]
    planned.metrics = _with_format_count(planned.answer, relevance_metrics(spec, *relevances))
    return planned


def without_judge(spec: CcptTaskSpec, planned: ItemScore) -> ItemScore:
    """Judge off (prediction only): only the format-failure count is defined."""
    if spec.kind == TYPE_PREDICTION:
        return planned
    metrics = _with_format_count(planned.answer, unjudged_metrics(spec))
    metrics[FORMAT_FAILURES] = float(planned.answer is None)
    planned.metrics = metrics
    return planned


def score_replies(
    spec: CcptTaskSpec,
    items: Sequence[CcptItem],
    replies: Sequence[str],
    settings: JudgeSettings,
    npc_modifier: str = LEMMA,
) -> tuple[list[ItemScore], JudgeUsage | None]:
    """Score a whole task at once: one batch of deduplicated, cached judge questions."""
    if spec.kind == NPC_EMERGENT and npc_modifier == LEMMA:
        # the rule's analyses in one batch (`modifiers.prefetch`), not one reply at a time
        pairs = zip(replies, [item.root for item in items], strict=True)
        prefetch(text for reply, head in pairs for text in completion_texts(reply, head))
    planned = [
        plan_item(spec, item, reply, npc_modifier)
        for item, reply in zip(items, replies, strict=True)
    ]
    if not settings.enabled:
        return [without_judge(spec, score) for score in planned], None
    prompts = [q.prompt for score in planned for q in score.questions.values()]
    if not prompts:
        return planned, None
    answers, usage, identity = rate_prompts(settings, prompts, description=f"judging {spec.name}")
    for score in planned:
        if score.questions:
            score.judge = identity
    return [finish_item(spec, score, answers) for score in planned], usage


async def score_reply(
    spec: CcptTaskSpec,
    item: CcptItem,
    reply: str,
    session: RatingSession | None,
    npc_modifier: str = LEMMA,
) -> ItemScore:
    """Score one reply with a running session (Inspect's per-sample scorer)."""
    planned = plan_item(spec, item, reply, npc_modifier)
    if session is None:
        return without_judge(spec, planned)
    if not planned.questions:
        return planned
    prompts = [q.prompt for q in planned.questions.values()]
    answers = await session.rate_all(prompts)
    planned.judge = session.judge.identity
    return finish_item(spec, planned, answers)
