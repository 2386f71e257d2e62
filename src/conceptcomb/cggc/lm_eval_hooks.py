"""lm-eval adapter for CGGC: the functions and the sampler the YAML in ``task_yaml/`` names.

* `load_dataset` (``custom_dataset``): the task's test items as docs, each carrying what
  the sampler needs to choose its demonstrations (setting, order, seed, dataset folder).
* `CggcSampler`: a ``ContextSampler`` that picks each item's demonstrations with the core
  selection function. lm-eval hands the sampler the item only when ``fewshot_split`` equals
  ``test_split`` (otherwise ``eval_doc`` is None), so the YAML sets both to ``test`` and
  the sampler draws from the CGGC pool itself, never from the docs lm-eval gives it.
* `process_results`: ROUGE and Coverage per item (`scoring.score_doc`); the corpus metrics
  (BLEU, METEOR, CIDEr, SPICE) get the item's (prediction, reference) record and are
  computed over all records by the ``agg_*`` aggregations (`scoring.corpus_score`). SPICE's
  jar folder (``--metadata '{"spice_jars": DIR}'``) travels in the docs and, from there, at
  the end of SPICE's records to its aggregation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
from lm_eval.api.samplers import ContextSampler

from conceptcomb.cggc import metrics
from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.data import load_dataset as load_cggc
from conceptcomb.cggc.metrics import Scored
from conceptcomb.cggc.scoring import corpus_score, score_doc
from conceptcomb.cggc.tasks import (
    TaskOptions,
    demo_doc,
    demonstrations,
    item_doc,
    options_from_doc,
    spec_by_name,
    task_pairs,
)
from conceptcomb.common.errors import ConfigError, DataUnavailableError

SPICE_JARS = "spice_jars"  # the doc field of SPICE's jar folder option


def load_dataset(cggc_task: str, **metadata: Any) -> datasets.DatasetDict:
    """``custom_dataset``: lm-eval passes --metadata and --model_args as keywords."""
    spec = spec_by_name(cggc_task)
    options = TaskOptions.resolve(metadata)
    dataset = load_cggc(options.data_dir)
    # The sampler reloads the pool from data_dir; dataset_sha256 names the data in the samples.
    where = {"data_dir": str(dataset.folder), "dataset_sha256": dataset.sha256}
    if options.spice_jars:  # for SPICE's aggregation, which sees only metric values
        where[SPICE_JARS] = options.spice_jars
    docs = [
        {**item_doc(item, demos, spec, options), **where}
        for item, demos in task_pairs(spec, options)
    ]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


class CggcSampler(ContextSampler):
    """Per-item CGGC demonstrations (id / ood, order, structure, packaging) from the pool."""

    def sample(
        self,
        n: int,
        eval_doc: dict[str, Any] | None = None,
        df: Sequence[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        if n == 0:
            return []
        if eval_doc is None:
            raise ConfigError(
                "CGGC demonstrations depend on the test item, which lm-eval passes to the sampler "
                "only when fewshot_split equals test_split: keep 'fewshot_split: test'."
            )
        spec, options = options_from_doc(eval_doc, str(eval_doc["data_dir"]), n)
        dataset = load_cggc(options.data_dir)
        item = CggcItem.from_doc(eval_doc, origin=f"{spec.name} doc")
        demos = demonstrations(item, spec, options, dataset)
        if demos is None:
            raise DataUnavailableError(
                f"{spec.name}: item {item.item_id} cannot get {n} valid demonstrations from "
                f"{dataset.folder}. With --num_fewshot {n}, also pass --metadata "
                f"'{{\"k\": {n}}}' so that items the pool cannot serve are left out."
            )
        return [demo_doc(demo, spec, options) for demo in demos]


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    scored = score_doc(doc, str(results[0]) if results else "")
    values: dict[str, Any] = dict(scored.values)
    record = scored.scored.as_record()
    values.update({name: record for name in metrics.CORPUS})
    values["spice"] = [*record, doc.get(SPICE_JARS)]  # the record, then the jar folder
    return values


def _records(items: Sequence[Any]) -> list[Scored]:
    return [Scored.from_record(record) for record in items]


def agg_bleu3(items: Sequence[Any]) -> float:
    return corpus_score("bleu3", _records(items))


def agg_bleu4(items: Sequence[Any]) -> float:
    return corpus_score("bleu4", _records(items))


def agg_meteor(items: Sequence[Any]) -> float:
    return corpus_score("meteor", _records(items))


def agg_cider(items: Sequence[Any]) -> float:
    return corpus_score("cider", _records(items))


def agg_spice(items: Sequence[Any]) -> float:
    """SPICE over the items' records, with the jar folder their docs carried (if any)."""
    jars = next((item[4] for item in items if len(item) > 4 and item[4]), None)
    return corpus_score("spice", _records([item[:4] for item in items]), jars)
