"""Framework-agnostic core: a reply -> its ranked properties -> the concept's metrics.

lm-eval (``process_results``) and Inspect (the scorer) both call `score_reply`, one
concept at a time, and average over concepts (the docs they score come from
`conceptcomb.mcrae.docs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conceptcomb.mcrae.answers import parse_properties
from conceptcomb.mcrae.gold.features import ConceptGold
from conceptcomb.mcrae.metrics import concept_metrics


@dataclass(frozen=True)
class ScoredReply:
    properties: list[str]  # the reply's ranked properties, as parsed
    metrics: dict[str, float]  # the concept's P@k, R@k and number of properties


def score_reply(gold: ConceptGold, reply: str) -> ScoredReply:
    """A model's reply -> its ranked properties -> the concept's metrics."""
    properties = parse_properties(reply)
    return ScoredReply(properties, concept_metrics(gold, properties))


def gold_of_doc(doc: dict[str, Any], origin: str = "document") -> ConceptGold:
    return ConceptGold.from_doc(doc["gold"], origin=origin)
