"""Every Eval Ever (EEE, schema 0.3.0) files from leaderboard bundles, and bundles back.

``conceptcomb export --to eee`` writes, per task of a bundle, the datastore's pair of files
``data/<benchmark>/<developer>/<model>/<uuid>.json`` (the aggregate: model, library, source,
one evaluation result per metric with its range, direction, standard error and, for metrics
a judge decides, ``llm_scoring`` with the judge and its prompt text) and
``<uuid>_samples.jsonl`` (one instance row per item and per-item metric: the prompt sent,
the raw replies, the parsed answers, the item's score and, in ``metadata``, everything the
bundle keeps about the item, each value a JSON text as the schema wants strings).

Nothing the bundle knows is lost: the aggregate carries the bundle's own record (its header
and the task's record, ``conceptcomb_bundle`` / ``conceptcomb_task``) and the rows the items,
so `read_eee` puts the bundle together again and ``validate-bundle`` checks it as it checks
the bundle (same verdict, same verified / partial, ``--rescore`` too). Every other field is
derived from those, and `read_eee` derives them again and compares: a score, rating or reply
changed anywhere in the files is named. The file names are UUIDs (version 4, as the datastore
requires) made from the bundle's ``content_sha256`` and the task: exporting a bundle twice
gives the same files.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conceptcomb.benchmarks import evidence_adapter, get, known_tasks
from conceptcomb.common.contract import MetricInfo, Scale
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.common.evidence import (
    ItemView,
    decode,
    encode,
    evidence_turns,
    lm_eval_sent_text,
)
from conceptcomb.leaderboard.bundles.bundle import canonical, find_secrets
from conceptcomb.leaderboard.statistics.intervals import eee_uncertainty
from conceptcomb.scorers import judge_identity
from conceptcomb.scorers.judge_identity import JudgeRecord

SCHEMA_VERSION = "0.3.0"
EXPORT_FORMAT = "conceptcomb-eee/1"
LIBRARIES = {"lm-eval": "lm_eval", "inspect": "inspect_ai", "conceptcomb score": "conceptcomb"}
# Keys of an aggregate's source_metadata.additional_details that carry the bundle.
BUNDLE_KEY, TASK_KEY, OPTIONS_KEY, FORMAT_KEY = (
    "conceptcomb_bundle",
    "conceptcomb_task",
    "conceptcomb_export",
    "conceptcomb_export_format",
)
EXPORT_SHA_KEY = "conceptcomb_export_sha256"
# Keys of a row's metadata that are ours, not the item's evidence; PROMPT: the framework's
# own record of what it sent (lm-eval's request arguments, the chat template applied;
# Inspect's conversation), which ``sent_sha256`` hashes.
ITEM_ID, OUTPUT, PROMPT = "conceptcomb.item_id", "conceptcomb.output", "conceptcomb.prompt"
DEPLOYMENT_TYPES = ("self_deployed", "externally_managed", "unknown")
AVAILABILITY = ("open_weights", "closed_weights", "unknown")
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")

# Model runners that load the weights where the evaluation runs.
_LOCAL_RUNNERS = {
    "hf", "huggingface", "hf-auto", "hf-multimodal", "vllm", "vllm-vlm", "sglang", "gguf",
    "ggml", "mamba_ssm", "ollama", "llama-cpp-python", "transformer_lens",
}  # fmt: skip
# API providers whose models' weights are not published.
_CLOSED_APIS = {"openai", "anthropic", "google", "grok", "azureai", "bedrock", "vertex"}
_APIS = _CLOSED_APIS | {"mistral", "together", "groq", "fireworks", "openrouter", "deepseek"}
_LM_EVAL_API = {
    "openai-chat-completions": "openai",
    "openai-completions": "openai",
    "anthropic-chat": "anthropic",
    "anthropic-chat-completions": "anthropic",
    "anthropic-completions": "anthropic",
}
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.\-]*(/[\w.\-]+)+")
# Metric families with EEE's canonical ids and kinds (benchmark metrics get "<key>.<name>").
_CANONICAL = {"accuracy": "accuracy", "macro_f1": "f1_macro", "auc": "auroc"}
_KINDS = (
    ("accuracy", "accuracy"), ("macro_f1", "f1"), ("auc", "auroc"), ("bleu", "bleu"),
    ("rouge", "rouge"), ("meteor", "meteor"), ("cider", "cider"), ("spice", "spice"),
)  # fmt: skip


class ExportError(ConceptcombError):
    """A bundle (or option) the export cannot turn into files: the message names it."""


@dataclass(frozen=True)
class ExportOptions:
    """What the bundle does not say and EEE asks (kept in the files, so that a check derives
    the same fields again)."""

    model_id: str | None = None  # the model as the Hub names it (default: from the run)
    organization: str = "unspecified"  # who ran the evaluation (source_organization_name)
    relationship: str = "third_party"  # evaluator_relationship
    deployment_type: str | None = None  # default: from the model runner
    model_availability: str | None = None

    def checked(self) -> ExportOptions:
        if self.relationship not in RELATIONSHIPS:
            raise ExportError(f"--evaluator-relationship: one of {', '.join(RELATIONSHIPS)}")
        if self.deployment_type not in (None, *DEPLOYMENT_TYPES):
            raise ExportError(f"--deployment-type: one of {', '.join(DEPLOYMENT_TYPES)}")
        if self.model_availability not in (None, *AVAILABILITY):
            raise ExportError(f"--model-availability: one of {', '.join(AVAILABILITY)}")
        if self.model_id is not None and not _HUB_ID.fullmatch(self.model_id):
            raise ExportError(
                f"--model-id {self.model_id!r}: give the model as the Hugging Face Hub names "
                "it, OWNER/NAME (for an API model, PROVIDER/NAME: openai/gpt-4o)"
            )
        if not self.organization.strip():
            raise ExportError("--organization: name who ran the evaluation")
        return self


@dataclass
class ExportFile:
    path: PurePosixPath  # data/<collection>/<developer>/<model>/<uuid>[_samples].json[l]
    text: str


@dataclass
class TaskExport:
    """One task of a bundle as EEE files."""

    task: str
    aggregate: ExportFile
    samples: ExportFile
    rows: int
    items: int
    results: int = 0


# --- small helpers -----------------------------------------------------------------------------
def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _epoch(stamp: Any) -> str:
    """A bundle's ISO time as Unix seconds (EEE's retrieved_timestamp)."""
    try:
        moment = datetime.datetime.fromisoformat(str(stamp))
    except ValueError:
        return "0"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return str(int(moment.timestamp()))


def file_uuid(bundle: dict[str, Any], task: str) -> str:
    """A version-4 UUID made from the bundle's content hash and the task (stable names)."""
    digest = hashlib.sha256(f"{bundle.get('content_sha256')}|{task}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def export_sha256(bundle: dict[str, Any]) -> str:
    """The bundle's content hash with its packed evidence left out (the items' sha256 stays):
    what EEE files can be checked against, whichever zlib packs the evidence again."""
    body = {key: value for key, value in bundle.items() if key != "content_sha256"}
    body["tasks"] = [
        {**task, "evidence": _unpacked(task.get("evidence"))} for task in body.get("tasks") or []
    ]
    return hashlib.sha256(canonical(body)).hexdigest()


def _unpacked(record: Any) -> Any:
    if isinstance(record, dict) and "data" in record:
        return {key: value for key, value in record.items() if key != "data"}
    return record


def _no_userinfo(url: Any) -> Any:
    """A URL without ``user:password@`` (never exported)."""
    if not isinstance(url, str) or "@" not in url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=host))


def _host(url: Any) -> str:
    try:
        return (urlsplit(str(url)).hostname or "").lower()
    except ValueError:
        return ""


def _local(url: Any) -> bool:
    """A machine of one's own (a bundle names it ``private-host``)."""
    host = _host(url)
    return bool(host) and judge_identity.private_host(host)


# --- the model ---------------------------------------------------------------------------------
def _run_model_id(bundle: dict[str, Any]) -> str | None:
    """The model's Hub-style id from the run, where it names one (not a local path)."""
    framework, model = bundle["framework"]["name"], bundle["model"]
    name, provider, args = (
        str(model.get("name") or ""),
        str(model.get("provider") or ""),
        (model.get("args") or {}),
    )
    candidate = name
    if framework == "lm-eval":
        for key in ("pretrained", "model", "model_path"):
            if args.get(key):
                candidate = str(args[key])
                break
        if "/" not in candidate and provider in _LM_EVAL_API:
            candidate = f"{_LM_EVAL_API[provider]}/{candidate}"
    elif framework == "inspect":
        parts = name.split("/")
        if parts[0] == "openai-api":
            candidate = "/".join(parts[2:])
        elif parts[0] in _LOCAL_RUNNERS:
            candidate = "/".join(parts[1:])
    if candidate.startswith(("/", ".", "~")) or not _HUB_ID.fullmatch(candidate):
        return None
    return candidate


def _deployment(bundle: dict[str, Any]) -> tuple[str, str]:
    """(deployment_type, model_availability) from the runner and where it ran."""
    framework, model = bundle["framework"]["name"], bundle["model"]
    provider = str(model.get("provider") or "")
    args, details = model.get("args") or {}, model.get("details") or {}
    url = args.get("base_url") or details.get("base_url")
    if framework == "inspect" and str(model.get("name", "")).startswith("openai-api/"):
        provider = "openai-api"
    if provider in _LOCAL_RUNNERS:
        return "self_deployed", "open_weights" if _run_model_id(bundle) else "unknown"
    api = _LM_EVAL_API.get(provider, provider)
    if api in _APIS and not (url and _local(url)):
        return "externally_managed", "closed_weights" if api in _CLOSED_APIS else "unknown"
    if url and _local(url):
        return "self_deployed", "unknown"
    return "unknown", "unknown"


def model_info(bundle: dict[str, Any], options: ExportOptions, where: str) -> dict[str, Any]:
    model = bundle["model"]
    model_id = options.model_id or _run_model_id(bundle)
    if not model_id:
        raise ExportError(
            f"{where}: the model {model.get('name')!r} has no Hugging Face-style id (a local "
            "path, or a name without its owner): give it with --model-id OWNER/NAME"
        )
    deployment, availability = _deployment(bundle)
    details = {
        "deployment_type": options.deployment_type or deployment,
        "model_availability": options.model_availability or availability,
        "framework_model": str(model.get("name")),
        "label": str(model.get("label")),
        "provider": str(model.get("provider") or ""),
        "args": _json(model.get("args") or {}),
        **{key: _text(value) for key, value in (model.get("details") or {}).items()},
    }
    return {
        "name": str(model.get("label") or model.get("name")),
        "id": model_id,
        "developer": model_id.split("/", 1)[0],
        "inference_platform": str(model.get("provider") or bundle["framework"]["name"]),
        "additional_details": details,
    }


# --- the judge ----------------------------------------------------------------------------------
def _judge_model(record: JudgeRecord | None, task_judge: dict[str, Any]) -> dict[str, Any]:
    """The judge as EEE's model_info: its record's model, where it is deployed, and the
    record itself (what determines its ratings; no private endpoint)."""
    if record is None:
        name = str(task_judge.get("description") or "unknown")
        return {"name": name, "id": name, "additional_details": {"deployment_type": "unknown"}}
    host = _host(record.endpoint)
    if record.kind == judge_identity.LOCAL:
        deployment, availability = "self_deployed", "open_weights"
    elif host == "api.openai.com":
        deployment, availability = "externally_managed", "closed_weights"
    elif record.endpoint:
        deployment, availability = "externally_managed", "unknown"
    else:
        deployment, availability = "unknown", "unknown"
    name = record.model
    model_id = name if "/" in name else f"openai/{name}" if host == "api.openai.com" else name
    details = {
        "deployment_type": deployment,
        "model_availability": availability,
        "judge_kind": record.kind,
        "judge_key": judge_identity.key(record),
        "judge": _json(record.as_dict()),
    }
    return {"name": name, "id": model_id, "additional_details": details}


def llm_scoring(benchmark: str, task: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The judge the task's items name, with the text of its prompt template."""
    judge = task.get("judge")
    if not isinstance(judge, dict):
        return None
    from conceptcomb.leaderboard.bundles.templates import judge_prompt_sha256

    templates = get(benchmark).judge_templates() or {}
    if judge.get("prompt_sha256") != judge_prompt_sha256(benchmark):
        raise ExportError(
            f"{where}: {task['task']}'s judge prompt (sha256 {judge.get('prompt_sha256')}) is "
            f"not this conceptcomb's ({judge_prompt_sha256(benchmark)}): export the bundle with "
            "the conceptcomb version that made it, whose prompt text it used"
        )
    judges = []
    for record in judge_identity.records_of(judge) or [None]:
        entry: dict[str, Any] = {"model_info": _judge_model(record, judge)}
        if record is not None and record.temperature is not None:
            entry["temperature"] = float(record.temperature)
        if record is not None:
            decoding = {"max_tokens": record.max_tokens, "response_format": record.response_format}
            entry["additional_details"] = {"decoding": _json(decoding)}
        judges.append(entry)
    prompt = (
        next(iter(templates.values()))
        if len(templates) == 1
        else "\n\n".join(f"## {name}\n{text}" for name, text in sorted(templates.items()))
    )
    options = judge.get("options")
    if not isinstance(options, dict):  # an old bundle's judge: its options at the top
        options = {k: v for k, v in judge.items() if k.startswith("judge") or k == "kind"}
    details = {
        "prompt_sha256": str(judge.get("prompt_sha256")),
        "options": _json(_no_userinfo_deep(options)),
        **({"calibration": _json(judge["calibration"])} if judge.get("calibration") else {}),
    }
    return {"judges": judges, "input_prompt": prompt, "additional_details": details}


def _no_userinfo_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _no_userinfo_deep(item) for key, item in value.items()}
    return _no_userinfo(value)


# --- metrics ------------------------------------------------------------------------------------
def _infos(benchmark: str, task: str) -> dict[str, MetricInfo]:
    return {info.name: info for info in get(benchmark).tasks().get(task, [])}


def _kind(metric: str, info: MetricInfo | None) -> str | None:
    if info is not None and info.aggregation == "sum":
        return "count"
    return next((kind for prefix, kind in _KINDS if metric.lower().startswith(prefix)), None)


def _bound(value: float | None, default: str) -> float | str:
    return default if value is None else value


def metric_config(
    benchmark: str, task: str, metric: str, info: MetricInfo | None, headline: str | None
) -> dict[str, Any]:
    card = get(benchmark).card if get(benchmark).has_card else None
    title = card.title if card else get(benchmark).title
    config: dict[str, Any] = {
        "evaluation_description": f"{title}: {task}, {metric} ({get(benchmark).paper})",
        "metric_id": _CANONICAL.get(metric, f"{benchmark}.{metric}"),
        "metric_name": (info.title if info and info.title else metric),
        "lower_is_better": not (info.higher_is_better if info else True),
    }
    kind = _kind(metric, info)
    if kind:
        config["metric_kind"] = kind
    scale: Scale | None = info.value_scale if info else None
    if scale is not None:
        config |= {
            "metric_unit": scale.unit,
            "score_type": "continuous",
            "min_score": _bound(scale.low, "-Infinity"),
            "max_score": _bound(scale.high, "Infinity"),
        }
    aggregation = info.aggregation if info else "mean"
    per_item = {
        "mean": "the mean of the items' scores (the instance rows of this result)",
        "sum": "the sum of the items' counts (the instance rows of this result)",
        "corpus": "computed over all items at once from their answers and references (the "
        "instance rows' metadata); no per-item score exists",
    }[aggregation]
    config["additional_details"] = {
        "aggregation": aggregation,
        "per_item": per_item,
        "headline": "true" if metric == headline else "false",
    }
    return config


def _item_scale_best(info: MetricInfo | None) -> float | None:
    """The best value a metric can take (an item at it is ``is_correct``)."""
    scale = info.value_scale if info else None
    if scale is None:
        return None
    return scale.high if info is not None and info.higher_is_better else scale.low


# --- the data -----------------------------------------------------------------------------------
def source_data(benchmark: str, task: dict[str, Any], ids: list[str] | None) -> dict[str, Any]:
    """Where the items came from (the first dataset record of the task), the files' sha256,
    and for a subset run the ids of its items."""
    records = task.get("datasets") or []
    first = records[0] if records else {}
    card = get(benchmark).card if get(benchmark).has_card else None
    details = {
        "datasets": _json(records),
        "items_evaluated": _text(task.get("items")),
        "items_total": _text(items_total(benchmark, task)),
        "partial": "true" if partial(benchmark, task) else "false",
        **({"license": card.license_data} if card else {}),
        **({"sample_ids": _json(ids)} if ids is not None else {}),
    }
    if first.get("revision"):
        details["revision"] = str(first["revision"])
    source: dict[str, Any] = {"dataset_name": benchmark}
    if first.get("kind") == "hub":
        source |= {"source_type": "hf_dataset", "hf_repo": hub_repo_id(first)}
        split = (task.get("options") or {}).get("split")
        source["hf_split"] = str(split or "test")
        total = items_total(benchmark, task)
        if isinstance(total, int):
            source["samples_number"] = total
    elif first.get("kind") == "pinned" and first.get("repository"):
        url = f"https://{first['repository']}/tree/{first.get('revision')}"
        source |= {"source_type": "url", "url": [url]}
    else:
        source["source_type"] = "other"
    source["additional_details"] = details
    return source


def hub_repo_id(record: dict[str, Any]) -> str:
    """A bundle's record of a Hub dataset names it ``huggingface.co/datasets/OWNER/NAME``."""
    return str(record.get("repository") or "").removeprefix("huggingface.co/datasets/")


def items_total(benchmark: str, task: dict[str, Any]) -> int | None:
    """The task's evaluation set size: the run's, else the card's (default options only)."""
    total = task.get("items_total")
    if isinstance(total, int):
        return total
    bench = get(benchmark)
    if not (task.get("options") or {}) and bench.has_card and task["task"] in bench.card.tasks:
        return bench.card.tasks[task["task"]].dataset_samples
    return None


def partial(benchmark: str, task: dict[str, Any]) -> bool:
    total, items = items_total(benchmark, task), task.get("items")
    return isinstance(total, int) and isinstance(items, int) and items < total


# --- the rows -------------------------------------------------------------------------------------
def _lm_eval_choices(prompt: Any) -> list[str] | None:
    """The continuations lm-eval scored (its log-likelihood requests), from an item's
    ``prompt`` record (``[doc id, {"loglikelihood_args_0": {"arg_0": ..., "arg_1": ...}}]``)."""
    if not isinstance(prompt, list) or len(prompt) < 2 or not isinstance(prompt[1], dict):
        return None
    arguments = prompt[1]
    requests = [arguments[k] for k in sorted(arguments) if isinstance(arguments[k], dict)]
    if len(requests) > 1 and all(isinstance(r.get("arg_1"), str) for r in requests):
        return [str(r["arg_1"]).strip() for r in requests]
    return None


def messages_text(turns: list[list[str]]) -> str:
    """Chat messages as EEE's ``input.raw``: their JSON, ``[{"role", "content"}, ...]``."""
    return json.dumps([{"role": role, "content": text} for role, text in turns], ensure_ascii=False)


def sent_input(evidence: dict[str, Any]) -> tuple[str, list[list[str]] | None]:
    """(``input.raw``, the chat messages) of an item: the messages sent, all turns, the
    same whichever framework sent them (`conceptcomb.common.evidence.evidence_turns`); a
    prompt sent as plain text (lm-eval without a chat template) is itself."""
    turns = evidence_turns(evidence)
    if turns:
        return messages_text(turns), turns
    prompt = evidence.get("prompt")
    text = lm_eval_sent_text(prompt[1]) if isinstance(prompt, list) and prompt[1:] else None
    return text or "", None


def _view(benchmark: str, task: str, evidence: dict[str, Any]) -> ItemView:
    adapter = evidence_adapter(benchmark)
    if adapter is not None and hasattr(adapter, "item_view"):
        return adapter.item_view(task, evidence)
    answer = evidence.get("answer")
    return ItemView(["" if answer is None else _text(answer)], "the task's parser", [])


def _outputs(evidence: dict[str, Any]) -> tuple[str, list[str]]:
    if isinstance(evidence.get("replies"), list):
        return "replies", [str(reply) for reply in evidence["replies"]]
    if isinstance(evidence.get("reply"), str):
        return "reply", [evidence["reply"]]
    return "none", []


def item_metadata(evidence: dict[str, Any], output: str) -> dict[str, str]:
    """Everything the item's evidence holds but its reply, as JSON texts (its prompt record
    under `PROMPT`)."""
    carried = {ITEM_ID: _json(evidence.get("id")), OUTPUT: output}
    if evidence.get("prompt") is not None:
        carried[PROMPT] = _json(evidence["prompt"])
    for key, value in evidence.items():
        if key not in ("id", "prompt", output):
            carried[key] = _json(value)
    return carried


def _interaction(
    turns: list[list[str]] | None, output: str, replies: list[str], source: str
) -> tuple[dict[str, Any], str, int]:
    """The row's interaction fields (``interaction_type`` with ``output`` or ``messages``),
    where its answers were read, and the turn they were read from. Demonstrations sent as
    earlier turns (assistant messages before the reply) make the conversation multi-turn,
    as Every Eval Ever's own Inspect converter counts it: the row then holds every message,
    the model's reply the last one; otherwise it is single-turn, the replies its output."""
    demonstrations = bool(turns) and any(role == "assistant" for role, _ in turns or [])
    if not (demonstrations and output == "reply" and len(replies) == 1):
        return {"interaction_type": "single_turn", "output": {"raw": replies}}, source, 0
    last = len(turns or [])
    messages = [
        {"turn_idx": index, "role": role, "content": text}
        for index, (role, text) in enumerate([*(turns or []), ["assistant", replies[0]]])
    ]
    if source == "output.raw":
        source = f"messages[{last}].content"
    fields = {"interaction_type": "multi_turn", "output": None, "messages": messages}
    return fields, source, last


def instance_rows(
    head: dict[str, Any],
    benchmark: str,
    task: str,
    evidence: dict[str, Any],
    number: int,
    per_item: list[tuple[str, MetricInfo | None]],
) -> list[dict[str, Any]]:
    """The item's rows: one per per-item metric it has a score for (EEE: one row per
    aggregate result an item counts in)."""
    output, replies = _outputs(evidence)
    view = _view(benchmark, task, evidence)
    raw, turns = sent_input(evidence)
    choices = list(view.choices) if view.choices else _lm_eval_choices(evidence.get("prompt"))
    # The same for an item whichever framework sent it: the framework's own record of the
    # prompt (lm-eval's templated text, which Inspect does not log) is in the metadata.
    sample_input = {
        "raw": raw,
        "formatted": None,
        "reference": view.references,
        "choices": choices,
    }
    interaction, source, turn = _interaction(turns, output, replies, view.source)
    several = len(view.answers) > 1
    attribution = [
        {
            "turn_idx": turn,
            "source": f"{source}[{k}]" if several else source,
            "extracted_value": answer,
            "extraction_method": view.method,
            "is_terminal": True,
        }
        for k, answer in enumerate(view.answers)
    ]
    sample_id = evidence.get("id") if isinstance(evidence.get("id"), str) else f"item-{number}"
    sample_hash = hashlib.sha256(
        _json({"raw": raw, "reference": view.references}).encode()
    ).hexdigest()
    metadata = item_metadata(evidence, output)
    scores = evidence.get("scores") if isinstance(evidence.get("scores"), dict) else {}
    rows = []
    for metric, info in per_item:
        score = scores.get(metric)
        if isinstance(score, bool) or not isinstance(score, int | float):
            continue
        best = _item_scale_best(info)
        rows.append(
            {
                **head,
                "evaluation_name": task,
                "evaluation_result_id": f"{task}:{metric}",
                "sample_id": sample_id,
                "sample_hash": sample_hash,
                "interaction_type": interaction["interaction_type"],
                "input": sample_input,
                **{k: v for k, v in interaction.items() if k != "interaction_type"},
                "answer_attribution": attribution,
                "evaluation": {
                    "score": float(score),
                    "is_correct": best is not None and score == best,
                    **({"num_turns": len(interaction["messages"])} if turn else {}),
                },
                "metadata": metadata,
            }
        )
    return rows


# --- one task -------------------------------------------------------------------------------------
def _header(bundle: dict[str, Any]) -> dict[str, Any]:
    head = {key: value for key, value in bundle.items() if key != "tasks"}
    head["task_names"] = [task.get("task") for task in bundle.get("tasks") or []]
    return head


def _task_record(task: dict[str, Any]) -> dict[str, Any]:
    return {**task, "evidence": _unpacked(task.get("evidence"))}


def _generation(bundle: dict[str, Any], task: str) -> dict[str, Any]:
    """EEE's generation_config: the settings a framework records, mapped where EEE has a
    field, all of them in additional_details."""
    generation = bundle.get("generation") or {}
    found: dict[str, Any] = {}
    for source in (
        (generation.get("task_generation_kwargs") or {}).get(task),
        generation.get("gen_kwargs"),
        generation.get("generate_config"),
    ):
        if isinstance(source, dict):
            for key, value in source.items():
                found.setdefault(key, value)
    args: dict[str, Any] = {}
    for key in ("temperature", "top_p", "top_k"):
        if isinstance(found.get(key), int | float) and not isinstance(found.get(key), bool):
            args[key] = float(found[key])
    tokens = found.get("max_tokens", found.get("max_gen_toks"))
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 1:
        args["max_tokens"] = tokens
    return {"generation_args": args, "additional_details": {"framework": _json(generation)}}


def _result(
    bundle: dict[str, Any],
    task: dict[str, Any],
    metric: str,
    config: dict[str, Any],
    source: dict[str, Any],
) -> dict[str, Any]:
    """One metric of a task as an EEE evaluation result."""
    name, benchmark = str(task["task"]), str(task["benchmark"])
    claimed = (task.get("metrics") or {}).get(metric) or {}
    uncertainty = eee_uncertainty(claimed, task.get("items"))
    details = {
        "items": _text(task.get("items")),
        "items_total": _text(items_total(benchmark, task)),
        "partial": "true" if partial(benchmark, task) else "false",
        "task_version": _text(task.get("version")),
    }
    result: dict[str, Any] = {
        "evaluation_result_id": f"{name}:{metric}",
        "evaluation_name": name,
        "source_data": source,
        "metric_config": config,
        "score_details": {"score": float(claimed["value"]), "details": details},
        "generation_config": _generation(bundle, name),
    }
    if task.get("created"):
        result["evaluation_timestamp"] = str(task["created"])
    if uncertainty:
        result["score_details"]["uncertainty"] = uncertainty
    return result


def _results(
    bundle: dict[str, Any], task: dict[str, Any], source: dict[str, Any], where: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """The task's evaluation results (its metrics with a value, in the benchmark's order),
    and their names."""
    name, benchmark = str(task["task"]), str(task["benchmark"])
    bench, infos = get(benchmark), _infos(benchmark, name)
    card_task = bench.card.tasks.get(name) if bench.has_card else None
    headline = card_task.headline_metric if card_task else None
    scoring = llm_scoring(benchmark, task, where)
    metrics = task.get("metrics") or {}
    results, names = [], []
    for metric in [m for m in infos if m in metrics] + sorted(set(metrics) - set(infos)):
        value = (metrics.get(metric) or {}).get("value")
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue  # undefined for this run (kept in conceptcomb_task)
        info = infos.get(metric)
        config = metric_config(benchmark, name, metric, info, headline)
        if scoring is not None and info is not None and info.judged:
            config["llm_scoring"] = scoring
        results.append(_result(bundle, task, metric, config, source))
        names.append(metric)
    if not results:
        raise ExportError(f"{where}: {name} has no metric with a value: nothing to export")
    return results, names


def _rows_text(
    head: dict[str, Any], task: dict[str, Any], items: list[dict], metrics: list[str], where: str
) -> tuple[str, int]:
    """The task's instance rows (JSON lines), and how many."""
    name, benchmark = str(task["task"]), str(task["benchmark"])
    infos = _infos(benchmark, name)
    per_item = [(m, infos.get(m)) for m in metrics if _aggregation(infos.get(m)) != "corpus"]
    lines: list[str] = []
    for number, evidence in enumerate(items):
        rows = instance_rows(head, benchmark, name, evidence, number, per_item)
        if not rows:
            raise ExportError(
                f"{where}: {name} item {evidence.get('id')}: no per-item score, which an EEE "
                "instance row needs"
            )
        lines += [json.dumps(row, ensure_ascii=False, allow_nan=False) for row in rows]
    if not lines:
        missing = (task.get("evidence") or {}).get("missing") or "none"
        raise ExportError(
            f"{where}: {name} holds no per-item evidence ({missing}): EEE files need the "
            "items (run lm-eval with --log_samples)"
        )
    return "\n".join(lines) + "\n", len(lines)


def _carried(bundle: dict[str, Any], task: dict[str, Any], options: ExportOptions) -> dict:
    """source_metadata.additional_details: the bundle's own record, for the way back."""
    return {
        BUNDLE_KEY: _json(_header(bundle)),
        TASK_KEY: _json(_task_record(task)),
        OPTIONS_KEY: _json(asdict(options)),
        FORMAT_KEY: EXPORT_FORMAT,
        EXPORT_SHA_KEY: export_sha256(bundle),
        "bundle_content_sha256": str(bundle.get("content_sha256")),
        "bundle_conceptcomb_version": str(bundle.get("conceptcomb_version")),
        "task_version": _text(task.get("version")),
    }


def export_task(
    bundle: dict[str, Any], index: int, options: ExportOptions, where: str, unsealed: bool = False
) -> TaskExport:
    """One task of a bundle as its EEE aggregate and instance rows."""
    task = bundle["tasks"][index]
    name, benchmark = str(task["task"]), str(task["benchmark"])
    info = model_info(bundle, options, where)
    retrieved = _epoch(bundle.get("created"))
    evaluation_id = f"{name}/{info['id']}/{retrieved}"
    file_id = file_uuid(bundle, name)
    folder = PurePosixPath("data", benchmark, info["developer"], model_folder(info["id"]))
    record = task.get("evidence") or {}
    items = _evidence(record, f"{where}: {name}.evidence", unsealed) if "data" in record else []
    ids = [str(item.get("id")) for item in items] if partial(benchmark, task) else None
    results, metrics = _results(bundle, task, source_data(benchmark, task, ids), where)
    head = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": info["id"],
    }
    samples_text, rows = _rows_text(head, task, items, metrics, where)
    samples_path = folder / f"{file_id}_samples.jsonl"
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": str(task.get("created") or bundle.get("created")),
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": f"conceptcomb leaderboard bundle ({bundle.get('schema')})",
            "source_type": "evaluation_run",
            "source_organization_name": options.organization,
            "evaluator_relationship": options.relationship,
            "additional_details": _carried(bundle, task, options),
        },
        "eval_library": {
            "name": LIBRARIES.get(bundle["framework"]["name"], bundle["framework"]["name"]),
            "version": str(bundle["framework"].get("version") or "unknown"),
            "additional_details": {
                "conceptcomb_version": str(bundle.get("conceptcomb_version")),
                "task": name,
                "task_version": _text(task.get("version")),
                "benchmark": benchmark,
            },
        },
        "model_info": info,
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": str(samples_path),
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(samples_text.encode()).hexdigest(),
            "total_rows": rows,
        },
    }
    aggregate_text = json.dumps(aggregate, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    return TaskExport(
        name,
        ExportFile(folder / f"{file_id}.json", aggregate_text),
        ExportFile(samples_path, samples_text),
        rows=rows,
        items=len(items),
        results=len(results),
    )


def _aggregation(info: MetricInfo | None) -> str:
    return info.aggregation if info is not None else "mean"


def model_folder(model_id: str) -> str:
    """The datastore's model folder: the id's name, slashes flattened, ':' made portable."""
    return "_".join(model_id.split("/")[1:]).replace(":", "_")


def _evidence(record: dict[str, Any], where: str, unsealed: bool) -> list[dict[str, Any]]:
    """The items of a task's evidence; ``unsealed``: even where they no longer match their
    recorded hash (files checked against an export: the bundle's check reports the hash)."""
    if not unsealed:
        return decode(record, where)
    return json.loads(gzip.decompress(base64.b64decode(record["data"])))


def export_bundle(
    bundle: dict[str, Any], options: ExportOptions, where: str = "bundle", unsealed: bool = False
) -> list[TaskExport]:
    """Every task of a valid bundle as EEE files (ExportError naming what is missing)."""
    known = known_tasks()
    exports = []
    for index, task in enumerate(bundle.get("tasks") or []):
        if task.get("task") not in known:
            raise ExportError(f"{where}: {task.get('task')!r} is not a task of this conceptcomb")
        exports.append(export_task(bundle, index, options.checked(), where, unsealed))
    found = find_secrets([json.loads(e.aggregate.text) for e in exports], "export", 1)
    if found:
        raise ExportError(f"{where}: refusing to export what looks like a secret: {found[0]}")
    return exports


def write_files(files: Iterable[ExportFile], out: Path) -> list[Path]:
    written = []
    for file in files:
        path = out / Path(*file.path.parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(file.text, encoding="utf-8")
        except OSError as err:
            raise ExportError(
                f"{path}: cannot be written ({err.strerror or err}): choose another --out"
            ) from None
        written.append(path)
    return written


def files_of(exports: Iterable[TaskExport]) -> Iterator[ExportFile]:
    for export in exports:
        yield export.aggregate
        yield export.samples


# --- and back: EEE files to the bundle --------------------------------------------------------
def evidence_of_row(row: dict[str, Any]) -> dict[str, Any]:
    """The item's evidence as the bundle holds it, from one of its instance rows."""
    metadata = dict(row.get("metadata") or {})
    output = metadata.pop(OUTPUT, "none")
    evidence: dict[str, Any] = {"id": json.loads(metadata.pop(ITEM_ID, "null"))}
    prompt = metadata.pop(PROMPT, None)
    if prompt is None:  # files exported before the prompt moved to the metadata
        prompt = (row.get("input") or {}).get("formatted")
    if prompt is not None:
        evidence["prompt"] = json.loads(prompt)
    for key, text in metadata.items():
        evidence[key] = json.loads(text)
    replies = (row.get("output") or {}).get("raw") or []
    if row.get("interaction_type") == "multi_turn":  # the reply is the last message
        replies = [str((row.get("messages") or [{}])[-1].get("content"))]
    if output == "reply":
        evidence["reply"] = replies[0] if replies else None
    elif output == "replies":
        evidence["replies"] = list(replies)
    return {"id": evidence.pop("id"), **evidence}


def bundle_of(aggregates: list[dict[str, Any]], items: dict[str, list[dict]]) -> dict[str, Any]:
    """The bundle the aggregates of one export came from, its tasks' evidence packed again
    from ``items`` (task -> evidence items); the tasks in the bundle's order."""
    first = aggregates[0]["source_metadata"]["additional_details"]
    head = json.loads(first[BUNDLE_KEY])
    names = head.pop("task_names")
    records = {}
    for aggregate in aggregates:
        record = json.loads(aggregate["source_metadata"]["additional_details"][TASK_KEY])
        evidence = record.get("evidence")
        if isinstance(evidence, dict) and "sha256" in evidence:
            packed = encode(items.get(record["task"], []))
            record["evidence"] = {**evidence, "data": packed["data"]}
        records[record["task"]] = record
    return {**head, "tasks": [records[name] for name in names if name in records]}
