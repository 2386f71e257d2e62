"""Reading a CCPT answer out of a model reply, per task."""

from __future__ import annotations

import re
from dataclasses import dataclass

from conceptcomb.ccpt.data import PROPERTY_TYPES
from conceptcomb.ccpt.modifiers import (
    LEMMA,
    SURFACE,
    JudgedModifier,
    Text,
    lemma_modifier,
    lemma_rule_texts,
)
from conceptcomb.ccpt.tasks import NPC_EMERGENT, TYPE_PREDICTION
from conceptcomb.common.answers import find_answer, find_value

# Function words dropped when the modifier has to be read off the noun phrase.
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "with",
        "without",
        "by",
        "as",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "and",
        "or",
        "but",
        "nor",
        "than",
        "like",
        "near",
        "behind",
        "beside",
        "after",
        "before",
        "during",
        "through",
        "his",
        "her",
        "its",
        "their",
        "our",
        "my",
        "your",
        "this",
        "that",
        "these",
        "those",
        "some",
        "any",
        "no",
    ]
)
_PARENTHESES = re.compile(r"\([^)]*\)")
_TYPE_ALIASES = {"other": "others", "cancelled": "canceled", "components": "component"}


@dataclass(frozen=True)
class ParsedAnswer:
    """The answer fields, and whether they came in the requested dictionary format.

    For noun phrase completion ``fields["modifier"]`` is the modifier the judge rates and
    ``modifier`` records how it was chosen from the one the reply names.
    """

    fields: dict[str, str]
    in_dict: bool = True
    modifier: JudgedModifier | None = None


def parse_property(reply: str) -> ParsedAnswer | None:
    found = find_value(reply, "property")
    return ParsedAnswer({"property": found[0]}, found[1]) if found else None


def parse_property_type(reply: str) -> ParsedAnswer | None:
    """One of emergent/component/canceled/others, tolerating "Emergent property" etc."""
    found = find_value(reply, "property_type")
    if not found:
        return None
    words = re.findall(r"[a-z]+", found[0])
    label = _TYPE_ALIASES.get(words[0], words[0]) if words else ""
    return ParsedAnswer({"property_type": label}, found[1]) if label in PROPERTY_TYPES else None


def modifier_of(noun_phrase: str, head: str) -> str:
    """The modifier words of ``noun_phrase``: what is left without the head and function words.

    The surface rule's reading of a completion that names no usable modifier.
    """
    head_forms = {head.lower(), head.lower() + "s", head.lower() + "es"}
    words = re.findall(r"[a-z][a-z'-]*", _PARENTHESES.sub(" ", noun_phrase.lower()))
    kept = [word for word in words if word not in head_forms and word not in _FUNCTION_WORDS]
    return " ".join(kept)


def surface_modifier(combination: str, read: str, head: str) -> tuple[str, str]:
    """(judged modifier, source) by the surface rule."""
    if read and read != head.lower():
        return read, "reply"
    # Named no modifier, or the head itself: read it off the phrase where possible
    # ("an eye for an eye" keeps "eye": there is nothing else to read).
    from_phrase = modifier_of(combination, head)
    return (from_phrase, "noun_phrase") if from_phrase else (read, "reply")


def _completion_fields(reply: str) -> tuple[str, str, bool] | None:
    """(noun phrase, modifier as written, whether in a dict) of a completion, or None."""
    answer = find_answer(reply, ["combination"], optional=["modifier"])
    if answer:
        return answer["combination"], answer.get("modifier", ""), True
    found = find_value(reply, "combination")
    return (found[0], "", False) if found else None


def completion_texts(reply: str, head: str) -> list[Text]:
    """What the lemma rule may analyse for this reply (`conceptcomb.ccpt.modifiers.prefetch`)."""
    fields = _completion_fields(reply)
    return lemma_rule_texts(fields[0], fields[1], head.strip().lower()) if fields else []


def parse_completion(reply: str, head: str, npc_modifier: str = LEMMA) -> ParsedAnswer | None:
    """Noun phrase and judged modifier of a noun-phrase completion, or None if unusable."""
    fields = _completion_fields(reply)
    if fields is None:
        return None
    combination, read, in_dict = fields
    choose = surface_modifier if npc_modifier == SURFACE else lemma_modifier
    judged, source = choose(combination, read, head.strip().lower())
    if not judged:
        return None
    chosen = JudgedModifier(read=read, judged=judged, rule=npc_modifier, source=source)
    return ParsedAnswer({"combination": combination, "modifier": judged}, in_dict, chosen)


def parse_answer(
    kind: str, reply: str, head: str = "", npc_modifier: str = LEMMA
) -> ParsedAnswer | None:
    """The answer of a reply for this task kind, or None for a format failure."""
    if kind == TYPE_PREDICTION:
        return parse_property_type(reply)
    if kind == NPC_EMERGENT:
        return parse_completion(reply, head, npc_modifier)
    return parse_property(reply)
