"""Framework-agnostic AbsPyramid items and scoring, shared by the lm-eval and Inspect adapters.

`build_docs` renders every item of a task into a flat record (prompt, answer, demonstrations)
that lm-eval uses as its doc and Inspect keeps as sample metadata (the in-context
demonstrations are drawn here, once per item, so both frameworks show the same ones);
`score_detection_reply`, `score_loglikelihoods` and `score_generation_reply` turn a model's
output into per-item results, and `metrics` aggregates them, so the two frameworks give the
same numbers for the same outputs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from conceptcomb.abspyramid.answers import first_line, parse_yes_no
from conceptcomb.abspyramid.data import (
    DemonstrationPools,
    DetectionItem,
    GenerationItem,
    check_seed,
    choose_demonstrations,
    load_demonstrations,
    load_items,
)
from conceptcomb.abspyramid.metrics import (
    Detection,
    from_answer,
    from_probability,
    generation_item_metrics,
    p_yes_from_loglikelihoods,
)
from conceptcomb.abspyramid.prompts import (
    answer_of,
    detection_instruction,
    detection_prompt,
    detection_query,
    detection_question,
    generation_prompt,
)
from conceptcomb.abspyramid.tasks import DETECTION, AbsTaskSpec


def detection_doc(
    spec: AbsTaskSpec, item: DetectionItem, pools: DemonstrationPools | None = None
) -> dict[str, Any]:
    """An item's record; in-context tasks add the instruction, the item's query (shown after
    the demonstrations) and its 10 demonstrations (train records of its type, bare answers)."""
    doc: dict[str, Any] = {
        **item.as_doc(),
        "task": spec.name,
        "prompt": detection_prompt(spec, item),
        "question": detection_question(spec, item),
        "answer": answer_of(item),
    }
    if spec.in_context:
        assert pools is not None, "in-context tasks need the demonstration pools"
        doc["instruction"] = detection_instruction(spec, item.type)
        doc["query"] = detection_query(spec, item)
        doc["demos"] = [
            {
                "item_id": demo.item_id,
                "type": demo.type,
                "question": detection_question(spec, demo),
                "answer": answer_of(demo),
            }
            for demo in choose_demonstrations(pools, item)
        ]
    return doc


def generation_doc(spec: AbsTaskSpec, item: GenerationItem) -> dict[str, Any]:
    return {
        **item.as_doc(),
        "task": spec.name,
        "prompt": generation_prompt(item),
        # Shown as the target in logs; scoring uses every reference.
        "answer": item.references[0],
    }


def build_docs(
    spec: AbsTaskSpec,
    split: str = "test",
    data_dir: str | os.PathLike[str] | None = None,
    seed: object = 0,
) -> list[dict[str, Any]]:
    """One record per item of the task, with its rendered prompt(s); ``seed`` draws the
    in-context demonstrations (checked for every task, used by ``_icl`` and ``_icl_cot``)."""
    seed = check_seed(seed)
    items = load_items(spec, split, data_dir)
    if spec.kind != DETECTION:
        return [generation_doc(spec, item) for item in items]  # type: ignore[arg-type]
    pools = load_demonstrations(spec.relation, seed, data_dir) if spec.in_context else None
    return [detection_doc(spec, item, pools) for item in items]  # type: ignore[arg-type]


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
