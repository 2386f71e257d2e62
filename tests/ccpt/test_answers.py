"""CCPT answer fields per task, with the modifier recovered when a completion lacks it."""

from __future__ import annotations

import pytest

from conceptcomb.ccpt.answers import modifier_of, parse_answer


@pytest.mark.parametrize(
    ("reply", "label", "in_dict"),
    [
        ('{"property_type": "emergent"}', "emergent", True),
        ('{"property_type": "Emergent property"}', "emergent", True),
        ("{'property_type': 'other'}", "others", True),
        ('{"property_type": "cancelled"}', "canceled", True),
        ("Component", "component", False),
    ],
)
def test_property_type(reply: str, label: str, in_dict: bool) -> None:
    parsed = parse_answer("tp", reply)
    assert parsed is not None
    assert (parsed.fields["property_type"], parsed.in_dict) == (label, in_dict)


@pytest.mark.parametrize("reply", ['{"property_type": "surprising"}', "no idea", ""])
def test_property_type_failures(reply: str) -> None:
    assert parse_answer("tp", reply) is None


def test_completion_with_modifier() -> None:
    parsed = parse_answer(
        "npc_emergent", '{"combination": "A Blue Apple", "modifier": "Blue"}', "apple"
    )
    assert parsed is not None and parsed.fields == {
        "combination": "a blue apple",
        "modifier": "blue",
    }


@pytest.mark.parametrize(
    ("reply", "modifier"),
    [
        ('{"combination": "an apple on a toothpick"}', "toothpick"),
        ('{"combination": "apples (in winter) under snow", "modifier": "apple"}', "snow"),
        ('The answer is "a moth to a candle"', "candle"),
    ],
)
def test_completion_modifier_recovered(reply: str, modifier: str) -> None:
    head = "moth" if "moth" in reply else "apple"
    parsed = parse_answer("npc_emergent", reply, head)
    assert parsed is not None and parsed.fields["modifier"] == modifier


def test_completion_without_any_modifier_is_a_failure() -> None:
    assert parse_answer("npc_emergent", '{"combination": "the apple"}', "apple") is None


def test_modifier_of() -> None:
    assert modifier_of("the hush before a thunderclap", "hush") == "thunderclap"
    assert modifier_of("Light ships", "ship") == "light"


def test_modifier_equal_to_the_head_is_kept_when_nothing_else_is_there() -> None:
    reply = '{"combination": "an eye for an eye", "modifier": "eye"}'
    parsed = parse_answer("npc_emergent", reply, "eye")
    assert parsed is not None and parsed.fields["modifier"] == "eye"
