"""Dictionary answers inside free text, and the counted fallbacks."""

from __future__ import annotations

import pytest

from conceptcomb.common.answers import extract_dicts, find_answer, find_value


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"property": "unstable"}', "unstable"),
        ("{'property': 'Unstable'}", "unstable"),
        ('{"Property": "UNSTABLE"}', "unstable"),
        ("{“property”: “wobbly”}", "wobbly"),  # typographic quotes
        ("{property: wobbly}", "wobbly"),  # unquoted
        ('```json\n{"property": "wet"}\n```', "wet"),
        ('Let\'s think step-by-step. Apples are red. So the answer is {"property": "dry"}', "dry"),
        ('So the answer is {"property": "cut off', "cut off"),  # missing closing brace
        ('{{"property": "doubled braces"}}', "doubled braces"),
    ],
)
def test_dictionary_answers(reply: str, expected: str) -> None:
    assert find_answer(reply, ["property"]) == {"property": expected}
    assert find_value(reply, "property") == (expected, True)


def test_last_dictionary_with_the_key_wins() -> None:
    reply = 'Example: {"property": "first"}. Other: {"x": 1}. Final: {"property": "second"}'
    assert find_answer(reply, ["property"]) == {"property": "second"}


def test_required_and_optional_keys() -> None:
    reply = '{"combination": "blue apple", "modifier": "blue"} then {"combination": "red apple"}'
    assert find_answer(reply, ["combination"], optional=["modifier"]) == {
        "combination": "red apple"
    }
    assert find_answer(reply, ["combination", "modifier"]) == {
        "combination": "blue apple",
        "modifier": "blue",
    }


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('The correct answer is "unappetizing"', "unappetizing"),
        ("The answer to the question is: fragile.", "fragile"),
        ("- Property: soggy", "soggy"),
        ("Unstable.", "unstable"),
    ],
)
def test_fallbacks_are_flagged(reply: str, expected: str) -> None:
    assert find_answer(reply, ["property"]) is None
    assert find_value(reply, "property") == (expected, False)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "The answer to the question is:\n\nThe answer to the question is:\n\n" + "x " * 20,
        "The answer is:",
        '{"property": ""}',
        "I think about many things and cannot decide on one single thing today at all.",
    ],
)
def test_unparsable_replies(reply: str) -> None:
    assert find_value(reply, "property") is None


def test_garbage_never_raises() -> None:
    nasty = "{" * 50 + "}" * 3 + "{'a': [1, 2}" + "{1: 2}" + "\x00{'property': b'x'}"
    assert isinstance(extract_dicts(nasty), list)
    find_value(nasty, "property")
