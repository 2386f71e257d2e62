"""A CGGC bundle whose replies are the items' own reference sentences, scored through
``conceptcomb score --samples-output`` (the size and validation time of a full test set,
without a model; every metric at its maximum)."""

from __future__ import annotations

import json
from pathlib import Path

from conceptcomb.cggc.data import CggcItem, load_dataset
from conceptcomb.cggc.docs import evaluated_items, item_doc, task_pair, task_pairs
from conceptcomb.cggc.tasks import CggcTaskSpec, TaskOptions, spec_by_name
from conceptcomb.testing.recorded import score_predictions, submit_bundle

MODEL_NAME = "cggc-references"


def write_reference_predictions(
    task: str, out: Path, data_dir: str | None = None, limit: int | None = None, start: int = 0
) -> int:
    """A ``{"doc", "response"}`` JSONL of the task's test items (``limit`` of them from the
    ``start``-th), each answered by its own reference sentence; the number of items."""
    spec = spec_by_name(task)
    options = TaskOptions(data_dir=data_dir)
    if limit is None:
        pairs = task_pairs(spec, options)[start:]
    else:
        pairs = _first_pairs(spec, options, start + limit)[start:]
    with out.open("w", encoding="utf-8") as handle:
        for item, demos in pairs:
            doc = item_doc(item, demos, spec, options)
            handle.write(json.dumps({"doc": doc, "response": item.target}) + "\n")
    return len(pairs)


def _first_pairs(
    spec: CggcTaskSpec, options: TaskOptions, limit: int
) -> list[tuple[CggcItem, list[CggcItem]]]:
    """``task_pairs(spec, options)[:limit]``, drawing the demonstrations of those items
    only (`conceptcomb.cggc.docs.task_pair`: seconds fewer for a few items)."""
    dataset = load_dataset(options.data_dir)
    pairs = []
    for item in evaluated_items(spec, options, dataset):
        if len(pairs) == limit:
            break
        pair = task_pair(spec, options, item.item_id)
        if pair is not None:
            pairs.append(pair)
    return pairs


def cggc_bundle(
    out: Path,
    data_dir: str | None = None,
    tasks: tuple[str, ...] = ("cggc_ood",),
    limit: int | None = None,
    start: int = 0,
) -> Path:
    """One bundle of ``tasks`` (all their test items, or ``limit`` of them from the
    ``start``-th); its path."""
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for task in tasks:
        predictions = out / f"{task}.jsonl"
        write_reference_predictions(task, predictions, data_dir, limit, start)
        results.append(score_predictions(out, task, predictions, MODEL_NAME))
    return submit_bundle(results, out)
