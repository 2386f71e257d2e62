"""The paper's prompts (Tables 11, 12) and the generator's prompt, on real records."""

from __future__ import annotations

import pytest

from conceptcomb.abspyramid.data import DetectionItem, GenerationItem
from conceptcomb.abspyramid.prompts import (
    detection_instruction,
    detection_prompt,
    detection_query,
    detection_question,
    generation_prompt,
)
from conceptcomb.abspyramid.tasks import (
    COT,
    DETECTION,
    ICL,
    ICL_COT,
    LOGLIKELIHOOD,
    NLI_PROMPT,
    ZERO_SHOT,
    AbsTaskSpec,
)
from tests.abspyramid.conftest import real_records
from tests.conftest import HAS_SHARED_DATA

pytestmark = pytest.mark.shared_data


def _real(kind: str, index: int = 0) -> DetectionItem:
    record = [r for r in real_records() if r["type"] == kind][index]
    return DetectionItem("x", record["event"], record["concept"], record["label"], kind)


# Read at import: without the shared files the module still imports, and its tests skip.
NOUN, EVENT = (_real("noun"), _real("event")) if HAS_SHARED_DATA else (None, None)
HYPERNYMS = "Hypernyms are words with a broad meaning, which more specific words fall under."


def test_zero_shot_abstraction_prompt_noun() -> None:
    """Table 12a: instruction, then the question with the raw event (markers kept)."""
    spec = AbsTaskSpec(DETECTION, "noun", ZERO_SHOT)
    assert detection_prompt(spec, NOUN) == (
        'Identify the hypernym of a specific noun and provide a "Yes" or "No" response. '
        f'{HYPERNYMS} In the sentence "<faxes of lists> become available," does the meaning '
        'of "office supplies" encompass "faxes of lists?"'
    )
    # The log-likelihood variant scores " Yes" / " No" after the same prompt.
    assert detection_prompt(AbsTaskSpec(DETECTION, "noun", LOGLIKELIHOOD), NOUN) == (
        detection_prompt(spec, NOUN)
    )


def test_zero_shot_abstraction_prompt_verb_and_event() -> None:
    verb = _real("verb")
    assert detection_prompt(AbsTaskSpec(DETECTION, "verb", ZERO_SHOT), verb) == (
        'Identify the hypernym of a specific verb and provide a "Yes" or "No" response. '
        f'{HYPERNYMS} In the sentence "PersonX was <gunned> down by firing simultaneously," '
        'does the meaning of "shoot" encompass "gunned?"'
    )
    assert detection_prompt(AbsTaskSpec(DETECTION, "event", ZERO_SHOT), EVENT) == (
        'Identify abstract descriptions of specific sentences, and provide a "Yes" or "No" '
        'response. Can we consider "challenges arising" as an abstract description of the '
        'sentence "<things were going wrong>?"'
    )


def test_chain_of_thought_prompts() -> None:
    """Table 12b: no "provide a response" in the instruction; the two steps at the end."""
    assert detection_prompt(AbsTaskSpec(DETECTION, "noun", COT), NOUN) == (
        f'Identify the hypernym of a specific noun. {HYPERNYMS} In the sentence "<faxes of '
        'lists> become available," does the meaning of "office supplies" encompass "faxes of '
        "lists?\" Step 1: Let's think about the meanings of those words. Step 2: Provide a "
        '"Yes" or "No" response.'
    )
    assert detection_prompt(AbsTaskSpec(DETECTION, "event", COT), EVENT).endswith(
        "Step 1: Let's think about the meanings of the sentence and the abstract description. "
        'Step 2: Provide a "Yes" or "No" response.'
    )


def test_in_context_queries() -> None:
    """10-shot: the zero-shot instruction, the bare question after the demonstrations; CoT +
    10-shot: Table 12b's instruction, the question with the steps (together: the CoT prompt)."""
    icl, icl_cot = AbsTaskSpec(DETECTION, "event", ICL), AbsTaskSpec(DETECTION, "event", ICL_COT)
    question = detection_question(icl, EVENT)
    assert detection_query(icl, EVENT) == question
    assert detection_instruction(icl, "event").endswith('provide a "Yes" or "No" response.')
    assert detection_instruction(icl_cot, "event") == (
        "Identify abstract descriptions of specific sentences."
    )
    assert detection_query(icl_cot, EVENT) == f"{question} Step 1: Let's think about the " + (
        'meanings of the sentence and the abstract description. Step 2: Provide a "Yes" or '
        '"No" response.'
    )
    cot = AbsTaskSpec(DETECTION, "event", COT)
    assert detection_prompt(icl_cot, EVENT) == detection_prompt(cot, EVENT)
    assert icl_cot.max_tokens == cot.max_tokens == 512 and icl.max_tokens == 32


def test_nli_format_prompts() -> None:
    """Table 11: premise = event without markers, hypothesis = instance replaced by concept."""
    assert detection_prompt(AbsTaskSpec(DETECTION, "noun", ZERO_SHOT, NLI_PROMPT), NOUN) == (
        'Identify entailment and provide a "Yes" or "No" response. Entailment is about '
        'determining whether a "hypothesis" is true given a "premise." Given the premise '
        '"faxes of lists become available," can we know the hypothesis "office supplies '
        'become available?"'
    )
    # For an event the tail event is the concept itself (the authors' NLI construction).
    cot = detection_prompt(AbsTaskSpec(DETECTION, "event", COT, NLI_PROMPT), EVENT)
    assert cot == (
        'Identify entailment, which is about determining whether a "hypothesis" is true given '
        'a "premise." Given the premise "things were going wrong," can we know the hypothesis '
        '"challenges arising?" Step 1: Let\'s think about meanings of those sentences. '
        'Step 2: Provide a "Yes" or "No" response.'
    )


@pytest.mark.parametrize(
    ("event", "kind", "expected"),
    [
        (
            "the <flames> were so hot",
            "noun",
            'In the sentence "the flames were so hot," flames is an instance of',
        ),
        (
            "PersonX <respect> everyone",
            "verb",
            'In the sentence "PersonX respect everyone," respect is an instance of',
        ),
        (
            "<nothing seemed impossible>",
            "event",
            'The sentence "nothing seemed impossible" is an instance of',
        ),
    ],
)
def test_generation_prompt_of_the_authors_generator(event: str, kind: str, expected: str) -> None:
    assert generation_prompt(GenerationItem("x", event, ("ref",), kind)) == expected
