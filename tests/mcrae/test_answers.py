"""Reading ranked property lists out of replies in the shapes models write them."""

from __future__ import annotations

from conceptcomb.mcrae.answers import parse_properties


def test_one_per_line() -> None:
    assert parse_properties("red\nround\n\nsweet\n") == ["red", "round", "sweet"]


def test_numbered_list_drops_preamble_and_closing_remark() -> None:
    reply = (
        "Here are the properties of a cherry:\n\n1. Red\n2) small\n3. grows on trees.\n"
        "10. **Sweet**\n\nI hope this helps!"
    )
    assert parse_properties(reply) == ["Red", "small", "grows on trees", "Sweet"]


def test_bullets_headings_and_explanations() -> None:
    reply = (
        "**Appearance:**\n- **Colour**: red\n* Round (usually)\n"
        "- Pit: cherries have a single hard stone in the middle of the fruit\n"
        "• tastes sweet - sometimes sour"
    )
    assert parse_properties(reply) == ["Colour red", "Round", "Pit", "tastes sweet sometimes sour"]


def test_comma_separated_line_and_semicolons() -> None:
    assert parse_properties("red, round, sweet; juicy") == ["red", "round", "sweet", "juicy"]
    # Inside a list item commas stay: the model put one property per item.
    assert parse_properties("1. long, curved neck\n2. white") == ["long, curved neck", "white"]


def test_empty_and_symbol_only_replies() -> None:
    assert parse_properties("") == []
    assert parse_properties("1. ---\n2. 42\n") == []
