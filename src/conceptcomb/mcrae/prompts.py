"""The prompt: ask for a ranked list of a concept's properties, one per line.

The ESSLLI 2008 task was set for word-space models and has no prompt; this one is ours. It
asks for what the McRae norms hold (speaker-generated properties of many kinds), ranked
like the norms (most typical first), and for at least 30 so that P@30 is attainable.
"""

from __future__ import annotations

PROMPT = (
    'List the properties of the concept "{concept}": the features people name when asked '
    "to describe it, such as what kind of thing it is, its parts, what it looks, sounds, "
    "smells, tastes and feels like, what it does or is used for, and where it is found.\n\n"
    "Rank the properties from most to least typical. Write at least 30 properties, one per "
    "line, each a single word or a short phrase, with no explanations."
)


def concept_text(concept: str) -> str:
    """How a concept is shown to the model: McRae's ``bat_(animal)`` -> ``bat (animal)``."""
    return concept.replace("_", " ")


def user_prompt(concept: str) -> str:
    return PROMPT.format(concept=concept_text(concept))
