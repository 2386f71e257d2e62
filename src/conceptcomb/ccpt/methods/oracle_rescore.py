"""``conceptcomb score ccpt_<kind>_oracle``: the multi-oracle of N replies saved elsewhere.

Reads every reply of every item: an lm-eval ``samples_<task>_*.jsonl`` (``resps`` holds
the N repeats), an Inspect log (each sample's output choices), or a JSONL file of
``{"doc": {...}, "responses": ["...", ...]}`` lines.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.docs import chat_messages
from conceptcomb.ccpt.methods.oracle import OracleScore, oracle_metric_infos, score_oracle_replies
from conceptcomb.ccpt.modifiers import LEMMA, task_rule
from conceptcomb.ccpt.rescore import card_samples, scoring_options
from conceptcomb.ccpt.tasks import spec_by_name, task_version
from conceptcomb.common.contract import MetricInfo
from conceptcomb.common.errors import ConfigError, DataFormatError
from conceptcomb.common.jsonl import read_jsonl
from conceptcomb.common.predictions import open_inspect_log
from conceptcomb.common.results import MetricValue, ScoreReport
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import preflight_judge

Group = tuple[dict[str, Any], list[str], str]  # (doc, replies, origin)


def _jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = read_jsonl(path, empty="predictions")
    for number, row in rows:
        if not isinstance(row.get("doc"), dict):
            raise DataFormatError(f'{path}:{number}: expected an object with a "doc" object.')
    return rows


def _replies(value: Any, where: str, field: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise DataFormatError(f'{where}: "{field}" must be a non-empty list of replies.')
    return value


def _read_inspect(path: Path) -> tuple[list[Group], str]:
    log, task = open_inspect_log(path)
    groups = []
    for sample in log.samples or []:
        if sample.output is None or not sample.output.choices:
            raise DataFormatError(f"{path}: sample {sample.id} has no model output.")
        replies = [choice.message.text for choice in sample.output.choices]
        groups.append((dict(sample.metadata or {}), replies, f"{path.name}:{sample.id}"))
    return groups, task


def read_oracle_predictions(path: Path) -> tuple[list[Group], str, str | None]:
    """(groups of (doc, N replies, origin), source format, task named by the file)."""
    if not path.is_file():
        raise DataFormatError(f"{path}: no such file.")
    if path.suffix in {".eval", ".json"}:
        groups, task = _read_inspect(path)
        return groups, "inspect log", task
    rows = _jsonl(path)
    if "resps" in rows[0][1]:  # lm-eval: resps = [[reply_1, ..., reply_N]]
        rows.sort(key=lambda r: r[1].get("doc_id", r[0]))
        groups = [
            (row["doc"], _replies((row["resps"] or [None])[0], f"{path}:{n}", "resps"), f"{n}")
            for n, row in rows
        ]
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        return groups, "lm-eval samples", task if path.name.startswith("samples_") else None
    groups = [
        (row["doc"], _replies(row.get("responses"), f"{path}:{n}", "responses"), f"{n}")
        for n, row in rows
    ]
    return groups, "jsonl", None


def _aggregate(infos: list[MetricInfo], rows: list[dict[str, float]]) -> dict[str, MetricValue]:
    results = {}
    for info in infos:
        values = [row[info.name] for row in rows if not math.isnan(row.get(info.name, math.nan))]
        if info.aggregation == "sum":
            results[info.name] = MetricValue(float(sum(values)), None, len(values), False)
        elif values:
            sem = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
            value = statistics.fmean(values)
            results[info.name] = MetricValue(value, sem, len(values), info.higher_is_better)
    return results


def rescore_oracle(
    task: str,
    path: Path,
    settings: JudgeSettings,
    samples_output: Path | None = None,
    npc_modifier: str = LEMMA,
) -> ScoreReport:
    """Judge every saved reply and report the best-of-N metrics, as the oracle tasks do."""
    spec = spec_by_name(task)
    if not spec.oracle:
        raise ConfigError(f"{task} is not a multi-oracle task.")
    npc_modifier = task_rule(spec.kind, npc_modifier)
    groups, source_format, named = read_oracle_predictions(path)
    if named and named != task:
        raise ConfigError(f"{path} holds replies of {named}, not {task}.")
    items = [CcptItem.from_doc(doc, origin=origin) for doc, _, origin in groups]
    preflight_judge(settings)  # before the first item: a judge that cannot work stops here
    replies = [r for _, r, _ in groups]
    scores, usage = score_oracle_replies(spec, items, replies, settings, npc_modifier)
    if samples_output is not None:
        _write_samples(samples_output, task, groups, scores)
    return ScoreReport(
        task=task,
        version=task_version(),
        filter_name="oracle",
        metrics=_aggregate(oracle_metric_infos(spec), [score.metrics for score in scores]),
        predictions=str(path),
        source_format=source_format,
        n_items=len(items),
        usage=usage.as_dict() if usage else None,
        notes=["multi-oracle: best of the N replies per item, an upper bound (Table 3, gray)."],
        options=scoring_options(spec, npc_modifier),
        n_total=card_samples(task),
    )


def _write_samples(path: Path, task: str, groups: list[Group], scores: list[OracleScore]) -> None:
    """Per item: the core's record, the N raw replies, the item's fields and the chat the
    task would have sent it (each reply answers the same prompt)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for (doc, replies, _), score in zip(groups, scores, strict=True):
            line = {**score.to_json(), "responses": replies, "doc": doc}
            line["messages"] = chat_messages(task, doc)
            handle.write(json.dumps(line) + "\n")
