"""lm-eval adapter for CCPT: the functions the YAML in ``task_yaml/`` points at.

* `load_dataset` builds the items with their rendered prompts (``custom_dataset``); noun
  phrase completion docs carry the ``npc_modifier`` rule of --metadata for the filter,
* `JudgeFilter` scores every reply of a task in one concurrent, cached judge batch after
  generation (a filter sees the whole task at once; ``process_results`` sees one doc),
* `process_results` hands the per-item metrics to lm-eval, leaving undefined ones out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import datasets
from lm_eval.api.filter import Filter

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.docs import task_docs
from conceptcomb.ccpt.modifiers import OPTION, resolve_npc_modifier, task_rule
from conceptcomb.ccpt.scoring import ItemScore, plan_item, score_replies
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec, spec_by_name
from conceptcomb.frameworks.lm_eval_metadata import start_task
from conceptcomb.scorers.lm_eval_judge import (
    doc_judge_settings,
    report_judge_usage,
    resolve_judge_settings,
)
from conceptcomb.scorers.ranks import shared_questions
from conceptcomb.scorers.rating import JudgeUsage

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
) -> list[dict[str, Any]]:
    """The task's docs (`conceptcomb.ccpt.docs`) with lm-eval's own fields after them."""
    return [{**doc, **(extra or {})} for doc in task_docs(spec, items)]


def docs_dataset(docs: list[dict[str, Any]]) -> datasets.DatasetDict:
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def task_items(docs: list[dict[str, Any]]) -> tuple[CcptTaskSpec, list[CcptItem]]:
    """The task of these docs (all of one task) and their items."""
    spec = spec_by_name(str(docs[0]["task"]))
    return spec, [CcptItem.from_doc(doc, origin=f"{spec.name} doc") for doc in docs]


def judged_metrics(result: dict[str, Any]) -> dict[str, float]:
    """A judge filter's record as lm-eval metrics, undefined ones left out of its means."""
    return {k: float(v) for k, v in result["metrics"].items() if v is not None}


def load_dataset(ccpt_task: str, **metadata: Any) -> datasets.DatasetDict:
    """``custom_dataset``: lm-eval passes --metadata and --model_args as keywords."""
    start_task(ccpt_task, metadata)
    spec = spec_by_name(ccpt_task)
    extra = scoring_fields(spec, metadata)
    if spec.generative:
        extra.update(resolve_judge_settings(metadata))
    items = load_items(spec, metadata.get("data_dir"))
    return docs_dataset(build_docs(spec, items, extra))


def judge_task(
    docs: list[dict[str, Any]],
    replies: Sequence[Any],
    score: Callable[..., tuple[Sequence[Any], JudgeUsage | None]],
) -> list[dict[str, Any]]:
    """A judge filter's work: ``score(spec, items, replies, settings, rule)`` scores all
    replies of one task in one batch; the judge's usage is reported; each doc becomes its
    score record. In a data-parallel run the processes pool their questions
    (`shared_questions`), even one whose share of the docs is empty."""
    with shared_questions():
        if not docs:
            return []
        spec, items = task_items(docs)
        settings = doc_judge_settings(docs[0])
        scores, usage = score(spec, items, replies, settings, doc_npc_modifier(docs[0]))
    report_judge_usage(spec.name, usage)
    return [record.to_json() for record in scores]


class JudgeFilter(Filter):
    """Parse and judge all replies of one task; each becomes its `ItemScore` record."""

    def apply(self, resps: list[list[str]], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return judge_task(docs, [str(resp[0]) if resp else "" for resp in resps], score_replies)


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, float]:
    """Per-doc metrics; NaN (undefined) values are left out so lm-eval's mean skips them."""
    result = results[0]
    if isinstance(result, dict):  # judged by JudgeFilter
        return judged_metrics(result)
    spec, (item,) = task_items([doc])
    score: ItemScore = plan_item(spec, item, str(result), doc_npc_modifier(doc))
    return score.defined_metrics()
