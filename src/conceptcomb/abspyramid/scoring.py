"""Framework-agnostic AbsPyramid scoring, shared by the lm-eval and Inspect adapters.

The docs scored are `conceptcomb.abspyramid.docs`'s records. `score_detection_reply`,
`score_loglikelihoods` and `score_generation_reply` turn a model's output into per-item
results, and `metrics` aggregates them, so the two frameworks give the same numbers for the
same outputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from conceptcomb.abspyramid.answers import first_line, parse_yes_no
from conceptcomb.abspyramid.metrics import (
    Detection,
    from_answer,
    from_probability,
    generation_item_metrics,
    p_yes_from_loglikelihoods,
)
from conceptcomb.abspyramid.tasks import AbsTaskSpec


def score_detection_reply(spec: AbsTaskSpec, doc: Mapping[str, Any], reply: str) -> Detection:
    return from_answer(int(doc["label"]), parse_yes_no(reply, reasoning_first=spec.reasoning))


def score_loglikelihoods(doc: Mapping[str, Any], ll_no: float, ll_yes: float) -> Detection:
    return from_probability(int(doc["label"]), p_yes_from_loglikelihoods(ll_no, ll_yes))


def score_top_logprobs(doc: Mapping[str, Any], top: Sequence[tuple[str, float]]) -> Detection:
    """Inspect's log-likelihood detection: P(Yes) from the first token's top alternatives."""
    return from_probability(int(doc["label"]), p_yes_from_top_logprobs(top))


def p_yes_from_top_logprobs(top: Sequence[tuple[str, float]]) -> float:
    """P(Yes) from the first generated token's alternatives: Yes-tokens against No-tokens.

    Tokens are compared stripped and lower-cased (" Yes", "yes" and "YES" all count as Yes).
    NaN when neither answer is among the alternatives.
    """
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in top:
        word = token.strip().lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else float("nan")


def score_generation_reply(doc: Mapping[str, Any], reply: str) -> tuple[str, dict[str, float]]:
    """The prediction (first non-empty line) and its per-item ROUGE/METEOR values."""
    prediction = first_line(reply)
    return prediction, generation_item_metrics(prediction, list(doc["references"]))
