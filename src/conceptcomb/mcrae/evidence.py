"""McRae items in a bundle: the reply, the properties parsed from it, the per-concept scores.

The offline check parses each stored reply again and aggregates the stored scores. Matching
the properties against the gold features needs the WordNet expansion of every feature
(tens of seconds), so it is what ``validate-bundle --rescore`` recomputes: the McRae
"judge" is that deterministic matcher.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from conceptcomb.common.evidence import ItemSet, RawItem, defined
from conceptcomb.mcrae.answers import parse_properties
from conceptcomb.mcrae.data import (
    ESSLLI_NOUNS_DATASET,
    MCRAE_DATASET,
    NORMS_FILE,
    NOUNS_FILE,
    load_esslli_nouns,
    load_norms,
)
from conceptcomb.mcrae.gold import ConceptGold
from conceptcomb.mcrae.metrics import concept_metrics, metric_infos
from conceptcomb.mcrae.scoring import load_golds
from conceptcomb.mcrae.tasks import ESSLLI44, spec_by_name


def _stem(task: str) -> str:
    name = NOUNS_FILE if spec_by_name(task).concepts == ESSLLI44 else NORMS_FILE
    return Path(name).stem


class McraeEvidence:
    def item_key(self, task: str, doc: dict[str, Any], data_dir: str | None = None) -> str | None:
        concept = str(doc.get("concept") or "")
        return f"{_stem(task)}:{concept}" if concept else None

    def evidence_item(self, task: str, raw: RawItem) -> dict[str, Any]:
        reply = raw.replies[0] if raw.replies else ""
        record = raw.record or {}
        properties = record.get("properties")
        if not isinstance(properties, list):  # lm-eval keeps only the metrics
            properties = parse_properties(reply)
        return {"reply": reply, "answer": properties, "scores": defined(raw.scores)}

    def test_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> ItemSet:
        if spec_by_name(task).concepts == ESSLLI44:
            concepts = load_esslli_nouns(data_dir)
        else:
            concepts = list(load_norms(data_dir))
        shas = {
            Path(NOUNS_FILE).stem: ESSLLI_NOUNS_DATASET.file(NOUNS_FILE).sha256,
            Path(NORMS_FILE).stem: MCRAE_DATASET.file(NORMS_FILE).sha256,
        }
        return ItemSet({f"{_stem(task)}:{c}": c for c in concepts}, shas)

    def check_item(self, task: str, item: str, evidence: dict[str, Any]) -> list[str]:
        reply = evidence.get("reply")
        if not isinstance(reply, str):
            return ["no reply stored"]
        parsed = parse_properties(reply)
        if parsed != evidence.get("answer"):
            return [
                f"the stored reply parses to {len(parsed)} properties {parsed[:5]}..., but the "
                f"bundle stores {evidence.get('answer')!r:.200}"
            ]
        scores = evidence.get("scores")
        names = {info.name for info in metric_infos()}
        if not isinstance(scores, dict) or set(scores) - names:
            return [f"the per-item scores must be numbers named {', '.join(sorted(names))}"]
        return []

    def aggregate(
        self, task: str, scores: list[dict[str, float]]
    ) -> dict[str, tuple[float, float | None]]:
        results = {}
        for info in metric_infos():
            values = [row[info.name] for row in scores if info.name in row]
            if values:
                results[info.name] = (sum(values) / len(values), _sem(values))
        return results

    def rescore_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> dict:
        golds = load_golds(
            spec_by_name(task), data_dir, options.get("tie_rule"), options.get("senses")
        )
        return {f"{_stem(task)}:{gold.concept}": gold for gold in golds}

    def questions(self, task: str, item: Any, evidence: dict[str, Any]) -> list:
        return []

    def rescored(
        self, task: str, item: ConceptGold, evidence: dict[str, Any], ratings: dict[str, Any]
    ) -> dict[str, float]:
        return defined(concept_metrics(item, list(evidence.get("answer") or [])))


def _sem(values: list[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)
