"""A CGGC bundle whose replies are the items' own reference sentences, scored through
``conceptcomb score --samples-output`` (the size and validation time of a full test set,
without a model; every metric at its maximum)."""

from __future__ import annotations

import json
from pathlib import Path

from conceptcomb.cggc.docs import item_doc, task_pairs
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from conceptcomb.testing.recorded import score_predictions, submit_bundle

MODEL_NAME = "cggc-references"


def write_reference_predictions(
    task: str, out: Path, data_dir: str | None = None, limit: int | None = None
) -> int:
    """A ``{"doc", "response"}`` JSONL of the task's test items, each answered by its own
    reference sentence; the number of items."""
    spec = spec_by_name(task)
    options = TaskOptions(data_dir=data_dir)
    pairs = task_pairs(spec, options)[:limit]
    with out.open("w", encoding="utf-8") as handle:
        for item, demos in pairs:
            doc = item_doc(item, demos, spec, options)
            handle.write(json.dumps({"doc": doc, "response": item.target}) + "\n")
    return len(pairs)


def cggc_bundle(
    out: Path,
    data_dir: str | None = None,
    tasks: tuple[str, ...] = ("cggc_ood",),
    limit: int | None = None,
) -> Path:
    """One bundle of ``tasks`` (all their test items, or the first ``limit``); its path."""
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for task in tasks:
        predictions = out / f"{task}.jsonl"
        write_reference_predictions(task, predictions, data_dir, limit)
        results.append(score_predictions(out, task, predictions, MODEL_NAME))
    return submit_bundle(results, out)
