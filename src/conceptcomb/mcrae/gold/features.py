"""The gold standard: each concept's top 10 McRae features, with their expansion sets.

The ESSLLI 2008 task takes "the top 10 properties from the McRae norms (ranked by number
of subjects that produced them)". The norms have ties at the 10th place for 15 of the 44
concepts, and the task description does not say how they were broken. Two rules:

* ``norms_order`` (default): exactly 10 features (fewer where the norms list fewer), ties
  at the cut broken by the order of the rows in the norms file (alphabetical by feature
  name, as McRae et al. sorted it). Every concept keeps 10 gold features, as the task
  description implies ("for one concept, snail, the norms list 9").
* ``all_tied``: every feature whose production frequency equals the 10th one's is kept
  too, so some concepts get 11 to 13 gold features.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conceptcomb.common.errors import DataFormatError, one_of
from conceptcomb.mcrae.data import NormFeature
from conceptcomb.mcrae.gold.expansion_sets import (
    DEFAULT_SENSES,
    concept_words,
    expand_feature,
    feature_heads,
)

TOP_K = 10
TIE_RULES = ("norms_order", "all_tied")
DEFAULT_TIE_RULE = "norms_order"


@dataclass(frozen=True)
class GoldFeature:
    feature: str
    prod_freq: int
    heads: tuple[str, ...]
    expansion: frozenset[str]

    def as_doc(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "prod_freq": self.prod_freq,
            "heads": list(self.heads),
            "expansion": sorted(self.expansion),
        }

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> GoldFeature:
        return cls(
            feature=str(doc["feature"]),
            prod_freq=int(doc["prod_freq"]),
            heads=tuple(doc["heads"]),
            expansion=frozenset(doc["expansion"]),
        )


@dataclass(frozen=True)
class ConceptGold:
    """A concept's gold features, best first."""

    concept: str  # as the task names it (ESSLLI: onion)
    mcrae_concept: str  # as the norms name it (onions)
    features: tuple[GoldFeature, ...]
    tied_out: tuple[str, ...] = ()  # features tied with the 10th that the rule left out

    def as_doc(self) -> dict[str, Any]:
        return {
            "concept": self.concept,
            "mcrae_concept": self.mcrae_concept,
            "features": [feature.as_doc() for feature in self.features],
            "tied_out": list(self.tied_out),
        }

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any], origin: str = "document") -> ConceptGold:
        try:
            return cls(
                concept=str(doc["concept"]),
                mcrae_concept=str(doc["mcrae_concept"]),
                features=tuple(GoldFeature.from_doc(f) for f in doc["features"]),
                tied_out=tuple(doc.get("tied_out") or ()),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise DataFormatError(f"{origin}: not a McRae gold record ({err!r}).") from err


def check_tie_rule(tie_rule: str | None) -> str:
    return one_of("tie_rule", tie_rule or DEFAULT_TIE_RULE, TIE_RULES)


def select_top(
    features: Sequence[NormFeature], tie_rule: str = DEFAULT_TIE_RULE, k: int = TOP_K
) -> tuple[list[NormFeature], list[NormFeature]]:
    """(gold, tied_out): the top k by production frequency, norms order among equals."""
    ranked = sorted(features, key=lambda f: (-f.prod_freq, f.position))
    if len(ranked) <= k:
        return ranked, []
    cut = ranked[k - 1].prod_freq
    tied = [f for f in ranked[k:] if f.prod_freq == cut]
    if check_tie_rule(tie_rule) == "all_tied":
        return ranked[: k + len(tied)], []
    return ranked[:k], tied


def build_gold(
    concept: str,
    features: Sequence[NormFeature],
    tie_rule: str = DEFAULT_TIE_RULE,
    senses: str = DEFAULT_SENSES,
) -> ConceptGold:
    if not features:
        raise DataFormatError(f"concept {concept!r} has no features in the norms.")
    mcrae_concept = features[0].concept
    chosen, tied_out = select_top(features, tie_rule)
    name_forms = concept_words(mcrae_concept) | concept_words(concept)
    gold = []
    for norm in chosen:
        heads = feature_heads(norm.feature)
        # The concept's name never counts, unless it is this feature's own head (cake:
        # eg_-_birthday_cake).
        own = frozenset().union(*(concept_words(head) for head in heads))
        expansion = expand_feature(norm.feature, senses) - (name_forms - own)
        gold.append(GoldFeature(norm.feature, norm.prod_freq, heads, expansion))
    return ConceptGold(
        concept=concept,
        mcrae_concept=mcrae_concept,
        features=tuple(gold),
        tied_out=tuple(f.feature for f in tied_out),
    )
