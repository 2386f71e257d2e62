"""The toy's lm-eval hooks: the dataset (the docs of `docs.task_docs`) and the scoring."""

from __future__ import annotations

from typing import Any

import datasets

from conceptcomb.toy.docs import task_docs
from conceptcomb.toy.scoring import score
from conceptcomb.toy.tasks import spec_by_name


def load_dataset(toy_task: str, **_: Any) -> datasets.DatasetDict:
    docs = task_docs(spec_by_name(toy_task))
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return score(results[0], doc["target"])
