"""lm-eval adapter for CGGC's relation verification (``cggc_id_verified``, ``cggc_ood_verified``).

* `load_dataset`: the task's docs (as `lm_eval_hooks.load_dataset`), after checking the
  judge options of --metadata (``judge``, ``judge_base_url`` ...) before any generation;
* `VerifyFilter`: every reply's yes/no questions, one per graph edge, in one concurrent,
  deduplicated, cached batch after generation;
* `process_results`: the usual CommonGen values, ``verified_share``, ``verifier_failures``
  and, for verified items, the values again as ``<metric>_verified``: the YAML aggregates
  those with the same functions, so they are the metrics on the verified subset.
"""

from __future__ import annotations

from typing import Any

import datasets
from lm_eval.api.filter import Filter

from conceptcomb.cggc import lm_eval_hooks
from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.metrics import check_libraries
from conceptcomb.cggc.scoring import prediction_of
from conceptcomb.cggc.verification import Verification, verify_predictions, with_verified
from conceptcomb.common.collector import collector_paused
from conceptcomb.frameworks.lm_eval_metadata import start_task
from conceptcomb.scorers.lm_eval_judge import (
    doc_judge_settings,
    report_judge_usage,
    resolve_judge_settings,
)
from conceptcomb.scorers.ranks import shared_questions


def load_dataset(cggc_task: str, **metadata: Any) -> datasets.DatasetDict:
    """CGGC's docs, each carrying the judge options for the verification filter."""
    start_task(cggc_task, metadata)  # a misspelt judge option, before the judge's checks
    check_libraries()  # and the cggc extra, before a local judge loads
    ((field, options),) = resolve_judge_settings(metadata).items()
    splits = lm_eval_hooks.load_dataset(cggc_task, **metadata)
    return datasets.DatasetDict(
        {name: _with_field(split, field, options) for name, split in splits.items()}
    )


@collector_paused()  # a large build (common.collector)
def _with_field(
    split: datasets.Dataset | list[dict[str, Any]], field: str, value: Any
) -> datasets.Dataset | list[dict[str, Any]]:
    """The split with ``field`` set to ``value`` in every doc, in the split's own form (the
    few-shot split is a plain list: `lm_eval_hooks.load_dataset`)."""
    if isinstance(split, list):
        return [{**doc, field: value} for doc in split]
    return split.add_column(field, [value] * len(split))


class VerifyFilter(Filter):
    """Each reply becomes ``{"reply": ..., "verification": {...}}``."""

    def apply(self, resps: list[list[str]], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        with shared_questions():  # a data-parallel run's processes pool their questions
            if not docs:
                return []
            replies = [str(resp[0]) if resp else "" for resp in resps]
            items = [CggcItem.from_doc(doc, origin=f"{doc.get('task')} doc") for doc in docs]
            pairs = zip(replies, docs, strict=True)
            predictions = [prediction_of(doc, reply) for reply, doc in pairs]
            results, usage = verify_predictions(doc_judge_settings(docs[0]), items, predictions)
        report_judge_usage(str(docs[0].get("task")), usage)
        return [
            {"reply": reply, "verification": result.to_json()}
            for reply, result in zip(replies, results, strict=True)
        ]


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    result = results[0] if results else ""
    if not isinstance(result, dict):  # no filter ran: nothing verified
        return lm_eval_hooks.process_results(doc, [str(result)])
    values = lm_eval_hooks.process_results(doc, [result["reply"]])
    return with_verified(values, Verification.from_json(result["verification"]))
