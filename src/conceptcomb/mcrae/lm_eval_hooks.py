"""lm-eval adapter for the McRae tasks: the functions the YAML in ``task_yaml/`` points at.

* `load_dataset` builds one doc per concept, carrying its prompt and its gold features with
  their expansion sets (``custom_dataset``; options from ``--metadata``: ``data_dir``,
  ``tie_rule``, ``senses``);
* `process_results` scores one concept's reply; lm-eval's ``mean`` averages over concepts.
"""

from __future__ import annotations

from typing import Any

import datasets

from conceptcomb.frameworks.lm_eval_metadata import start_task
from conceptcomb.mcrae.docs import TERMS_LINE, build_docs
from conceptcomb.mcrae.scoring import gold_of_doc, score_reply
from conceptcomb.mcrae.tasks import spec_by_name


def load_dataset(mcrae_task: str, **metadata: Any) -> datasets.DatasetDict:
    """``custom_dataset``: lm-eval passes --metadata and --model_args as keywords."""
    start_task(mcrae_task, metadata)
    spec = spec_by_name(mcrae_task)
    docs = build_docs(
        spec, metadata.get("data_dir"), metadata.get("tie_rule"), metadata.get("senses")
    )
    # The norms' terms of use travel with every run (also in the results' task config).
    print(TERMS_LINE, flush=True)
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, float]:
    """Per-concept P@k and R@k (phrase and strict matching) and the number of properties."""
    gold = gold_of_doc(doc, origin=f"{doc.get('task', 'mcrae')} doc {doc.get('concept')!r}")
    return score_reply(gold, str(results[0])).metrics
