"""Model replies saved elsewhere, read back for rescoring (``conceptcomb score``).

Three formats, recognised from the file:

* lm-eval ``samples_<task>_<date>.jsonl`` (``--log_samples``): ``doc`` and ``resps``;
* an Inspect log (``.eval`` or ``.json``): each sample's ``metadata`` and output;
* a JSONL file of ``{"doc": {...}, "response": "..."}`` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.jsonl import read_jsonl

_LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_\d{4}-\d{2}-\d{2}T[\d\-.]+\.jsonl$")


@dataclass(frozen=True)
class Prediction:
    doc: dict[str, Any]
    response: str
    origin: str  # "file:line" or "log:sample id", for error messages


@dataclass(frozen=True)
class Predictions:
    items: list[Prediction]
    source_format: str  # "lm-eval samples" | "inspect log" | "jsonl"
    task: str | None  # the task the file says it belongs to, if it says


def read_predictions(path: Path) -> Predictions:
    if path.is_dir():
        raise DataFormatError(
            f"{path} is a folder: name the file, e.g. an lm-eval samples_<task>_<date>.jsonl, "
            'an Inspect .eval/.json log, or a JSONL of {"doc": ..., "response": ...} lines.'
        )
    if not path.is_file():
        raise DataFormatError(f"{path}: no such file.")
    if path.suffix in {".eval", ".json"}:
        return _read_inspect_log(path)
    rows = read_jsonl(path, empty="predictions")
    if rows and "resps" in rows[0][1]:
        return _read_lm_eval_samples(path, rows)
    return Predictions([_generic(path, line, row) for line, row in rows], "jsonl", None)


def _generic(path: Path, number: int, row: dict[str, Any]) -> Prediction:
    doc, response = row.get("doc"), row.get("response")
    if not isinstance(doc, dict):
        raise DataFormatError(f'{path}:{number}: field "doc" must be an object of item fields.')
    if not isinstance(response, str):
        raise DataFormatError(f'{path}:{number}: field "response" must be the raw model text.')
    return Prediction(doc, response, f"{path.name}:{number}")


def _read_lm_eval_samples(path: Path, rows: list[tuple[int, dict[str, Any]]]) -> Predictions:
    items = []
    for number, row in sorted(rows, key=lambda r: r[1].get("doc_id", r[0])):
        resps = row.get("resps")
        try:
            response = resps[0][0]  # first request, first repeat
        except (TypeError, IndexError, KeyError) as err:
            raise DataFormatError(f'{path}:{number}: field "resps" holds no reply.') from err
        if not isinstance(row.get("doc"), dict):
            raise DataFormatError(f'{path}:{number}: field "doc" is missing.')
        items.append(Prediction(row["doc"], str(response), f"{path.name}:{number}"))
    match = _LM_EVAL_SAMPLES.match(path.name)
    return Predictions(items, "lm-eval samples", match["task"] if match else None)


def open_inspect_log(path: Path) -> tuple[Any, str]:
    """(the Inspect log, the task it ran without its package prefix)."""
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path))
    except Exception as err:  # Inspect raises several types for unreadable logs
        raise DataFormatError(f"{path}: not a readable Inspect log ({err}).") from err
    return log, log.eval.task.rsplit("/", 1)[-1]


def _read_inspect_log(path: Path) -> Predictions:
    log, task = open_inspect_log(path)
    items = []
    for sample in log.samples or []:
        if sample.output is None:
            raise DataFormatError(f"{path}: sample {sample.id} has no model output.")
        items.append(
            Prediction(
                dict(sample.metadata or {}), sample.output.completion, f"{path.name}:{sample.id}"
            )
        )
    if not items:
        raise DataFormatError(f"{path}: the log holds no samples (was it written with samples?).")
    return Predictions(items, "inspect log", task)
