"""Expansion sets: the single words that count as naming a McRae feature.

The ESSLLI 2008 organisers built each set by hand from "the synonyms [in WordNet] of the
words that constituted the last element of a property phrase", filtered, plus inflectional
and derivational variants and related words. That file is lost; we rebuild it without the
hand filtering:

1. the feature's *head*: the last content word of the phrase (``beh_-_lays_eggs`` ->
   ``eggs``, ``made_of_metal`` -> ``metal``); a slash marks alternative words
   (``causes_crying/tears`` has the heads ``crying`` and ``tears``), parenthesised remarks
   are dropped (``has_a_flat_head_(slot)`` -> ``head``);
2. its base forms (WordNet's morphy and lemminflect's lemmas: ``eggs`` -> ``egg``);
3. the single-word lemmas of the WordNet 3.0 synsets of those base forms, all parts of
   speech; which senses count is `SENSES` (no hand filter can choose them);
4. WordNet's derivationally related forms and pertainyms of the base forms
   (``transportation`` -> ``transport``, ``slowly`` -> ``slow``, ``nocturnal`` -> ``night``);
5. every inflection of every word so far (lemminflect: ``leg`` -> ``legs``,
   ``loud`` -> ``louder``, ``loudest``).

Function words are never members. The sets are over-generous where the original was
filtered (``lead`` brings "track", "star", ...) and lack the associative neighbours the
organisers added by hand (``lives_on_water`` -> ``lake``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.wordnet import wordnet

# NLTK's English stopword list (function words), plus "cannot". Content words are the rest.
FUNCTION_WORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be
    been being have has had having do does did doing a an the and but if or because as until
    while of at by for with about against between into through during before after above below
    to from up down in out on off over under again further then once here there when where why
    how all any both each few more most other some such no nor not only own same so than too
    very s t can will just don don't should should've now d ll m o re ve y ain aren aren't
    couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma
    mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren
    weren't won won't wouldn wouldn't cannot""".split()
)
# McRae's relation markers ("beh_-_", "inbeh_-_", "eg_-_") and the templates "used for/by/in
# ...", "made of/by/from ..." carry no property of their own: never a head, never matched.
RELATION_WORDS = frozenset({"beh", "inbeh", "eg", "e.g.", "used", "made"})
NON_CONTENT = FUNCTION_WORDS | RELATION_WORDS

# Abbreviations with dots (u.s., n.a.s.a.), then words with inner apostrophes or hyphens.
_TOKEN = re.compile(r"[a-z](?:\.[a-z])+\.?|[a-z0-9]+(?:['’-][a-z0-9]+)*")
_PARENTHESES = re.compile(r"\([^)]*\)")
# Which WordNet senses of a head give synonyms: "tagged" keeps the first sense of each part
# of speech and every sense tagged at least once in WordNet's sense-tagged corpus (SemCor),
# dropping rare senses (bird -> "dame", egg -> "testis"); "all" keeps every sense.
SENSES = ("tagged", "all")
DEFAULT_SENSES = "tagged"
_INFLECTION_POS = {"n": "NOUN", "v": "VERB", "a": "ADJ", "s": "ADJ", "r": "ADV"}
_OOV_POS = {"NOUN", "VERB"}


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; a possessive 's is dropped (man's -> man), abbreviations
    keep their dots (U.S. -> u.s.)."""
    found = _TOKEN.findall(text.lower().replace("’", "'"))
    return [_normalise(token) for token in found]


def _normalise(token: str) -> str:
    if token.endswith("'s"):
        return token[:-2]
    if "." in token and not token.endswith("."):
        return token + "."  # "U.S" at the end of a sentence is u.s.
    return token


def is_content(token: str) -> bool:
    return token not in NON_CONTENT and not token.isdigit()


def content_words(text: str) -> list[str]:
    """Content words of a phrase; a hyphenated word also gives its parts (blood-red)."""
    words: list[str] = []
    for token in tokens(text):
        for word in [token, *token.split("-")] if "-" in token else [token]:
            if is_content(word) and word not in words:
                words.append(word)
    return words


def feature_variants(feature: str) -> list[str]:
    """The phrases a McRae feature stands for: ``bought/sold_in_stores`` is two."""
    text = _PARENTHESES.sub(" ", feature.replace("_", " "))
    variants = [[]]
    for token in text.split():
        options = [option for option in token.split("/") if option] or [token]
        variants = [[*variant, option] for variant in variants for option in options]
    return [" ".join(variant) for variant in variants]


def feature_heads(feature: str) -> tuple[str, ...]:
    """The last content word of each variant of the feature phrase."""
    heads: list[str] = []
    for variant in feature_variants(feature):
        words = [token for token in tokens(variant) if is_content(token)]
        if words and words[-1] not in heads:
            heads.append(words[-1])
    if not heads:
        raise DataFormatError(f"McRae feature {feature!r} has no content word to match.")
    return tuple(heads)


@functools.cache
def _lemminflect() -> Any:
    """lemminflect, imported on first use: it imports spaCy and torch (seconds), and this
    module is imported by every ``inspect eval`` through the package's entry point."""
    import lemminflect

    return lemminflect


def base_forms(word: str) -> set[str]:
    """The word and its lemmas (legs -> leg, flies -> fly, u.s. -> u.s.)."""
    reader = wordnet()
    forms = {word}
    if "." in word and is_content(word.replace(".", "")):
        forms.add(word.replace(".", ""))  # n.a.s.a. -> nasa (not u.s. -> us)
    for pos in "nvar":
        lemma = reader.morphy(word, pos)
        if lemma:
            forms.add(lemma.lower())
    for lemmas in _lemminflect().getAllLemmas(word).values():
        forms.update(lemma.lower() for lemma in lemmas)
    return forms


def _single_word(name: str) -> str | None:
    """WordNet lemma name -> a single lower-case word, or None for multi-word lemmas."""
    name = name.lower()
    return None if "_" in name or " " in name else name


def _kept(lemma: Any, senses: str) -> bool:
    """Whether a sense of a head word counts (see `SENSES`)."""
    return senses == "all" or lemma.count() > 0 or _is_first_sense(lemma)


def _is_first_sense(lemma: Any) -> bool:
    """The lemma's synset is the word's first (most frequent) sense in its part of speech."""
    name, pos = lemma.name(), lemma.synset().pos()
    pos = "a" if pos == "s" else pos
    synsets = [s for s in wordnet().synsets(name, pos=pos) if name in s.lemma_names()]
    return bool(synsets) and synsets[0] == lemma.synset()


def wordnet_neighbours(forms: Iterable[str], senses: str = DEFAULT_SENSES) -> set[str]:
    """Synonyms from the head's kept senses, plus their derivations and pertainyms."""
    reader = wordnet()
    forms = set(forms)
    found: set[str] = set()
    for form in forms:
        for synset in reader.synsets(form):
            own = [lemma for lemma in synset.lemmas() if lemma.name().lower() == form]
            if not own or not any(_kept(lemma, senses) for lemma in own):
                continue
            found.update(filter(None, (_single_word(lemma.name()) for lemma in synset.lemmas())))
            for lemma in own:
                related = lemma.derivationally_related_forms() + lemma.pertainyms()
                found.update(filter(None, (_single_word(r.name()) for r in related)))
    return found


def inflections(word: str) -> set[str]:
    """All inflected forms lemminflect knows; for words it lacks, regular noun and verb ones.

    Comparatives of unknown adjectives, forms of multi-part words (``blood-redder``) and of
    words already ending in -s would be guesses, so those words only stand for themselves.
    """
    forms: set[str] = set()
    for values in _lemminflect().getAllInflections(word).values():
        forms.update(values)
    guessable = "-" not in word and not word.endswith("s")  # afters: not "afterses"
    if not forms and guessable and not _lemminflect().getAllLemmas(word):
        for pos in {_INFLECTION_POS[s.pos()] for s in wordnet().synsets(word)} & _OOV_POS:
            for values in _lemminflect().getAllInflectionsOOV(word, pos).values():
                forms.update(values)
    return {form.lower() for form in forms}


@functools.cache
def expand_word(head: str, senses: str = DEFAULT_SENSES) -> frozenset[str]:
    """The expansion set of one head word (see the module docstring)."""
    forms = base_forms(head)
    words = forms | wordnet_neighbours(forms, senses)
    for word in list(words):
        words |= inflections(word)
    return frozenset(word for word in words if is_content(word))


def expand_feature(feature: str, senses: str = DEFAULT_SENSES) -> frozenset[str]:
    """Union of the expansion sets of a feature's heads."""
    words: set[str] = set()
    for head in feature_heads(feature):
        words |= expand_word(head, senses)
    return frozenset(words)


@functools.cache  # as expand_word: each gold asks it for the concept and every feature head
def concept_words(concept: str) -> frozenset[str]:
    """A name's content words and their forms (``bat_(animal)`` -> bat, bats).

    A model's list often repeats the concept ("cherries grow on trees"), and WordNet puts some
    concepts in their own features' sets (``cherry`` is a synonym of ``red``), so the gold
    builder removes these words from the concept's expansion sets.
    """
    words: set[str] = set()
    for token in tokens(_PARENTHESES.sub(" ", concept.replace("_", " "))):
        if is_content(token):
            for form in base_forms(token):
                words |= {form} | inflections(form)
    return frozenset(words)
