"""lm-eval adapter for the paper's methods: spreading activation without filter, multi-oracle.

lm-eval makes one model call per request, so of the spreading-activation variants it runs
the one that needs no model before the answer: ``ccpt_<kind>_sa_conceptnet_nofilter``
(ConceptNet activation, no filter; Table 7's ablation). `load_dataset` computes each
item's C_T from the graph when the dataset is built (`conceptcomb.ccpt.docs.task_docs`) and
renders it into the answer prompt; the reply is judged like the base task's
(`conceptcomb.ccpt.lm_eval_hooks.JudgeFilter`). The variants that activate or filter with
the model run in Inspect.

``ccpt_<kind>_oracle`` samples N replies per item (``repeats``); `OracleJudgeFilter`
judges all of them in one batch and `process_oracle_results` reports the best values.
"""

from __future__ import annotations

import json
from typing import Any

import datasets
from lm_eval.api.filter import Filter

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.docs import task_docs
from conceptcomb.ccpt.lm_eval_hooks import (
    doc_npc_modifier,
    docs_dataset,
    judge_task,
    judged_metrics,
    scoring_fields,
    task_items,
)
from conceptcomb.ccpt.methods.oracle import OracleScore, base_spec, best_of, score_oracle_replies
from conceptcomb.ccpt.scoring import plan_item, without_judge
from conceptcomb.ccpt.tasks import CcptTaskSpec, spec_by_name
from conceptcomb.common.errors import ConfigError
from conceptcomb.frameworks.lm_eval_metadata import start_task
from conceptcomb.scorers.lm_eval_judge import (
    resolve_judge_settings,
)


def build_docs(
    spec: CcptTaskSpec, items: list[CcptItem], options: dict[str, Any]
) -> list[dict[str, Any]]:
    """Docs with their final prompts (C_T computed here for the no-filter variant)."""
    extra = scoring_fields(spec, options)
    if spec.needs_model_during_activation:
        raise ConfigError(
            f"{spec.name} calls the model while spreading activation: run it with Inspect "
            f"(inspect eval conceptcomb/{spec.name}); lm-eval runs "
            f"ccpt_{spec.kind}_sa_conceptnet_nofilter."
        )
    docs = task_docs(spec, items, options)
    if spec.spreading:
        # The trace is a JSON string: its per-concept keys would upset Arrow's schema.
        trace = "spreading_activation"
        docs = [{**doc, trace: json.dumps(doc[trace])} for doc in docs]
    return [{**doc, **extra} for doc in docs]


def load_dataset(ccpt_task: str, **metadata: Any) -> datasets.DatasetDict:
    """``custom_dataset``; --metadata may set sa_iterations, sa_epsilon, sa_seed, sa_graph
    and npc_modifier."""
    start_task(ccpt_task, metadata)
    spec = spec_by_name(ccpt_task)
    judge = resolve_judge_settings(metadata)
    items = load_items(spec, metadata.get("data_dir"))
    return docs_dataset([{**doc, **judge} for doc in build_docs(spec, items, metadata)])


class OracleJudgeFilter(Filter):
    """Judge every sampled reply of every item; each doc becomes its `OracleScore` record."""

    def apply(self, resps: list[list[str]], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        replies = [[str(reply) for reply in resp] for resp in resps]
        return judge_task(docs, replies, score_oracle_replies)


def process_oracle_results(doc: dict[str, Any], results: list[Any]) -> dict[str, float]:
    """Best-of-N metrics of one doc; undefined ones are left out of lm-eval's means."""
    result = results[0]
    if isinstance(result, dict):  # judged by OracleJudgeFilter
        return judged_metrics(result)
    spec, (item,) = task_items([doc])  # no filter ran: parse only, judge off
    replies = result if isinstance(result, list) else [result]
    rule = doc_npc_modifier(doc)
    scored = [without_judge(spec, plan_item(base_spec(spec), item, str(r), rule)) for r in replies]
    score = OracleScore(item.item_id, scored, best_of(spec, [s.metrics for s in scored]))
    return {k: v for k, v in score.to_json()["metrics"].items() if v is not None}
