"""AbsPyramid items -> docs: every item of a task as a flat record (prompt, answer, demos).

`build_docs` is the one items -> docs function: lm-eval uses its records as docs and
Inspect keeps them as sample metadata. The in-context demonstrations are drawn here, once
per item, so both frameworks show the same ones (`conceptcomb.abspyramid.scoring` turns a
reply into per-item results).
"""

from __future__ import annotations

import os
from typing import Any

from conceptcomb.abspyramid.data import (
    DemonstrationPools,
    DetectionItem,
    GenerationItem,
    check_seed,
    choose_demonstrations,
    load_demonstrations,
    load_items,
)
from conceptcomb.abspyramid.prompts import (
    answer_of,
    detection_instruction,
    detection_prompt,
    detection_query,
    detection_question,
    generation_prompt,
)
from conceptcomb.abspyramid.tasks import DETECTION, AbsTaskSpec, spec_by_name


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


def doc_turns(spec: AbsTaskSpec, doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The (role, text) turns of a doc: the whole prompt, or the instruction, each
    demonstration (its question, answered) and the item's query (in-context tasks)."""
    if spec.kind == DETECTION and spec.in_context:
        turns = [("system", str(doc["instruction"]))]
        for demo in doc["demos"]:
            turns += [("user", str(demo["question"])), ("assistant", str(demo["answer"]))]
        return [*turns, ("user", str(doc["query"]))]
    return [("user", str(doc["prompt"]))]


def chat_messages(
    task: str, doc: dict[str, Any], options: dict[str, Any] | None = None
) -> list[tuple[str, str]]:
    """The chat the task sends for a doc, as both frameworks send it (`doc_turns`)."""
    return doc_turns(spec_by_name(task), doc)
