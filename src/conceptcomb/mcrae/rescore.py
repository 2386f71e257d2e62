"""Score saved outputs: old ESSLLI 2008 system outputs and lm-eval sample logs.

``rescore(task, predictions)`` reads either

* the 2008 format, one ``concept property score`` triple per line, tab- or space-separated
  (``dog bark 0.93``); each concept's properties are ranked by score, highest first (equal
  scores keep the file's order); a line with two fields (``dog bark``) is ranked by its
  position. Concepts the file lacks score 0, as the 2008 average is over all concepts of the
  task; lines for concepts outside the task are counted and skipped. Or
* an lm-eval log ``samples_<task>_*.jsonl`` (``--log_samples``): each line's ``doc`` names
  the concept and ``resps`` holds the reply, parsed as the task parses it. The average is
  over the concepts in the log (as lm-eval's, also under ``--limit``).

It returns the metrics the tasks report (`metrics.metric_infos`), averaged over concepts,
plus ``concepts`` (how many were averaged), ``concepts_missing`` and ``unknown_lines``.
"""

from __future__ import annotations

import logging
import math
import os
import re
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.jsonl import read_jsonl
from conceptcomb.common.results import MetricValue, ScoreReport
from conceptcomb.mcrae.answers import parse_properties
from conceptcomb.mcrae.data import ESSLLI_TO_MCRAE, TERMS_OF_USE
from conceptcomb.mcrae.docs import load_golds
from conceptcomb.mcrae.gold.features import ConceptGold
from conceptcomb.mcrae.metrics import concept_metrics, mean_metrics, metric_infos
from conceptcomb.mcrae.tasks import spec_by_name, task_version

log = logging.getLogger("conceptcomb")


def rescore(
    task: str,
    predictions: Path,
    data_dir: str | os.PathLike[str] | None = None,
    tie_rule: str | None = None,
    senses: str | None = None,
) -> dict[str, float]:
    """Metrics of a saved output file (see the module docstring)."""
    spec = spec_by_name(task)
    path = Path(predictions)
    if not path.is_file():
        raise DataFormatError(f"{path}: no such file (expected predictions for {task}).")
    if path.suffix == ".jsonl":
        return _rescore_samples(spec.name, path, data_dir, tie_rule, senses)
    golds = load_golds(spec, data_dir, tie_rule, senses)
    ranked, unknown = read_triples(path, golds)
    per_concept = [concept_metrics(gold, ranked.get(gold.concept, [])) for gold in golds]
    missing = sum(gold.concept not in ranked for gold in golds)
    if missing:
        log.warning("%s: %d of %d concepts have no properties: 0", path, missing, len(golds))
    return {
        **mean_metrics(per_concept),
        "concepts": float(len(golds)),
        "concepts_missing": float(missing),
        "unknown_lines": float(unknown),
    }


def _concept_keys(gold: ConceptGold) -> set[str]:
    """Names a file may use for a concept: ours, McRae's, with spaces for underscores."""
    names = {gold.concept, gold.mcrae_concept}
    names |= {name.replace("_", " ") for name in names}
    return {name.lower() for name in names}


def read_triples(path: Path, golds: list[ConceptGold]) -> tuple[dict[str, list[str]], int]:
    """Concept -> its properties ranked by score; and the number of lines for other concepts."""
    by_key = {key: gold.concept for gold in golds for key in _concept_keys(gold)}
    for noun, name in ESSLLI_TO_MCRAE.items():  # "onion" also names McRae's "onions"
        if name in by_key:
            by_key.setdefault(noun, by_key[name])
    scored: dict[str, list[tuple[float, int, str]]] = {}
    unknown = 0
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise DataFormatError(f"{path}: not UTF-8 text ({err}).") from err
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        concept, prop, score = _split_line(path, number, line)
        key = by_key.get(concept.lower())
        if key is None:
            unknown += 1
            continue
        order = -score if score is not None else 0.0
        scored.setdefault(key, []).append((order, number, prop))
    ranked = {concept: [prop for _, _, prop in sorted(rows)] for concept, rows in scored.items()}
    return ranked, unknown


def _split_line(path: Path, number: int, line: str) -> tuple[str, str, float | None]:
    fields = line.rstrip("\r\n").split("\t") if "\t" in line else line.split()
    fields = [field.strip() for field in fields if field.strip()]
    if len(fields) == 2:
        return fields[0], fields[1], None
    if len(fields) < 2:
        raise DataFormatError(
            f"{path}: line {number} has {len(fields)} field(s); expected 'concept property "
            f"score' (tab- or space-separated)."
        )
    concept, *middle, last = fields
    try:
        score = float(last)
    except ValueError as err:
        raise DataFormatError(
            f"{path}: line {number}: the score {last!r} is not a number (expected "
            f"'concept property score')."
        ) from err
    if math.isnan(score):
        raise DataFormatError(f"{path}: line {number}: the score is NaN.")
    return concept, " ".join(middle), score


_SAMPLES_NAME = re.compile(r"samples_(?P<task>.+?)_\d{4}-\d{2}-\d{2}T.*\.jsonl$")


def _rescore_samples(
    task: str,
    path: Path,
    data_dir: str | os.PathLike[str] | None,
    tie_rule: str | None,
    senses: str | None,
) -> dict[str, float]:
    named = _SAMPLES_NAME.match(path.name)
    if named and named.group("task") != task:
        raise DataFormatError(f"{path}: holds samples of {named.group('task')}, not {task}.")
    records = _read_samples(path)
    first_doc = records[0]["doc"]
    golds = load_golds(
        spec_by_name(task),
        data_dir,
        tie_rule or first_doc.get("tie_rule"),
        senses or first_doc.get("senses"),
    )
    by_concept = {gold.concept: gold for gold in golds}
    per_concept = []
    for index, record in enumerate(records, start=1):
        concept = str(record["doc"].get("concept", ""))
        if concept not in by_concept:
            raise DataFormatError(f"{path}: line {index}: concept {concept!r} is not in {task}.")
        properties = parse_properties(_reply(record))
        per_concept.append(concept_metrics(by_concept[concept], properties))
    return {
        **mean_metrics(per_concept),
        "concepts": float(len(per_concept)),
        "concepts_missing": float(len(golds) - len({r["doc"]["concept"] for r in records})),
        "unknown_lines": 0.0,
    }


def _read_samples(path: Path) -> list[dict[str, Any]]:
    records = []
    for number, record in read_jsonl(path, empty="predictions"):
        if not isinstance(record.get("doc"), dict):
            raise DataFormatError(f"{path}: line {number} has no 'doc' (an lm-eval sample?).")
        records.append(record)
    return records


def _reply(record: dict[str, Any]) -> str:
    """The raw reply of an lm-eval sample: ``resps`` is [[reply]]."""
    resps = record.get("resps")
    while isinstance(resps, list) and resps:
        resps = resps[0]
    return resps if isinstance(resps, str) else ""


def score_report(task: str, predictions: Path) -> ScoreReport:
    """`rescore` as the `conceptcomb score` command prints and writes it."""
    values = rescore(task, predictions)
    infos = {info.name: info for info in metric_infos()}
    concepts = int(values["concepts"])
    metrics = {
        name: MetricValue(value, None, concepts, infos[name].higher_is_better)
        for name, value in values.items()
        if name in infos
    }
    notes = [
        f"{int(values.get(key, 0))} {label}"
        for key, label in (("concepts_missing", "concepts without properties (scored 0)"),
                           ("unknown_lines", "lines for concepts outside the task, skipped"))
        if values.get(key)
    ]  # fmt: skip
    return ScoreReport(
        task=task,
        version=task_version(),
        filter_name="none",
        metrics=metrics,
        predictions=str(predictions),
        source_format="lm-eval samples" if predictions.suffix == ".jsonl" else "ESSLLI 2008",
        n_items=concepts,
        notes=[*notes, TERMS_OF_USE],
    )
