"""One spaCy English pipeline per process, whichever benchmark asks for it first."""

from __future__ import annotations

from conceptcomb.ccpt.npc_lemma import analysis as lemma_analysis
from conceptcomb.cggc import metrics
from conceptcomb.common.spacy_english import english_pipeline


def test_ccpt_and_cggc_use_the_same_pipeline() -> None:
    nlp = english_pipeline()
    assert "ner" not in nlp.pipe_names and "lemmatizer" in nlp.pipe_names
    ccpt_nlp, _ = lemma_analysis.spacy_pipeline()
    cggc_nlp, has_lemmas = metrics._spacy()
    assert ccpt_nlp is nlp and cggc_nlp is nlp and has_lemmas
