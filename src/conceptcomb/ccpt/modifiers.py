"""Which modifier the judge rates in noun phrase completion (option ``npc_modifier``).

``lemma`` (default, the paper's protocol): the rule of the authors'
``experiment/eval/eval_combination.py``. spaCy's ``en_core_web_sm`` reads the modifier the
reply names; the judge rates the lemma of its first token whose part of speech is ADJ, ADV,
NOUN, VERB or PROPN ("floating" -> "float", "winged" -> "wing"). When there is no such
token, or its lemma is the head noun, the modifier is read off the noun phrase instead as
their ``np_to_dict`` does: its content words other than the head, as written.

``surface``: the modifier as the reply writes it (lower-cased); read off the noun phrase
(words other than the head and function words) when the reply names none or names the head.

The authors ran a spaCy before 3.8, whose rule lemmatizer prefers the candidate of the
first matching rule ("staged" -> "stage"); spaCy 3.8 prefers the last one found in its word
list ("stag"). We apply the earlier order to the model's own tables, so that the lemma is
the one their ratings were recorded for with any spaCy 3.7 or 3.8.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from conceptcomb.ccpt.npc_lemma.analysis import Analysis, Text, missing_spacy
from conceptcomb.ccpt.npc_lemma.helper_process import HELPER
from conceptcomb.ccpt.tasks import NPC_EMERGENT
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.spacy_english import not_installed

LEMMA = "lemma"
SURFACE = "surface"
NPC_MODIFIER_RULES = (LEMMA, SURFACE)
OPTION = "npc_modifier"
ENV_VAR = "CONCEPTCOMB_NPC_MODIFIER"
# Parts of speech the authors count as concepts (their `available_concept_pos`).
CONCEPT_POS = frozenset({"ADJ", "ADV", "NOUN", "VERB", "PROPN"})
_PARENTHESES = re.compile(r"\([^)]*\)")


@dataclass(frozen=True)
class JudgedModifier:
    """The modifier a completion names and the one the judge rates."""

    read: str  # as the reply gives it, lower-cased ("" when it names none)
    judged: str  # the string sent to the judge
    rule: str  # lemma or surface
    source: str  # "reply" or "noun_phrase" (read off the noun phrase)

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def resolve_npc_modifier(value: object = None) -> str:
    """The rule from the option, else ``$CONCEPTCOMB_NPC_MODIFIER``, else ``lemma``."""
    raw = value if value not in (None, "") else os.environ.get(ENV_VAR) or LEMMA
    rule = str(raw).strip().lower()
    if rule not in NPC_MODIFIER_RULES:
        raise ConfigError(
            f"npc_modifier={raw!r} is not a rule we know: use lemma (the paper's, default) or "
            f"surface (option npc_modifier or {ENV_VAR})."
        )
    return rule


def require_rule(rule: str) -> None:
    """Fail before any generation when the lemma rule cannot run (spaCy or its model absent);
    else start loading spaCy in the helper process, while the framework goes on."""
    if rule != LEMMA:
        return
    missing = not_installed()
    if missing is not None:
        raise ConfigError(f"{missing_spacy()} ({missing}).")
    HELPER.start()


def task_rule(kind: str, value: object = None) -> str:
    """The checked rule a task of this kind scores with; only noun phrase completion needs
    spaCy (every task accepts the option, so that one set of options serves a whole run)."""
    rule = resolve_npc_modifier(value)
    if kind == NPC_EMERGENT:
        require_rule(rule)
    return rule


_ANALYSES: dict[Text, Analysis] = {}
_CACHED = 65536


def analyse(text: str, keep_hyphenated: bool = False) -> Analysis:
    """spaCy's tokens, parts of speech and (spaCy 3.7) lemmas of ``text``, from the helper
    process (`conceptcomb.ccpt.npc_lemma.helper_process`); `prefetch` analyses many at once."""
    key = (text, keep_hyphenated)
    found = _ANALYSES.get(key)
    if found is None:
        (found,) = _remember([key], HELPER.analyse([key]))
    return found


def prefetch(texts: Iterable[Text]) -> None:
    """Analyse these texts in one batch (spaCy's ``pipe``: about 5x faster than one by one,
    the same analyses), for the `analyse` calls that follow."""
    missing = list(dict.fromkeys(key for key in texts if key not in _ANALYSES))
    if missing:
        _remember(missing, HELPER.analyse(missing))


def _remember(keys: list[Text], analyses: list[Analysis]) -> list[Analysis]:
    if len(_ANALYSES) + len(keys) > _CACHED:
        _ANALYSES.clear()
    _ANALYSES.update(zip(keys, analyses, strict=True))
    return analyses


def lemma_rule_texts(combination: str, read: str, head: str) -> list[Text]:
    """What `lemma_modifier` may analyse (to `prefetch` them): the reply's modifier, and
    the head and noun phrase should it fall back to the phrase."""
    texts = [(read, False)] if read else []
    phrase = _PARENTHESES.sub("", combination).strip()
    if len(phrase.split()) > 1:
        texts += [(head, True), (phrase, True)]
    return texts


def first_concept_lemma(text: str) -> str | None:
    """The lemma of the first ADJ/ADV/NOUN/VERB/PROPN token (eval_combination.py)."""
    return next((lemma for _, pos, lemma in analyse(text) if pos in CONCEPT_POS), None)


def noun_phrase_modifier(noun_phrase: str, head: str) -> str:
    """The authors' ``np_to_dict(noun_phrase, head)['modifier']``: content words but the head."""
    phrase = _PARENTHESES.sub("", noun_phrase).strip()
    if len(phrase.split()) == 1:
        return phrase.replace(head, "").strip().replace("-", "")
    head_tokens = analyse(head, keep_hyphenated=True)
    head_forms = {head, head_tokens[0][2] if head_tokens else head}
    kept = [
        text
        for text, pos, lemma in analyse(phrase, keep_hyphenated=True)
        if lemma not in head_forms and pos in CONCEPT_POS
    ]
    return " ".join(kept)


def lemma_modifier(combination: str, read: str, head: str) -> tuple[str, str]:
    """(judged modifier, source) by the authors' rule.

    Where their rule finds nothing (the reply's modifier is the head or a function word and
    the noun phrase has no other content word: "an eye for an eye") they sent an empty
    concept to the judge; we keep the modifier as written, as the surface rule does.
    """
    lemma = first_concept_lemma(read) if read else None
    if lemma is not None and lemma != head:
        return lemma, "reply"
    from_phrase = noun_phrase_modifier(combination, head)
    return (from_phrase, "noun_phrase") if from_phrase else (read, "reply")
