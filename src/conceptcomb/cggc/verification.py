"""Relation verification (paper section 5.3, Appendix D) with an LLM judge.

The paper checks, with a Llama2 classifier trained on its verification split, whether a
generated sentence uses the relations of the item's reasoning graph, and repeats the
analysis on the items where every relation is used ("all composed relations accurately
applied": 44.7% of the items were removed). That classifier is not released. Here a judge
(any judge the CCPT relevance judge supports: an OpenAI-compatible endpoint, the offline
local model, an Inspect grader) is asked one yes/no question per edge of the pruned graph:
does the sentence express (head, relation, tail)? An item is *verified* when every answer
is yes; an empty sentence is not verified (it expresses nothing).

Reported: ``verified_share`` (percent of items verified, items with a failed question left
out and counted in ``verifier_failures``) and every CommonGen metric on the verified items
only (``<metric>_verified``), beside the usual metrics on all items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.metrics import METRICS
from conceptcomb.cggc.relations import TEMPLATES, verbalize
from conceptcomb.scorers.judge_base import JudgeReply, snapshot_of
from conceptcomb.scorers.judge_settings import JudgeSettings

if TYPE_CHECKING:  # the judges' modules import their HTTP client: not to list or check items
    from conceptcomb.scorers.rating import JudgeUsage
    from conceptcomb.scorers.verification import VerificationQuestion

VERIFIED_SHARE = "verified_share"
VERIFIER_FAILURES = "verifier_failures"
SUFFIX = "_verified"
NAN = float("nan")


def statement(head: str, relation: str, tail: str) -> str:
    """The triple in words (the builder's templates; a bare triple for other relations)."""
    return verbalize(head, relation, tail) if relation in TEMPLATES else f"{head} {relation} {tail}"


def edge_questions(item: CggcItem, prediction: str) -> list[VerificationQuestion]:
    """One question per distinct edge of the item's pruned graph; none for an empty reply."""
    from conceptcomb.scorers.verification import VerificationQuestion

    if not prediction.strip():
        return []
    edges = list(dict.fromkeys(item.kg_edges()))
    return [
        VerificationQuestion(prediction, e.head, e.relation, e.tail, statement(*_triple(e)))
        for e in edges
    ]


def _triple(edge: Any) -> tuple[str, str, str]:
    return edge.head, edge.relation, edge.tail


@dataclass
class Verification:
    """One item's verdicts: per edge yes / no / failed (with the judge's raw answer,
    ``reply``), and the item's."""

    item_id: str
    edges: list[dict[str, Any]] = field(default_factory=list)
    verified: bool | None = None  # None: judge off, or a question failed
    failed: bool = False
    snapshot: str | None = None  # the model the judge's answers named, where they named one

    def metrics(self) -> dict[str, float]:
        share = NAN if self.verified is None else 100.0 * float(self.verified)
        return {VERIFIED_SHARE: share, VERIFIER_FAILURES: float(self.failed)}

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        if not self.snapshot:
            del record["snapshot"]
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> Verification:
        return cls(
            str(record["item_id"]),
            list(record.get("edges") or []),
            record.get("verified"),
            bool(record.get("failed")),
            record.get("snapshot"),
        )


def verification_of(
    item: CggcItem,
    questions: Sequence[VerificationQuestion],
    replies: Mapping[str, JudgeReply] | None,
) -> Verification:
    """Combine the judge's replies (None: judge off) into the item's verdict."""
    from conceptcomb.scorers.verification import YES

    result = Verification(item.item_id)
    if replies is None:
        return result
    if not questions:  # an empty sentence
        result.verified = False
        return result
    verdicts = []
    for question in questions:
        reply = replies[question.prompt]
        verdict = None if not reply.ok else reply.rating == YES
        verdicts.append(verdict)
        result.edges.append(
            {
                "head": question.head,
                "relation": question.relation,
                "tail": question.tail,
                "verdict": verdict,
                "error": reply.error,
                "reply": reply.reply or None,  # the judge's raw answer (None: it wrote none)
            }
        )
    result.snapshot = snapshot_of(replies[question.prompt] for question in questions)
    result.failed = any(v is None for v in verdicts)
    result.verified = None if result.failed else all(verdicts)
    return result


def verify_predictions(
    settings: JudgeSettings, items: Sequence[CggcItem], predictions: Sequence[str]
) -> tuple[list[Verification], JudgeUsage | None]:
    """All questions of a task in one deduplicated, cached, concurrent batch."""
    from conceptcomb.scorers.verification import verify_prompts

    questions = [edge_questions(i, p) for i, p in zip(items, predictions, strict=True)]
    if not settings.enabled:
        return [verification_of(item, [], None) for item in items], None
    prompts = [q.prompt for group in questions for q in group]
    replies, usage = verify_prompts(settings, prompts) if prompts else ({}, None)
    return [verification_of(i, q, replies) for i, q in zip(items, questions, strict=True)], usage


def with_verified(values: Mapping[str, Any], verification: Verification) -> dict[str, Any]:
    """An item's metric values plus its verification counts and, when it is verified, the
    values again as ``<metric>_verified`` (undefined counts are left out)."""
    result = dict(values)
    result.update({k: v for k, v in verification.metrics().items() if not math.isnan(v)})
    if verification.verified:
        for info in METRICS:
            if info.name in values:
                result[info.name + SUFFIX] = values[info.name]
    return result
