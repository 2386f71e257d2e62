"""McRae items in a bundle: the reply, its parsed properties, their matches, the scores.

An item's evidence: ``reply``, ``answer`` (the ranked properties parsed from it),
``matches`` (per matching mode, ``phrase`` and ``strict``, one list per property: the gold
features its words name, by feature name, as the run's matcher found them) and ``scores``.

Offline, each stored reply is parsed again; the stored matches must name gold features of
the concept in the pinned norms (top 10 under the run's ``tie_rule``), and replaying the
scorer's walk over them (`conceptcomb.mcrae.metrics.claim`) must give the stored scores.
Whether a property's words really name a feature needs the WordNet expansion of every
feature (tens of seconds): that is what ``validate-bundle --rescore`` recomputes, the McRae
"judge" being that deterministic matcher.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.evidence import ItemSet, ItemView, RawItem, close, defined
from conceptcomb.common.results import sem
from conceptcomb.mcrae.answers import parse_properties
from conceptcomb.mcrae.data import (
    ESSLLI_NOUNS_DATASET,
    MCRAE_DATASET,
    NORMS_FILE,
    NOUNS_FILE,
    load_esslli_nouns,
    load_norms,
    mcrae_name,
)
from conceptcomb.mcrae.docs import load_golds
from conceptcomb.mcrae.gold.features import ConceptGold, check_tie_rule, select_top
from conceptcomb.mcrae.metrics import (
    MODES,
    claim,
    concept_metrics,
    metric_infos,
    named_features,
    result_metrics,
)
from conceptcomb.mcrae.scoring import gold_of_doc
from conceptcomb.mcrae.tasks import ESSLLI44, spec_by_name


@dataclass(frozen=True)
class PinnedGold:
    """A concept's gold features in the pinned norms, best first (no expansion sets)."""

    concept: str
    features: tuple[str, ...]


def _stem(task: str) -> str:
    name = NOUNS_FILE if spec_by_name(task).concepts == ESSLLI44 else NORMS_FILE
    return Path(name).stem


def _matches(doc: dict[str, Any], properties: list[str]) -> dict[str, list[list[str]]] | None:
    """What the run's matcher found, from the gold the run scored with (its doc carries it)."""
    if not isinstance(doc.get("gold"), dict):
        return None
    gold = gold_of_doc(doc)
    names = [feature.feature for feature in gold.features]
    return {
        mode: [[names[i] for i in named_features(gold, prop, mode)] for prop in properties]
        for mode in MODES
    }


def _pinned(task: str, options: dict[str, Any], data_dir: str | None) -> list[PinnedGold]:
    rule = check_tie_rule(options.get("tie_rule"))
    norms = load_norms(data_dir)
    if spec_by_name(task).concepts == ESSLLI44:
        pairs = [(noun, mcrae_name(noun)) for noun in load_esslli_nouns(data_dir)]
    else:
        pairs = [(name, name) for name in norms]
    return [
        PinnedGold(noun, tuple(f.feature for f in select_top(norms.get(name, []), rule)[0]))
        for noun, name in pairs
    ]


def _replayed(item: PinnedGold, evidence: dict[str, Any]) -> tuple[list[str], dict | None]:
    """Problems of the stored matches, and the metrics their walk gives."""
    answer, matches = evidence.get("answer") or [], evidence.get("matches")
    if not isinstance(matches, dict) or set(matches) != set(MODES):
        return [f"no matches stored for each mode ({', '.join(MODES)})"], None
    index: dict[str, list[int]] = {}  # a name the norms list twice names both features
    for i, name in enumerate(item.features):
        index.setdefault(name, []).append(i)
    results = {}
    for mode in MODES:
        rows = matches[mode]
        if not isinstance(rows, list) or len(rows) != len(answer):
            return [f"{mode} matches: one list per parsed property expected"], None
        named = []
        for prop, row in zip(answer, rows, strict=True):
            foreign = [f for f in row if f not in index] if isinstance(row, list) else [row]
            if foreign:
                return [
                    f"{mode} match of {prop!r}: {foreign!r:.120} is not a gold feature of "
                    f"{item.concept} in the pinned norms"
                ], None
            named.append((prop, sorted({i for f in row for i in index[f]})))
        results[mode] = claim(named, len(item.features))
    return [], result_metrics(results, len(answer))


class McraeEvidence:
    # One item per concept: the concept is the unit, and no two items share one (the
    # standard errors are the items' own; said so in the README).
    UNIT = "concept"

    def unit(self, task: str, doc: Any) -> str | None:
        found = doc.get("concept") if isinstance(doc, dict) else getattr(doc, "concept", None)
        return str(found) if found else None

    def explorer_fields(self, task: str, item: PinnedGold) -> dict[str, str]:
        """What the item explorer filters McRae's items by: the concept."""
        return {"concept": item.concept}

    def explorer_references(self, task: str, item: PinnedGold) -> list[str]:
        """The concept's gold features in the pinned norms, best first."""
        return list(item.features)

    def item_key(self, task: str, doc: dict[str, Any], data_dir: str | None = None) -> str | None:
        concept = str(doc.get("concept") or "")
        return f"{_stem(task)}:{concept}" if concept else None

    def evidence_item(self, task: str, raw: RawItem) -> dict[str, Any]:
        reply = raw.replies[0] if raw.replies else ""
        record = raw.record or {}
        properties = record.get("properties")
        if not isinstance(properties, list):  # lm-eval keeps only the metrics
            properties = parse_properties(reply)
        evidence: dict[str, Any] = {"reply": reply, "answer": properties}
        try:
            matches = _matches(raw.doc, properties)
        except DataFormatError:  # a doc whose gold is not ours: the check says so
            matches = None
        if matches is not None:
            evidence["matches"] = matches
        return {**evidence, "scores": defined(raw.scores)}

    def item_view(self, task: str, evidence: dict[str, Any]) -> ItemView:
        """The ranked properties as JSON; no reference: the gold features are the norms,
        which conceptcomb does not redistribute (``matches`` names those the run matched)."""
        answer = evidence.get("answer")
        method = "conceptcomb.mcrae.answers.parse_properties: one property per line or item"
        return ItemView([json.dumps(answer if isinstance(answer, list) else [])], method, [])

    def test_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> ItemSet:
        shas = {
            Path(NOUNS_FILE).stem: ESSLLI_NOUNS_DATASET.file(NOUNS_FILE).sha256,
            Path(NORMS_FILE).stem: MCRAE_DATASET.file(NORMS_FILE).sha256,
        }
        golds = _pinned(task, options, data_dir)
        return ItemSet({f"{_stem(task)}:{gold.concept}": gold for gold in golds}, shas)

    def check_item(self, task: str, item: PinnedGold, evidence: dict[str, Any]) -> list[str]:
        reply = evidence.get("reply")
        if not isinstance(reply, str):
            return ["no reply stored"]
        parsed = parse_properties(reply)
        if parsed != evidence.get("answer"):
            return [
                f"the stored reply parses to {len(parsed)} properties {parsed[:5]}..., but the "
                f"bundle stores {evidence.get('answer')!r:.200}"
            ]
        problems, computed = _replayed(item, evidence)
        if problems:
            return problems
        return _check_scores(evidence.get("scores"), defined(computed))

    def aggregate(
        self, task: str, scores: list[dict[str, float]]
    ) -> dict[str, tuple[float, float | None]]:
        results = {}
        for info in metric_infos():
            values = [row[info.name] for row in scores if info.name in row]
            if values:
                results[info.name] = (sum(values) / len(values), sem(values))
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


def _check_scores(stored: Any, computed: dict[str, float]) -> list[str]:
    if not isinstance(stored, dict):
        return ["no per-item scores stored"]
    names = computed.keys() | stored.keys()
    differ = sorted(n for n in names if not close(computed.get(n), _number(stored.get(n))))
    if not differ:
        return []
    shown = ", ".join(
        f"{n}: stored {stored.get(n)}, matches give {computed.get(n)}" for n in differ
    )
    return [f"the per-item scores stored are not those its matches give ({shown:.300})"]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# What the contract reads (`conceptcomb.common.contract.Benchmark.evidence`): the class
# whose instance checks this benchmark's items in bundles.
EVIDENCE = McraeEvidence
