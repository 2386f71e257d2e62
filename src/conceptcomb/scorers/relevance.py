"""The CCPT relevance judge prompt (paper Table 17) and the parsing of its answer.

The text is the authors' prompt as their released script formats it (seokwon99/CCPT,
``experiment/prompts.py``): Table 17's wording with the ``---`` separators and blank lines
the PDF drops. The concept is capitalised with ``str.capitalize`` and the property is
passed as is, exactly as their ``get_relevance_score`` does, so cached ratings and scores
line up with theirs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

from conceptcomb.common.answers import extract_dicts

RELEVANCE_PROMPT = """Concepts are characterized by properties. For example, the concept "a chicken in front of a fox" strongly exhibits the property "in danger." When given a concept and a property, your task is to evaluate how much the concept has the property on a scale from 1 to 10. You should follow the format: {{"relevance": your_relevance_score}}

Use the following scoring criteria to assign a relevance score:
- {{"relevance": 1}}: The concept does not have the property at all.
- {{"relevance": 2-3}}: The concept rarely has the property.
- {{"relevance": 4-6}}: The concept sometimes has the property.
- {{"relevance": 7-8}}: The concept usually has the property, but not always.
- {{"relevance": 9}}: The concept almost always has the property.
- {{"relevance": 10}}: The concept always has the property.

---

Examples:

---

Concept: Rusty
Property: Useless
Relevance: {{"relevance": 7}}

---

Concept: A chicken in the cage
Property: In danger
Relevance: {{"relevance": 2}}

---

Concept: A chicken in front of a fox
Property: In danger
Relevance: {{"relevance": 9}}

---

Concept: {concept}
Property: {property}
Relevance:
"""  # noqa: E501

MIN_RATING, MAX_RATING = 1, 10


@dataclass(frozen=True)
class RelevanceQuestion:
    """How much does ``concept`` have ``prop``? One judge call."""

    concept: str
    prop: str

    @cached_property  # asked for when planning, judging and filling in the replies
    def prompt(self) -> str:
        return relevance_prompt(self.concept, self.prop)


@lru_cache(maxsize=2)
def _around_fields(template: str) -> tuple[str, str, str]:
    """The template's text before, between and after its two fields, rendered once per
    template: ``str.format`` parses the 1,100 characters again for each of a run's thousands
    of questions (8x slower). Keyed by the template, so a changed one is rendered anew."""
    before, _, rest = template.format(concept="\0", property="\1").partition("\0")
    between, _, after = rest.partition("\1")
    return before, between, after


def relevance_prompt(concept: str, prop: str) -> str:
    """``RELEVANCE_PROMPT.format(concept=concept.strip().capitalize(), property=prop.strip())``."""
    before, between, after = _around_fields(RELEVANCE_PROMPT)
    return f"{before}{concept.strip().capitalize()}{between}{prop.strip()}{after}"


def parse_relevance(reply: str) -> int | None:
    """The 1-10 rating in a judge reply ``{"relevance": n}``, or None if there is none.

    Like the authors' parser the value is truncated to an integer; unlike it we accept the
    dictionary inside surrounding text (theirs needs the reply to be only the dictionary).
    """
    for candidate in reversed(extract_dicts(reply)):
        lowered = {key.strip().lower(): value for key, value in candidate.items()}
        if "relevance" not in lowered:
            continue
        try:
            value = float(str(lowered["relevance"]).strip())
        except ValueError:
            continue
        if math.isfinite(value) and MIN_RATING <= value <= MAX_RATING:
            return int(value)
    return None


def rating_to_relevance(rating: float) -> float:
    """Map a 1-10 rating to the paper's 0-1 relevance R = (rating - 1) / 9."""
    return (rating - MIN_RATING) / (MAX_RATING - MIN_RATING)
