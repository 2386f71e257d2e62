"""lm-eval adapter for CGGC: the functions and the sampler the YAML in ``task_yaml/`` names.

* `load_dataset` (``custom_dataset``): the task's test items as docs (``test``), and the
  candidates of its demonstrations as docs (``demonstrations``: the pool for ood, every
  test item for id), each rendered in the task's prompt style.
* `CggcSampler`: the shared `OrderedSampler` (`conceptcomb.frameworks.lm_eval_sampler`, the
  one any task YAML can use) with CGGC's rule (`demos.cggc_demonstrations`): it chooses
  among the ``demonstrations`` docs lm-eval hands it, and orders them with the shared core.
* `process_results`: ROUGE and Coverage per item (`scoring.score_doc`); the corpus metrics
  (BLEU, METEOR, CIDEr, SPICE) get the item's (prediction, reference) record and are
  computed over all records by the ``agg_*`` aggregations (`scoring.corpus_score`). SPICE's
  jar folder (``--metadata '{"spice_jars": DIR}'``) travels in the docs and, from there, at
  the end of SPICE's records to its aggregation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from conceptcomb.cggc import metrics
from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.data import load_dataset as load_cggc
from conceptcomb.cggc.demos import DemoIndex, cggc_demonstrations
from conceptcomb.cggc.docs import (
    dataset_fields,
    demonstration_docs,
    item_doc,
    prime_questions,
    task_pairs,
)
from conceptcomb.cggc.metrics import Scored
from conceptcomb.cggc.scoring import corpus_score, score_doc
from conceptcomb.cggc.tasks import TaskOptions, options_from_doc, spec_by_name
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.demonstrations import OrderedDemonstrations
from conceptcomb.common.errors import DataFormatError, DataUnavailableError
from conceptcomb.frameworks.lm_eval_metadata import start_task
from conceptcomb.frameworks.lm_eval_sampler import OrderedSampler

DEMONSTRATIONS = "demonstrations"  # the few-shot split
SPICE_JARS = "spice_jars"  # the doc field of SPICE's jar folder option


def load_dataset(cggc_task: str, **metadata: Any) -> datasets.DatasetDict:
    """``custom_dataset``: lm-eval passes --metadata and --model_args as keywords. The
    ``test`` split is a `datasets.Dataset`, the ``demonstrations`` split a list of docs."""
    start_task(cggc_task, metadata)
    metrics.check_libraries()
    spec = spec_by_name(cggc_task)
    options = TaskOptions.resolve(metadata)
    dataset = load_cggc(options.data_dir)
    prime_questions(dataset, "test", spec.prompt_style, options.seed)
    # METEOR's JVM loads its paraphrase tables (~6 s) while the docs are built and the model
    # generates, not when the first reply is scored.
    metrics.start_meteor()
    where = dataset_fields(dataset)
    if options.spice_jars:  # for SPICE's aggregation, which sees only metric values
        where[SPICE_JARS] = options.spice_jars
    with collector_paused():  # ~16k docs and ~22k candidates (common.collector)
        docs = [
            {**item_doc(item, demos, spec, options), **where}
            for item, demos in task_pairs(spec, options)
        ]
        shared = demonstration_docs(dataset, spec.setting, spec.prompt_style, options.seed)
        return datasets.DatasetDict(
            {
                "test": datasets.Dataset.from_list(docs),
                # A plain list, not an Arrow table: lm-eval only lists the few-shot split
                # (``list(fewshot_docs())``), which takes ~1.5 s row by row for the ood
                # pool's 22k rows and gives the same dicts. Each a copy of the shared doc.
                DEMONSTRATIONS: [dict(doc) for doc in shared],
            }
        )


class CggcSampler(OrderedSampler):
    """Per-item CGGC demonstrations (id / ood, order, structure, packaging) chosen among the
    few-shot docs, by CGGC's rule, in the order of the shared core."""

    def target_id(self, task: Any, doc: Mapping[str, Any]) -> Any:
        return doc["item_id"]

    def prepare(self, task: Any, doc: Mapping[str, Any], n: int) -> OrderedDemonstrations:
        spec, options = options_from_doc(doc, None, n)
        docs = self.fewshot_docs()
        self._docs = {d["item_id"]: d for d in docs}
        items = [CggcItem.from_doc(d, origin=f"{spec.name} few-shot doc") for d in docs]
        return cggc_demonstrations(DemoIndex(items), options.demo_spec(spec))

    def choose(
        self, demonstrations: OrderedDemonstrations, task: Any, doc: dict[str, Any]
    ) -> list[dict[str, Any]] | None:
        item = CggcItem.from_doc(doc, origin=f"{task.config.task} doc")
        chosen = demonstrations.choose(item.item_id, item)
        if chosen is None:
            n = demonstrations.k
            raise DataUnavailableError(
                f"{task.config.task}: item {item.item_id} cannot get {n} valid demonstrations. "
                f"With --num_fewshot {n}, also pass --metadata '{{\"k\": {n}}}' so that items "
                "the pool cannot serve are left out."
            )
        ids = [x.item_id for x in chosen]
        # The docs carry the draw made when the task was built (k from --metadata): the same
        # rule on the same pool must give it again.
        built = list(doc.get("demonstration_ids") or [])
        if len(built) == len(ids) and built != ids:
            raise DataFormatError(
                f"{task.config.task}: item {item.item_id}: the few-shot split gives {ids}, the "
                f"task was built with {built}; do not override fewshot_split."
            )
        return [self._docs[i] for i in ids]


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
