"""lm-eval adapter for CCPT: the functions the YAML in ``task_yaml/`` points at.

* `load_dataset` builds the items with their rendered prompts (``custom_dataset``); noun
  phrase completion docs carry the ``npc_modifier`` rule of --metadata for the filter,
* `JudgeFilter` scores every reply of a task in one concurrent, cached judge batch after
  generation (a filter sees the whole task at once; ``process_results`` sees one doc),
* `process_results` hands the per-item metrics to lm-eval, leaving undefined ones out.
"""

from __future__ import annotations

import logging
from typing import Any

import datasets
from lm_eval.api.filter import Filter

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.modifiers import OPTION, resolve_npc_modifier, task_rule
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, target_of, user_prompt
from conceptcomb.ccpt.scoring import ItemScore, plan_item, score_replies
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec, spec_by_name
from conceptcomb.common.lm_eval_support import (
    current_judge_settings,
    report_judge_usage,
    resolve_judge_settings,
)

log = logging.getLogger("conceptcomb")


def scoring_fields(spec: CcptTaskSpec, metadata: dict[str, Any]) -> dict[str, str]:
    """Doc fields the judge filter needs: NPC's modifier rule, checked before generation."""
    rule = task_rule(spec.kind, metadata.get(OPTION))
    return {OPTION: rule} if spec.kind == NPC_EMERGENT else {}


def doc_npc_modifier(doc: dict[str, Any]) -> str:
    """The rule a doc was built with (docs of older runs carry none: the default)."""
    return resolve_npc_modifier(doc.get(OPTION))


def build_docs(
    spec: CcptTaskSpec, items: list[CcptItem], extra: dict[str, str] | None = None
) -> list[dict[str, str]]:
    return [
        {
            **item.as_doc(),
            "task": spec.name,
            "system_prompt": SYSTEM_PROMPT,
            "prompt": user_prompt(spec, item),
            "target": target_of(spec, item),
            **(extra or {}),
        }
        for item in items
    ]


def load_dataset(ccpt_task: str, **metadata: Any) -> datasets.DatasetDict:
    """``custom_dataset``: lm-eval passes --metadata and --model_args as keywords."""
    spec = spec_by_name(ccpt_task)
    extra = scoring_fields(spec, metadata)
    if spec.generative:
        resolve_judge_settings(metadata)
    items = load_items(spec, metadata.get("data_dir"))
    docs = build_docs(spec, items, extra)
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


class JudgeFilter(Filter):
    """Parse and judge all replies of one task; each becomes its `ItemScore` record."""

    def apply(self, resps: list[list[str]], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not docs:
            return []
        spec = spec_by_name(str(docs[0]["task"]))
        items = [CcptItem.from_doc(doc, origin=f"{spec.name} doc") for doc in docs]
        replies = [str(resp[0]) if resp else "" for resp in resps]
        settings = current_judge_settings()
        rule = doc_npc_modifier(docs[0])
        scores, usage = score_replies(spec, items, replies, settings, rule)
        report_judge_usage(spec.name, usage)
        return [score.to_json() for score in scores]


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, float]:
    """Per-doc metrics; NaN (undefined) values are left out so lm-eval's mean skips them."""
    result = results[0]
    if isinstance(result, dict):  # judged by JudgeFilter
        return {k: float(v) for k, v in result["metrics"].items() if v is not None}
    spec = spec_by_name(str(doc["task"]))
    item = CcptItem.from_doc(doc, origin=f"{spec.name} doc")
    score: ItemScore = plan_item(spec, item, str(result), doc_npc_modifier(doc))
    return score.defined_metrics()
