"""The judge prompt of paper Table 17 and the reading of its answer."""

from __future__ import annotations

import pytest

from conceptcomb.scorers.relevance import (
    RELEVANCE_PROMPT,
    parse_relevance,
    rating_to_relevance,
    relevance_prompt,
)


def test_prompt_is_table_17_with_the_item_last() -> None:
    prompt = relevance_prompt("a chicken in front of a fox", "in danger")
    lines = prompt.splitlines()
    assert lines[-3:] == [
        "Concept: A chicken in front of a fox",
        "Property: in danger",
        "Relevance:",
    ]
    # Table 17's criteria and examples, rendered with single braces.
    for text in (
        'You should follow the format: {"relevance": your_relevance_score}',
        '- {"relevance": 1}: The concept does not have the property at all.',
        '- {"relevance": 4-6}: The concept sometimes has the property.',
        '- {"relevance": 10}: The concept always has the property.',
        'Concept: Rusty\nProperty: Useless\nRelevance: {"relevance": 7}',
        'Concept: A chicken in the cage\nProperty: In danger\nRelevance: {"relevance": 2}',
    ):
        assert text in prompt
    assert "{{" not in prompt


def test_concept_is_capitalised_like_the_authors_script() -> None:
    # str.capitalize lower-cases the rest, as their get_relevance_score does.
    assert "Concept: Light ships\n" in relevance_prompt("light Ships", "nimble")


@pytest.mark.parametrize(
    ("concept", "prop"),
    [("light Ships", " nimble "), ("{concept}", "{property}"), ("a\x00b", "c\x01d"), ("", "")],
)
def test_prompt_is_the_template_formatted(concept: str, prop: str) -> None:
    """The prompt is built from the template's text rendered once: the same as formatting it."""
    expected = RELEVANCE_PROMPT.format(concept=concept.strip().capitalize(), property=prop.strip())
    assert relevance_prompt(concept, prop) == expected


@pytest.mark.parametrize(
    ("reply", "rating"),
    [
        ('{"relevance": 7}', 7),
        ("{'relevance': 10}", 10),
        ('{"Relevance": "3"}', 3),
        ('{"relevance": 8.9}', 8),  # truncated like the authors' int()
        ('Thinking... {"relevance": 2}', 2),
        ('{"relevance": 0}', None),
        ('{"relevance": 11}', None),
        ('{"relevance": 2-3}', None),
        ("seven", None),
        ("", None),
    ],
)
def test_parse_relevance(reply: str, rating: int | None) -> None:
    assert parse_relevance(reply) == rating


def test_rating_scale() -> None:
    assert rating_to_relevance(1) == 0.0
    assert rating_to_relevance(10) == 1.0
    assert rating_to_relevance(4) == pytest.approx(1 / 3)
