"""Each run's per-item scores, from whatever holds them, in one shape: `TaskItems`.

`conceptcomb compare` reads what ``submit-bundle`` reads and what it writes, with the readers
the leaderboard's bundles and exports already have:

* this package's tasks: leaderboard bundles (their per-item evidence), ``export --to eee``
  folders (`conceptcomb.leaderboard.exports.read_eee` puts the bundle together again), and
  lm-eval output folders, Inspect logs and ``conceptcomb score`` outputs, made into bundles as
  ``submit-bundle`` makes them (`conceptcomb.leaderboard.bundles.bundle.build_bundle`). Their
  items are paired by their stable id (the pinned dataset file's sha256 and the item's key),
  the same in both frameworks, and carry their unit (`conceptcomb.common.evidence.Clustering`);
* any other task: lm-eval's ``samples_<task>_*.jsonl`` (``--log_samples``: each sample's
  metric values by ``doc_id``, the aggregation the task's config names for each metric) and
  Inspect logs (each sample's scores by sample id, its epochs averaged first, as Inspect
  does). ``--cluster FIELD`` names the doc field or sample metadata key their items share.

What must be equal for two runs of a task to be paired is in ``fingerprint`` (version,
data, prompt templates and options) and ``prompt_format`` (chat or text, demonstrations as
turns or in one message); items whose data differ (lm-eval's ``doc_hash``, Inspect's input)
are not paired either.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from conceptcomb.benchmarks import evidence_adapter, get, known_tasks
from conceptcomb.common import results_reader
from conceptcomb.common.contract import Scale
from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.evidence import lm_eval_samples_path
from conceptcomb.common.runs import INSPECT, LM_EVAL, RESCORED, Run
from conceptcomb.leaderboard.statistics import corpus
from conceptcomb.leaderboard.statistics.corpus import corpus_metrics
from conceptcomb.scorers.judge_identity import JudgeRecord, records_of

# Options that say where a run looked or whom it asked, not what the task is. The judge is
# part of the result, but compared as what determines its ratings (`TaskItems.judge`, the
# records of `conceptcomb.scorers.judge_identity`), not as the options that named it: the same
# judge behind two endpoints is one judge; a judge-dependent metric is paired only across
# runs of the same judge (`conceptcomb.leaderboard.compare.comparison`).
_NOT_THE_TASK = ("judge", "cache", "data_dir", "spice_jars", "grader")
# lm-eval runners that send chat messages without a local chat template.
_CHAT_APIS = ("chat-completions", "chat")


@dataclass
class TaskItems:
    """One run's per-item scores of one task."""

    task: str
    framework: str
    model: str  # the model's label
    source: str  # the file the scores come from
    version: str | None
    ids: list[str]
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # mean metrics, by item
    corpus: dict[str, Any] = field(default_factory=dict)  # corpus metrics (`corpus`), by item
    units: list[str] | None = None  # each item's unit, where items share units
    unit: str | None = None  # what the unit is ("noun phrase")
    fingerprint: dict[str, str] = field(default_factory=dict)
    prompt_format: str | None = None  # None: not known (replies scored after the run)
    demonstrations: int | None = None  # shots, where the run records them
    data_hashes: dict[str, str] = field(default_factory=dict)  # item id -> its data's hash
    skipped: dict[str, str] = field(default_factory=dict)  # metric -> why not compared
    benchmark: str | None = None  # ours; None for another package's task
    judged: set[str] = field(default_factory=set)  # metrics a judge's ratings decide
    # What the run was run with, readable (options, demonstrations, generation settings,
    # seeds): two runs of a task that differ here are variants, named by what differs.
    settings: dict[str, str] = field(default_factory=dict)
    judge: list[JudgeRecord] = field(default_factory=list)  # its judge(s); []: not recorded
    replies: list[str] | None = None  # each item's reply, as ``ids`` (None: not recorded)
    # What the explorer shows of each item (`conceptcomb.leaderboard.explore`), by id: a
    # bundle's evidence item, or the reply, reference and prompt of another package's task.
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    options: dict[str, Any] = field(default_factory=dict)  # the task's options, as recorded

    @property
    def metrics(self) -> list[str]:
        return [*self.scores, *self.corpus]

    @cached_property
    def unit_codes(self) -> np.ndarray | None:
        """The units as integer codes (computed once: every comparison selects from them)."""
        from conceptcomb.leaderboard.statistics.stats import unit_codes

        return None if self.units is None else unit_codes(self.units)


@dataclass
class Found:
    """What one RUN argument holds."""

    items: list[TaskItems] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _task_options(options: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value
        for key, value in options.items()
        if not any(part in key for part in _NOT_THE_TASK)
    }


def _text(value: Any) -> str:
    """A setting's value as a line shows it (a string as it is, others as JSON)."""
    if isinstance(value, str):
        if not value or value != value.strip():
            return json.dumps(value)  # "" and spaces shown as such
        return value if len(value) <= 60 else json.dumps(value[:57] + "...")
    return json.dumps(value, sort_keys=True, default=str)


# Generation settings that do not change what a model is asked or how it answers.
_NOT_GENERATION = ("until", "batch_size", "limit", "max_connections", "num_concurrent")


def generation_settings(generation: dict[str, Any], task: str) -> dict[str, str]:
    """A run's generation settings for one task (lm-eval's ``--gen_kwargs``, its task's
    generation_kwargs and ``--seed``; Inspect's generate config), readable."""
    found: dict[str, Any] = {}
    task_kwargs = (generation.get("task_generation_kwargs") or {}).get(task) or {}
    for source in (task_kwargs, generation.get("gen_kwargs") or {}):
        if isinstance(source, dict):
            found.update(source)
    config = generation.get("generate_config")
    if isinstance(config, dict):
        found.update({k: v for k, v in config.items() if v is not None})
    if generation.get("random_seed") is not None:
        found["sampling seed"] = generation["random_seed"]
    return {k: _text(v) for k, v in found.items() if k not in _NOT_GENERATION}


def option_settings(options: dict[str, Any]) -> dict[str, str]:
    """A task's options (judge, cache and data folder aside), readable."""
    return {key: _text(value) for key, value in _task_options(options).items()}


# --- prompts --------------------------------------------------------------------------------
CHAT_TURNS = "chat, demonstrations as user/assistant turns"
CHAT_ONE = "chat, demonstrations in one user message"
TEXT = "plain text (no chat template)"


def prompt_format(framework: str, generation: dict[str, Any], provider: str = "") -> str | None:
    """How the run's prompts were laid out: an lm-eval run's chat template and
    ``--fewshot_as_multiturn``; Inspect sends chat messages, demonstrations as turns."""
    if framework == INSPECT:
        return CHAT_TURNS
    if framework != LM_EVAL:
        return None
    chat = generation.get("chat_template_sha") is not None or provider.endswith(_CHAT_APIS)
    if not chat:
        return TEXT
    return CHAT_TURNS if generation.get("fewshot_as_multiturn") else CHAT_ONE


# --- scales ---------------------------------------------------------------------------------
# A metric of another package's task whose item values all lie in 0-1 is taken to be 0-1.
ITEM_VALUES = "its items' values"


def metric_scale(items: TaskItems, metric: str) -> Scale | None:
    """The values a metric can take: its card's scale for this package's tasks; for another
    package's, 0-1 where every item's value lies in it; else None (not known)."""
    if items.benchmark:
        infos = {info.name: info for info in get(items.benchmark).tasks().get(items.task, [])}
        scale = infos[metric].scale if metric in infos else None
        return scale if scale and scale.low is not None and scale.high is not None else None
    values = items.scores.get(metric)
    if values is None:
        return None
    finite = values[np.isfinite(values)]
    if finite.size and finite.min() >= 0.0 and finite.max() <= 1.0:
        return Scale(ITEM_VALUES, 0.0, 1.0)
    return None


# --- this package's tasks: bundles ----------------------------------------------------------
def _units(items: list[dict[str, Any]]) -> list[str] | None:
    units = [item.get("unit") for item in items]
    return [str(u) for u in units] if units and all(isinstance(u, str) for u in units) else None


def bundle_task_items(
    bundle: dict[str, Any],
    record: dict[str, Any],
    items: list[dict[str, Any]],
    source: str,
    data_dir: str | None = None,
) -> TaskItems:
    """A bundle task's per-item scores: its evidence items' ids, scores and units."""
    task, benchmark = str(record["task"]), str(record["benchmark"])
    infos = {info.name: info for info in get(benchmark).tasks().get(task, [])}
    framework = str(bundle["framework"]["name"])
    model = bundle.get("model") or {}
    prompts = record.get("prompts") or {}
    datasets = [
        (d.get("key"), {name: f.get("sha256") for name, f in (d.get("files") or {}).items()})
        for d in record.get("datasets") or []
        if isinstance(d, dict)
    ]
    found = TaskItems(
        task=task,
        framework=framework,
        model=str(model.get("label") or model.get("name") or source),
        source=source,
        version=None if record.get("version") is None else str(record["version"]),
        ids=[str(item.get("id") or f"#{n}") for n, item in enumerate(items)],
        benchmark=benchmark,
        prompt_format=prompt_format(
            framework, bundle.get("generation") or {}, str(model.get("provider") or "")
        ),
        demonstrations=record.get("num_fewshot"),
        units=_units(items),
        replies=[reply_of(item) for item in items],
    )
    if get(benchmark).judged(task):
        found.judged = {name for name, info in infos.items() if info.judged}
        found.judge = records_of(record.get("judge"))
    adapter = evidence_adapter(benchmark)
    found.unit = getattr(adapter, "UNIT", None) if found.units else None
    found.evidence = dict(zip(found.ids, items, strict=True))
    found.options = dict(record.get("options") or {})
    found.fingerprint = {
        "task version": str(found.version),
        "pinned data": _hash(sorted(datasets, key=str)),
        "prompt templates": str(prompts.get("templates_sha256")),
    }
    found.fingerprint.update(
        {f"option {k}": _hash(v) for k, v in _task_options(record.get("options") or {}).items()}
    )
    found.settings = option_settings(record.get("options") or {})
    if record.get("num_fewshot") is not None:
        found.settings["demonstrations"] = str(record["num_fewshot"])
    found.settings.update(generation_settings(bundle.get("generation") or {}, task))
    wanted_corpus = []
    means = [name for name, info in infos.items() if info.aggregation == "mean"]
    table = np.full((len(items), len(means)), np.nan)
    column = {name: k for k, name in enumerate(means)}
    for row, item in enumerate(items):  # one pass over the items, every metric at once
        scores = item.get("scores")
        for name, value in scores.items() if isinstance(scores, dict) else ():
            if name in column:
                table[row, column[name]] = _number(value)
    for name, info in infos.items():
        if info.aggregation == "mean":
            values = table[:, column[name]]
            if np.isfinite(values).any():
                found.scores[name] = values.copy()
        elif info.aggregation == "corpus" and _claimed(record, name):
            wanted_corpus.append(name)
    found.corpus, found.skipped = corpus_metrics(benchmark, record, items, wanted_corpus, data_dir)
    return found


def reply_of(item: dict[str, Any]) -> str:
    """An evidence item's reply (the first of several: CCPT's oracle samples N), else its
    parsed answer; "" where it keeps none (a log-likelihood task's)."""
    replies = item.get("replies")
    for value in (item.get("reply"), replies[0] if isinstance(replies, list) and replies else None,
                  item.get("answer")):  # fmt: skip
        if isinstance(value, str):
            return value
        if value is not None:
            return json.dumps(value, ensure_ascii=False)
    return ""


def _claimed(record: dict[str, Any], metric: str) -> bool:
    entry = (record.get("metrics") or {}).get(metric)
    return isinstance(entry, dict) and isinstance(entry.get("value"), int | float)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def bundle_items(
    bundle: dict[str, Any], source: str, data_dir: str | None = None
) -> tuple[list[TaskItems], list[str]]:
    """Every task of a bundle with per-item evidence, and a line for each without."""
    from conceptcomb.leaderboard.bundles.safe_json import Refused, decode_evidence

    found, notes = [], []
    for index, record in enumerate(bundle.get("tasks") or []):
        if not isinstance(record, dict) or not isinstance(record.get("evidence", {}), dict):
            notes.append(f"{source}: tasks[{index}]: not a task record, left out")
            continue
        task = record.get("task")
        evidence = record.get("evidence") or {}
        if task not in known_tasks():
            notes.append(f"{source}: {task}: not a task of this conceptcomb, left out")
            continue
        if "data" not in evidence:
            why = evidence.get("missing") or "no per-item evidence"
            notes.append(f"{source}: {task}: no per-item scores to compare ({why})")
            continue
        try:
            items = decode_evidence(evidence, f"{source}: tasks[{index}].evidence")
        except Refused as err:
            notes.append(f"{source}: {task}: its evidence cannot be read ({err})")
            continue
        try:
            found.append(bundle_task_items(bundle, record, items, source, data_dir))
        except (KeyError, TypeError, ValueError, AttributeError) as err:  # from anyone
            notes.append(f"{source}: {task}: a malformed record ({type(err).__name__}: {err})")
    return found, notes


# --- another package's tasks: lm-eval -------------------------------------------------------
def _aggregations(config: dict[str, Any]) -> dict[str, str]:
    """Metric -> the aggregation the task's config names (a registered name)."""
    found = {}
    for entry in config.get("metric_list") or []:
        if isinstance(entry, dict) and entry.get("metric"):
            found[str(entry["metric"])] = str(entry.get("aggregation") or "")
    return found


def _aggregation(name: str, metric: str) -> tuple[str, Callable | None]:
    """("mean", None) for a mean, ("corpus", function) for another registered aggregation,
    ("unknown", None) otherwise."""
    from lm_eval.api import registry

    function = None
    try:
        function = registry.get_aggregation(name) if name else None
        if function is None:
            function = registry.get_metric_aggregation(metric)
    except Exception:  # a name lm-eval does not know (a custom !function)
        function = None
    if function is None:
        return "unknown", None
    if getattr(function, "__name__", "") in ("mean", "nanmean"):
        return "mean", None
    return "corpus", function


def lm_eval_items(path: Path, run: Run, cluster: str | None) -> tuple[list[TaskItems], list[str]]:
    """The tasks of an lm-eval results file that are not ours, from its samples files."""
    data = json.loads(path.read_text(encoding="utf-8"))
    configs, found, notes = data.get("configs") or {}, [], []
    groups = set(data.get("group_subtasks") or {}) | set(data.get("groups") or {})
    fmt = prompt_format(LM_EVAL, run.generation, run.model.provider)
    for name, task in run.tasks.items():
        if name in groups:
            continue  # a group's results aggregate its tasks' (compared one by one)
        samples = lm_eval_samples_path(path, name)
        if samples is None:
            notes.append(f"{path}: {name}: lm-eval ran without --log_samples: no per-item scores")
            continue
        config = dict(configs.get(name) or {})
        items = _lm_eval_task(name, samples, config, cluster)
        items.framework, items.model, items.source = LM_EVAL, run.model.label, str(path)
        items.version, items.prompt_format = task.version, fmt
        items.demonstrations = task.num_fewshot
        metadata = config.pop("metadata", None) or {}
        # Generation settings and the demonstrations' number are settings (named when they
        # differ), not the task's config: two temperatures are variants of one prompt.
        task_kwargs = config.pop("generation_kwargs", None) or {}
        config.pop("num_fewshot", None)
        items.fingerprint = {"task version": str(task.version), "task config": _hash(config)}
        items.settings = option_settings(
            {k: v for k, v in metadata.items() if k != "version"}
            if isinstance(metadata, dict)
            else {}
        )
        if task.num_fewshot is not None:
            items.settings["demonstrations"] = str(task.num_fewshot)
        generation = {**run.generation, "task_generation_kwargs": {name: task_kwargs}}
        items.settings.update(generation_settings(generation, name))
        found.append(items)
    return found, notes


def _lm_eval_task(
    name: str, samples: Path, config: dict[str, Any], cluster: str | None
) -> TaskItems:
    rows = list(_json_lines(samples))
    filters = sorted({str(row.get("filter", "none")) for row in rows})
    by_doc: dict[str, dict[str, Any]] = {}
    docs: dict[str, dict[str, Any]] = {}
    hashes: dict[str, str] = {}
    replies: dict[str, str] = {}
    shown: dict[str, dict[str, Any]] = {}
    for row in rows:
        doc_id = f"doc {row.get('doc_id')}"
        docs.setdefault(doc_id, row.get("doc") or {})
        replies.setdefault(doc_id, _lm_eval_reply(row))
        shown.setdefault(doc_id, _lm_eval_shown(row))
        hashes.setdefault(doc_id, str(row.get("doc_hash") or _hash(row.get("doc"))))
        suffix = "" if len(filters) == 1 else f",{row.get('filter', 'none')}"
        for metric in row.get("metrics") or []:
            by_doc.setdefault(doc_id, {})[f"{metric}{suffix}"] = (metric, row.get(metric))
    ids = sorted(by_doc, key=lambda d: (len(d), d))
    items = TaskItems(name, LM_EVAL, "", "", None, ids, data_hashes=hashes)
    items.replies = [replies[d] for d in ids]
    items.evidence = shown
    names = list(dict.fromkeys(key for doc in by_doc.values() for key in doc))
    aggregations = _aggregations(config)
    for key in names:
        metric = key.split(",")[0]
        values = [by_doc[d].get(key, (metric, None))[1] for d in ids]
        kind, function = _aggregation(aggregations.get(metric, ""), metric)
        if kind == "mean":
            items.scores[key] = np.asarray([_number(v) for v in values], dtype=float)
        elif kind == "corpus" and function is not None:
            items.corpus[key] = corpus.Looped(values, function)
        else:
            items.skipped[key] = (
                f"its aggregation {aggregations.get(metric)!r} is not one lm-eval registers: "
                "it cannot be computed again on resamples here"
            )
    if cluster:
        units = [docs[d].get(cluster) for d in ids]
        if all(u is not None for u in units):
            items.units, items.unit = [str(u) for u in units], cluster
    return items


def _lm_eval_reply(row: dict[str, Any]) -> str:
    """A sample's first reply as its filter left it (``filtered_resps``; else ``resps``),
    nested lists unwrapped; a log-likelihood task's pair as JSON."""
    value: Any = row.get("filtered_resps") or row.get("resps") or ""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _lm_eval_shown(row: dict[str, Any]) -> dict[str, Any]:
    """What the explorer shows of an lm-eval sample: its (filtered) reply, target and the
    arguments it sent."""
    reply = row.get("filtered_resps")
    while isinstance(reply, list) and len(reply) == 1:
        reply = reply[0]
    return {
        "reply": reply if isinstance(reply, str) else json.dumps(reply, default=str),
        "references": [str(row.get("target"))] if row.get("target") is not None else [],
        "prompt_text": json.dumps(row.get("arguments"), default=str, ensure_ascii=False),
    }


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """A JSON-lines file, one object per line (a line that is not: DataFormatError)."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise DataFormatError(f"{path}:{number}: not a JSON line ({err}).") from err


# --- another package's tasks: Inspect -------------------------------------------------------
def inspect_items(
    path: Path, run: Run, task: str, cluster: str | None
) -> tuple[list[TaskItems], list[str]]:
    """An Inspect log of a task that is not ours: its samples' scores, epochs averaged."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    log = read_eval_log(str(path))
    spec = log.eval
    if log.status != "success" or not log.samples:
        return [], [f"{path}: {task}: the log's status is {log.status!r}, or it holds no samples"]
    to_float = value_to_float()
    values: dict[str, dict[str, list[float]]] = {}
    shown: dict[str, dict[str, Any]] = {}
    docs: dict[str, Any] = {}
    hashes: dict[str, str] = {}
    replies: dict[str, str] = {}
    for sample in log.samples:
        sample_id = f"sample {sample.id}"
        docs.setdefault(sample_id, sample.metadata or {})
        replies.setdefault(sample_id, sample.output.completion if sample.output else "")
        hashes.setdefault(sample_id, _hash([sample.input, sample.target]))
        shown.setdefault(sample_id, _inspect_shown(sample))
        several = len(sample.scores or {}) > 1
        for scorer, score in (sample.scores or {}).items():
            parts = score.value if isinstance(score.value, dict) else {scorer: score.value}
            for key, value in parts.items():
                metric = f"{scorer}/{key}" if several and isinstance(score.value, dict) else key
                number = _number(to_float(value)) if value is not None else math.nan
                values.setdefault(metric, {}).setdefault(sample_id, []).append(number)
    ids = sorted({i for metric in values.values() for i in metric}, key=lambda d: (len(d), d))
    items = TaskItems(task, INSPECT, run.model.label, str(path), None, ids, data_hashes=hashes)
    items.replies = [replies.get(i, "") for i in ids]
    items.evidence = shown
    items.version = None if spec.task_version is None else str(spec.task_version)
    for metric, by_sample in values.items():
        items.scores[metric] = np.asarray(
            [_epoch_mean(by_sample.get(i, [])) for i in ids], dtype=float
        )
    plan = [[step.solver, step.params] for step in log.plan.steps] if log.plan else []
    items.prompt_format = CHAT_TURNS
    arguments = _task_options(dict(spec.task_args or {}))
    items.fingerprint = {
        "task version": str(items.version),
        "solvers": _hash(plan),
        **{f"option {k}": _hash(v) for k, v in arguments.items()},
    }
    items.settings = option_settings(arguments)
    config = (
        spec.model_generate_config.model_dump(exclude_none=True)
        if spec.model_generate_config
        else {}
    )
    items.settings.update(generation_settings({"generate_config": config}, task))
    if spec.config and spec.config.epochs and spec.config.epochs > 1:
        items.settings["epochs"] = str(spec.config.epochs)
    if cluster:
        units = [docs[i].get(cluster) if isinstance(docs[i], dict) else None for i in ids]
        if all(u is not None for u in units):
            items.units, items.unit = [str(u) for u in units], cluster
    return [items], []


def _inspect_shown(sample: Any) -> dict[str, Any]:
    """What the explorer shows of an Inspect sample: its completion, target and input."""
    target = sample.target if isinstance(sample.target, list) else [sample.target]
    text = sample.input
    if not isinstance(text, str):
        text = "\n\n".join(f"{m.role}: {m.text}" for m in text)
    reply = sample.output.completion if sample.output is not None else ""
    return {"reply": reply, "references": [str(t) for t in target], "prompt_text": text}


def _epochs_as_items(path: Path, bundle: dict[str, Any]) -> None:
    """An Inspect log of one of our tasks run with several epochs (whose bundle keeps no
    evidence: one reply per item): its samples' scores, epochs averaged per sample, made
    into the evidence items compare reads (ids, scores, units; no replies)."""
    from conceptcomb.common.evidence import encode, full_inspect_log, score_values
    from conceptcomb.leaderboard.bundles.bundle import _file_shas

    for record in bundle.get("tasks") or []:
        if "epochs" not in str((record.get("evidence") or {}).get("missing", "")):
            continue
        adapter = evidence_adapter(str(record["benchmark"]))
        if adapter is None:
            continue
        task, shas = str(record["task"]), _file_shas(record.get("datasets") or [])
        by_id: dict[str, dict[str, Any]] = {}
        for sample in full_inspect_log(str(path)).samples or []:
            doc = dict(sample.metadata or {})
            key = adapter.item_key(task, doc)
            sha = shas.get(key.split(":", 1)[0]) if key else None
            item = by_id.setdefault(
                f"{sha}:{key}" if sha else f"sample {sample.id}", {"epochs": []}
            )
            unit = adapter.unit(task, doc) if hasattr(adapter, "unit") else None
            if unit is not None:
                item["unit"] = unit
            score = next(iter((sample.scores or {}).values()), None)
            item["epochs"].append(score_values(score) if score is not None else {})
        items = []
        for item_id, item in by_id.items():
            names = {name for epoch in item["epochs"] for name in epoch}
            means = {
                name: _epoch_mean([_number(epoch.get(name)) for epoch in item["epochs"]])
                for name in names
            }
            scores = {name: value for name, value in means.items() if math.isfinite(value)}
            unit = {"unit": item["unit"]} if "unit" in item else {}
            items.append({"id": item_id, "scores": scores, **unit})
        record["evidence"] = encode(items)


def _epoch_mean(values: list[float]) -> float:
    """A sample's epochs averaged (Inspect's reducer ``mean``); NaN epochs left out."""
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


# --- a RUN argument ------------------------------------------------------------------------
def _is_bundle(path: Path) -> bool:
    return path.name.endswith(".bundle.json")


def _ours(run: Run) -> Run:
    """The run with our tasks only."""
    mine = Run(run.framework, run.framework_version, run.model, sources=list(run.sources))
    mine.generation, mine.notes = run.generation, list(run.notes)
    mine.tasks = {name: t for name, t in run.tasks.items() if name in known_tasks()}
    return mine


def read_argument(path: Path, data_dir: str | None = None, cluster: str | None = None) -> Found:
    """Everything one RUN argument (a file or a folder) holds."""
    from conceptcomb.leaderboard.exports.read_eee import find_inputs, read_exports

    if not path.exists():
        raise DataFormatError(f"{path}: no such file or folder.")
    found = Found()
    inputs = find_inputs([path])
    if path.is_file() and not _is_bundle(path):  # find_inputs takes any other file for one
        inputs.bundles = []
    for bundle_path in inputs.bundles:
        _read_bundle(bundle_path, data_dir, found)
    exports, loose = read_exports(inputs.aggregates)
    found.notes += loose
    for export in exports:
        if export.bundle is None:
            found.notes += export.problems
            continue
        items, notes = bundle_items(export.bundle, export.label, data_dir)
        found.items += items
        found.notes += notes
    if path.is_file() and (path in inputs.bundles or path in inputs.aggregates):
        return found
    skip = {*inputs.bundles, *inputs.aggregates}
    for file in results_reader.result_files(path):
        if file in skip or _is_bundle(file):
            continue
        _read_results(file, path, data_dir, cluster, found)
    return found


def _read_bundle(path: Path, data_dir: str | None, found: Found) -> None:
    from conceptcomb.leaderboard.bundles.bundle import content_sha256
    from conceptcomb.leaderboard.bundles.safe_json import Refused, read_bundle_json

    try:
        bundle = read_bundle_json(path)
    except (OSError, Refused) as err:
        found.notes.append(f"{path}: not a readable bundle ({err}), left out")
        return
    if not isinstance(bundle, dict) or not isinstance(bundle.get("tasks"), list):
        found.notes.append(f"{path}: not a conceptcomb bundle, left out")
        return
    if bundle.get("content_sha256") != content_sha256(bundle):
        found.notes.append(
            f"{path}: edited after `conceptcomb submit-bundle` wrote it (its content_sha256 "
            "does not match), left out: `conceptcomb validate-bundle` says more"
        )
        return
    items, notes = bundle_items(bundle, str(path), data_dir)
    found.items += items
    found.notes += notes


def _read_results(
    file: Path, argument: Path, data_dir: str | None, cluster: str | None, found: Found
) -> None:
    from conceptcomb.leaderboard.bundles.bundle import build_bundle

    try:
        (run,) = results_reader.read_files([file], results_reader.any_task)
    except ValueError:
        return  # not a results file, in a folder: passed over (read_files says so for a file)
    except DataFormatError:
        if file == argument:
            raise
        return
    found.notes += run.notes
    mine = _ours(run)
    if mine.tasks:
        bundle = build_bundle(mine, intervals=False)  # compare reads the items
        if run.framework == INSPECT:
            _epochs_as_items(file, bundle)
        items, notes = bundle_items(bundle, str(file), data_dir)
        found.items += items
        found.notes += notes
    foreign = Run(run.framework, run.framework_version, run.model, sources=run.sources)
    foreign.generation = run.generation
    foreign.tasks = {n: t for n, t in run.tasks.items() if n not in known_tasks()}
    if not foreign.tasks:
        return
    if run.framework == LM_EVAL:
        items, notes = lm_eval_items(file, foreign, cluster)
    elif run.framework == INSPECT:
        items, notes = inspect_items(file, foreign, next(iter(foreign.tasks)), cluster)
    else:
        items, notes = [], [f"{file}: {RESCORED} output of a task that is not ours"]
    found.items += items
    found.notes += notes
