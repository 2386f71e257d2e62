"""Matching a ranked list of properties against a concept's gold features, and P@k / R@k.

The ESSLLI 2008 scorer (lost; behaviour from the task description):

* walk down the model's ranked list; a property that matches a gold feature not matched
  before is a *hit*, one that matches nothing is a *miss*;
* "a model [may] match a property more than once (e.g. transport and transportation). In
  these cases, we count the top match, and we ignore the lower ones (i.e. lower matches are
  not treated as hits, but they do not contribute to the n-best count either)";
* precision at n = hits among the first n counted properties / n, per concept, averaged
  over concepts; n = 10, 20, 30.

Where the description is silent we chose:

* a property whose words name several gold features claims one of them: the best-ranked
  one not yet claimed (``legs`` for a dog claims ``has_4_legs``, a second ``legs`` claims
  ``has_legs``). It is a duplicate only when every feature it names is already claimed.
* a list shorter than n is not padded: the denominator stays n (a model must name n
  properties to reach P@n = 1).
* recall at n (not in the seed) = hits among the first n counted properties / number of
  gold features.

Two matching modes: *phrase* (default; models write phrases): a property names a feature
when any of its content words is in the feature's expansion set; *strict* (the 2008 scorer,
which expected single words): the whole property, lower-cased, must be in the set.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from conceptcomb.common.contract import PROPORTION, MetricInfo, Scale
from conceptcomb.mcrae.gold.expansion_sets import content_words, tokens
from conceptcomb.mcrae.gold.features import ConceptGold

CUTOFFS = (10, 20, 30)
MODES = ("phrase", "strict")
N_PROPERTIES = "n_properties"


def metric_name(kind: str, cutoff: int, mode: str) -> str:
    suffix = "" if mode == "phrase" else f"_{mode}"
    return f"{kind}@{cutoff}{suffix}"


def metric_infos() -> list[MetricInfo]:
    """Every metric a task reports, in display order: the seed's P@10/20/30 first."""
    infos = [
        MetricInfo(metric_name(kind, cutoff, mode), True, scale=PROPORTION)  # hits / n
        for mode in MODES
        for kind in ("P", "R")
        for cutoff in CUTOFFS
    ]
    return [*infos, MetricInfo(N_PROPERTIES, True, scale=Scale("properties", 0.0, None))]


def property_words(prop: str, mode: str) -> set[str]:
    """The words of a property that may name a feature."""
    if mode == "strict":
        # The whole property must be one word (surrounding punctuation aside).
        words = tokens(prop)
        alone = len(words) == 1 and re.fullmatch(rf"\W*{re.escape(words[0])}\W*", prop.lower())
        return {words[0]} if alone else set()
    return set(content_words(prop))


@dataclass
class Match:
    """The fate of one property of the ranked list."""

    prop: str
    features: list[int]  # indices of the gold features its words name
    claimed: int | None = None  # the feature it counts as a hit for
    duplicate: bool = False


@dataclass
class MatchResult:
    matches: list[Match] = field(default_factory=list)
    n_gold: int = 0

    @property
    def counted(self) -> list[Match]:
        """The n-best list: duplicates left out."""
        return [match for match in self.matches if not match.duplicate]

    def hits(self, cutoff: int) -> int:
        return sum(match.claimed is not None for match in self.counted[:cutoff])

    def precision(self, cutoff: int) -> float:
        return self.hits(cutoff) / cutoff

    def recall(self, cutoff: int) -> float:
        return self.hits(cutoff) / self.n_gold if self.n_gold else math.nan


def named_features(gold: ConceptGold, prop: str, mode: str) -> list[int]:
    """Indices of the gold features whose expansion sets hold a word of the property."""
    words = property_words(prop, mode)
    return [i for i, feature in enumerate(gold.features) if words & feature.expansion]


def claim(named: Iterable[tuple[str, Sequence[int]]], n_gold: int) -> MatchResult:
    """Walk the ranked list of (property, features it names), claiming gold features (see
    the module docstring): the online scorer and a bundle's offline check share this walk."""
    claimed: set[int] = set()
    result = MatchResult(n_gold=n_gold)
    for prop, features in named:
        match = Match(prop, list(features))
        free = [i for i in features if i not in claimed]
        if free:
            match.claimed = free[0]
            claimed.add(free[0])
        elif features:
            match.duplicate = True
        result.matches.append(match)
    return result


def match_properties(gold: ConceptGold, properties: Sequence[str], mode: str) -> MatchResult:
    named = ((prop, named_features(gold, prop, mode)) for prop in properties)
    return claim(named, len(gold.features))


def result_metrics(results: Mapping[str, MatchResult], n_properties: int) -> dict[str, float]:
    """Every metric of one concept from its match results, one per mode."""
    values: dict[str, float] = {}
    for mode in MODES:
        for cutoff in CUTOFFS:
            values[metric_name("P", cutoff, mode)] = results[mode].precision(cutoff)
            values[metric_name("R", cutoff, mode)] = results[mode].recall(cutoff)
    values[N_PROPERTIES] = float(n_properties)
    return values


def concept_metrics(gold: ConceptGold, properties: Sequence[str]) -> dict[str, float]:
    """Every metric of one concept, from its ranked properties."""
    results = {mode: match_properties(gold, properties, mode) for mode in MODES}
    return result_metrics(results, len(properties))


def mean_metrics(per_concept: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Average each metric over concepts (what lm-eval's and Inspect's ``mean`` compute)."""
    rows = list(per_concept)
    names = [info.name for info in metric_infos()]
    return {
        name: math.fsum(row[name] for row in rows) / len(rows) if rows else math.nan
        for name in names
    }
