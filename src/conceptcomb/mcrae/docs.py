"""McRae items -> docs: each concept of a task with its gold features and rendered prompt.

`build_docs` is the one items -> docs function: lm-eval's dataset hook uses its records as
docs and Inspect's samples keep them as metadata, so both frameworks send the same prompt
and score against the same gold (`conceptcomb.mcrae.scoring` turns a reply into metrics).
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from conceptcomb.common.errors import ConfigError, one_of
from conceptcomb.mcrae.data import (
    TERMS_OF_USE,
    NormFeature,
    load_esslli_nouns,
    load_norms,
    mcrae_name,
)
from conceptcomb.mcrae.gold.expansion_sets import DEFAULT_SENSES, SENSES
from conceptcomb.mcrae.gold.features import ConceptGold, build_gold, check_tie_rule
from conceptcomb.mcrae.prompts import user_prompt
from conceptcomb.mcrae.tasks import ESSLLI44, McraeTaskSpec

TERMS_LINE = f"[conceptcomb] Terms of use of the data: {TERMS_OF_USE}"


def check_senses(senses: str | None) -> str:
    return one_of("senses", senses or DEFAULT_SENSES, SENSES)


def load_golds(
    spec: McraeTaskSpec,
    data_dir: str | os.PathLike[str] | None = None,
    tie_rule: str | None = None,
    senses: str | None = None,
) -> list[ConceptGold]:
    """Every concept of the task with its gold features, in the data's order."""
    rule, sense_rule = check_tie_rule(tie_rule), check_senses(senses)
    norms = load_norms(data_dir)
    if spec.concepts == ESSLLI44:
        concepts = [(noun, mcrae_name(noun)) for noun in load_esslli_nouns(data_dir)]
        missing = [noun for noun, name in concepts if name not in norms]
        if missing:
            raise ConfigError(f"ESSLLI nouns missing from the McRae norms: {', '.join(missing)}")
    else:
        concepts = [(name, name) for name in norms]
    return [_gold(noun, tuple(norms[name]), rule, sense_rule) for noun, name in concepts]


# A concept's gold, built once per process: each McRae task of a run (lm-eval's, Inspect's,
# a bundle's evidence) builds the golds of its concepts, ~20 ms each with their expansion
# sets, and mcrae_all holds the ESSLLI ones. Keyed on the concept's norm rows themselves, so
# an edited norms file gives new golds. ConceptGold is frozen: safe to share.
@lru_cache(maxsize=4096)
def _gold(noun: str, features: tuple[NormFeature, ...], tie_rule: str, senses: str) -> ConceptGold:
    return build_gold(noun, features, tie_rule, senses)


def build_doc(spec: McraeTaskSpec, gold: ConceptGold, tie_rule: str, senses: str) -> dict:
    return {
        "task": spec.name,
        "concept": gold.concept,
        "mcrae_concept": gold.mcrae_concept,
        "prompt": user_prompt(gold.concept),
        "target": "\n".join(feature.feature for feature in gold.features),
        "tie_rule": tie_rule,
        "senses": senses,
        "gold": gold.as_doc(),
    }


def build_docs(
    spec: McraeTaskSpec,
    data_dir: str | os.PathLike[str] | None = None,
    tie_rule: str | None = None,
    senses: str | None = None,
) -> list[dict[str, Any]]:
    rule, sense_rule = check_tie_rule(tie_rule), check_senses(senses)
    golds = load_golds(spec, data_dir, rule, sense_rule)
    return [build_doc(spec, gold, rule, sense_rule) for gold in golds]


def chat_messages(
    task: str, doc: dict[str, Any], options: dict[str, Any] | None = None
) -> list[tuple[str, str]]:
    """The chat the task sends for a doc, as both frameworks send it: the prompt alone."""
    return [("user", str(doc["prompt"]))]
