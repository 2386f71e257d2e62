"""Leaderboard bundles: one JSON file per model run, with what a leaderboard needs to trust it.

``conceptcomb submit-bundle RESULTS... --out DIR`` writes, per (framework, model) run:

* the framework and its version, the model's identity (name, provider, arguments with
  secrets removed, revision/sha where the framework records them), generation settings;
* per task: name and version, items evaluated of the total, options, the dataset revision
  and the sha256 of its files, the prompts' hash (the package's templates, and the prompts
  actually sent when the samples are there), the judge and its calibration figure, and the
  metrics with standard errors and, computed from the items, each one's 95% interval and
  its method (`conceptcomb.leaderboard.statistics.intervals`: clustered by the items' unit,
  bootstrapped for corpus metrics);
* per task the per-item evidence (`conceptcomb.common.evidence`): each item's id in the
  pinned dataset, raw reply, parsed answer, judge questions with their ratings, and scores,
  compressed; the judge's identity (endpoint kind, model, decoding) and the hash of its
  prompt template;
* the sha256 of each results file it was made from, and ``content_sha256``: the sha256 of
  the bundle's canonical JSON without that field, so a later edit is detected.

``conceptcomb validate-bundle FILE`` checks the schema, ``content_sha256``, the datasets'
revisions and checksums against this package's pins, that no secret is inside, and the
per-item evidence (`conceptcomb.leaderboard.checks.verify`).
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import platform
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import conceptcomb
from conceptcomb.benchmarks import evidence_adapter, get
from conceptcomb.common.datafiles import sha256_of
from conceptcomb.common.errors import ConceptcombError, DataFormatError
from conceptcomb.common.evidence import (
    ENCODING,
    RawItem,
    Turns,
    appear_in_order,
    decode,
    encode,
    full_inspect_log,
    inspect_items,
    inspect_prompt,
    lm_eval_items,
    lm_eval_prompt,
    lm_eval_recorded_turns,
    lm_eval_samples_path,
    lm_eval_sent_text,
    missing_reason,
    prompts_sha256,
    score_items,
    turns_of,
)
from conceptcomb.common.runs import INSPECT, LM_EVAL, RESCORED, Run, TaskRun
from conceptcomb.leaderboard.bundles.datasets import dataset_records
from conceptcomb.leaderboard.bundles.templates import judge_prompt_sha256, templates_sha256
from conceptcomb.scorers import judge_identity

SCHEMA_ID = "conceptcomb-bundle/2"
# Bundles of conceptcomb before per-item evidence: still valid, their rows unverified.
SCHEMA_IDS = ("conceptcomb-bundle/1", SCHEMA_ID)
REDACTED = "<redacted>"

# Values that look like credentials (OpenAI/Anthropic, Hugging Face, AWS, Google, GitHub,
# Slack, bearer tokens, private keys).
SECRET_PATTERNS = {
    "an OpenAI/Anthropic-style API key (sk-...)": re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    "a Hugging Face token (hf_...)": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "an AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "a Google API key": re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    "a GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})"),
    "a Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    "a bearer token": re.compile(r"\bBearer\s+[A-Za-z0-9._\-]{16,}"),
    "a private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
}
# Field names whose values are credentials: "api_key", "hf_token", "authorization"... but not
# "tokenizer", "max_tokens" or "judge_api_key_env" (which holds a variable NAME).
SECRET_FIELD = re.compile(
    r"(.*[_-])?(api[_-]?key|access[_-]?key|secret([_-]?key)?|password|passwd|token|"
    r"authorization|bearer|credentials?)",
    re.IGNORECASE,
)


# Text that each of SECRET_PATTERNS needs in a string it matches: a string holding none of
# them is matched by none, known with a few substring tests instead of 8 searches (nearly
# every string of a bundle; the searches were a third of `validate-bundle`'s time on the
# full CCPT group's bundle, 2026-12-06).
SECRET_MARKS = ("sk-", "hf_", "AKIA", "ASIA", "AIza", "gh", "github_pat_", "xox", "Bearer",
                "PRIVATE KEY")  # fmt: skip


def _may_hold_a_secret(text: str) -> bool:
    return any(mark in text for mark in SECRET_MARKS)


# --- secrets --------------------------------------------------------------------------------
def _secret_field(name: str) -> bool:
    return SECRET_FIELD.fullmatch(name) is not None


def _packed(value: dict[str, Any], key: str) -> bool:
    """The compressed evidence: redacted before packing and scanned unpacked (validate.py),
    never as base64 text, where a credential pattern could match by chance."""
    return key == "data" and value.get("encoding") == ENCODING


def redact(value: Any, name: str = "") -> Any:
    """A copy with credential fields and credential-looking strings replaced."""
    if isinstance(value, dict):
        return {
            key: item if _packed(value, key) else redact(item, str(key))
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item, name) for item in value]
    if isinstance(value, str):
        if value and _secret_field(name):
            return REDACTED
        if not _may_hold_a_secret(value):
            return value
        for pattern in SECRET_PATTERNS.values():
            value = pattern.sub(REDACTED, value)
    return value


def find_secrets(value: Any, where: str = "bundle", most: int | None = None) -> list[str]:
    """Paths of fields that hold a credential, with what it looks like (the first ``most``
    of them when given)."""
    return list(itertools.islice(_secrets(value, where), most))


def _secrets(value: Any, path: Any) -> Iterator[str]:
    """``path``: (parent path, key or index), nested, written out only for a finding (a
    bundle from anyone may have long keys, deep down)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _packed(value, key):
                continue
            if isinstance(item, str) and item and item != REDACTED and _secret_field(str(key)):
                yield f"{_path((path, str(key)))} is a credential field with a value"
            else:
                yield from _secrets(item, (path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _secrets(item, (path, index))
    elif isinstance(value, str) and _may_hold_a_secret(value):
        for kind, pattern in SECRET_PATTERNS.items():
            if pattern.search(value):
                yield f"{_path(path)} holds what looks like {kind}"


def _path(path: Any) -> str:
    parts = []
    while isinstance(path, tuple):
        path, part = path
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
    return path + "".join(reversed(parts))


# --- local paths ----------------------------------------------------------------------------
# An absolute local path inside a string: POSIX or ``~/``, also after ``//`` inside a name
# (``openai-api/local//home/me/model``), a ``file://`` URL, a Windows drive; not a URL's
# path (after ``://`` or a host) and not a slash between words ("E / C", "owner/model").
_PATH_TAIL = r"[^\s,;'\"|<>()\[\]{}]*"
LOCAL_PATH = re.compile(
    rf"\bfile://{_PATH_TAIL}"
    rf"|(?<![\w:/.~-])(?:~(?=/)|/(?=[^/\s])){_PATH_TAIL}"
    rf"|(?<=[\w.-]/)/(?=[^/\s]){_PATH_TAIL}"
    rf"|\b[A-Za-z]:\\{_PATH_TAIL}"
)


def _last_part(found: re.Match[str]) -> str:
    parts = [part for part in re.split(r"[/\\]", found[0]) if part and part != "~"]
    return parts[-1] if parts else ""


def without_local_paths(value: Any) -> Any:
    """A copy where every absolute local path is its last part (a model folder
    ``/home/me/.cache/.../smollm2-hf`` -> ``smollm2-hf``): a bundle names no user, home or
    cache folder, and the same run gives the same bundle on every machine. The packed
    evidence is left as the run recorded it (its items are checked against the replies)."""
    if isinstance(value, dict):
        return {
            key: item if _packed(value, key) else without_local_paths(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [without_local_paths(item) for item in value]
    if isinstance(value, str):
        return LOCAL_PATH.sub(_last_part, value)
    return value


# --- private hosts --------------------------------------------------------------------------
# A URL's scheme and host[:port] (an IPv6 address in brackets).
_URL = re.compile(
    r"\b([A-Za-z][A-Za-z0-9+.-]*://)((?:[^\s/?#@\"'|,<>]*@)?(\[[^\]\s]*\]|[^\s/?#:\"'|,<>\[\]]+)(?::\d+)?)"
)
PRIVATE_HOST = "private-host"


def _public_url(found: re.Match[str]) -> str:
    return found[1] + PRIVATE_HOST if judge_identity.private_host(found[3]) else found[0]


def without_private_hosts(value: Any) -> Any:
    """A copy where the host (and port) of every URL naming a loopback or private address or
    a host of one's own network is ``private-host`` (a judge or model served at
    ``http://127.0.0.1:38455/v1`` -> ``http://private-host/v1``): a bundle tells no one where
    the submitter's machines are. The packed evidence is left as the run recorded it."""
    if isinstance(value, dict):
        return {
            key: item if _packed(value, key) else without_private_hosts(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [without_private_hosts(item) for item in value]
    if isinstance(value, str):
        return _URL.sub(_public_url, value)
    return value


# --- hashes ---------------------------------------------------------------------------------
def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def content_sha256(bundle: dict[str, Any]) -> str:
    body = {key: value for key, value in bundle.items() if key != "content_sha256"}
    return hashlib.sha256(canonical(body)).hexdigest()


def _lm_eval_prompts(task: TaskRun) -> list[Any] | None:
    """What lm-eval sent for each sample of the samples file beside the results, if logged."""
    stamp = task.source.stem.removeprefix("results_")
    path = task.source.parent / f"samples_{task.task}_{stamp}.jsonl"
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    return [lm_eval_prompt(json.loads(line)) for line in lines if line.strip()]


def _inspect_prompts(task: TaskRun) -> list[Any] | None:
    log = full_inspect_log(str(task.source))
    return [inspect_prompt(sample) for sample in log.samples] if log.samples else None


def _rescored_prompts(task: TaskRun) -> list[Any] | None:
    """The prompts `conceptcomb score` recorded (the task's rendering of each item)."""
    if task.samples is None or not task.samples.is_file():
        return None
    prompts = [item.prompt for item in score_items(task.samples)]
    return prompts if prompts and all(prompt is not None for prompt in prompts) else None


def sent_prompts_sha256(framework: str, task: TaskRun) -> str | None:
    """sha256 of the prompts the model received, from the run's samples (None without),
    credentials redacted as in the evidence, whose items carry each prompt (``prompt``);
    for `conceptcomb score`, of the prompts the task would have sent each item."""
    prompts = None
    if framework == LM_EVAL:
        prompts = _lm_eval_prompts(task)
    elif framework == INSPECT:
        prompts = _inspect_prompts(task)
    elif framework == RESCORED:
        prompts = _rescored_prompts(task)
    return prompts_sha256(redact(prompts)) if prompts else None


def lm_eval_turns(task: TaskRun, raw: RawItem, generation: dict[str, Any]) -> Turns | None:
    """The chat messages lm-eval sent for one item: those it recorded (API chat models),
    else the task's rendering of the doc (`Benchmark.chat_messages`) where the prompt the
    model received holds them in order (a chat template applied); None for a run without
    a chat template (the model received plain text) or one that did not keep few-shot
    demonstrations as turns (``--fewshot_as_multiturn false``)."""
    text = lm_eval_sent_text(raw.prompt[1]) if raw.prompt and len(raw.prompt) > 1 else None
    if text is None:
        return None
    recorded = lm_eval_recorded_turns(text)
    if recorded is not None or not generation.get("chat_template_sha"):
        return recorded
    try:
        turns = turns_of(get(task.benchmark).chat_messages(task.task, raw.doc, task.options))
    except (ConceptcombError, KeyError, TypeError, ValueError):
        return None  # a doc the task cannot render: the prompt text stands for itself
    if not turns:
        return None
    demonstrations = any(role == "assistant" for role, _ in turns)
    if demonstrations and generation.get("fewshot_as_multiturn") is False:
        return None
    return turns if appear_in_order(turns, text) else None


# --- evidence -------------------------------------------------------------------------------
def _raw_items(framework: str, task: TaskRun) -> tuple[list[RawItem] | None, str]:
    """The run's per-item records, or why there are none."""
    if framework == LM_EVAL:
        samples = lm_eval_samples_path(task.source, task.task)
        if samples is None:
            return None, "lm-eval ran without --log_samples: no samples file beside the results"
        return lm_eval_items(samples), ""
    if framework == INSPECT:
        items, reason = inspect_items(task.source)
        return (items, "") if not reason else (None, reason)
    if framework == RESCORED:
        if task.samples is None or not task.samples.is_file():
            return None, "`conceptcomb score` ran without --samples-output (or the file moved)"
        return score_items(task.samples), ""
    return None, f"no per-item records in {framework} results"


def _file_shas(datasets: list[dict[str, Any]]) -> dict[str, str]:
    """Dataset file stem -> the sha256 of the copy the run read (or the pinned one); also
    by the path without its suffix, for files whose stems repeat (AbsPyramid's test.json)."""
    shas = {}
    for record in datasets:
        for name, entry in record["files"].items():
            sha = entry.get("sha256")
            if sha:
                shas[Path(name).stem] = shas[Path(name).with_suffix("").as_posix()] = sha
    return shas


def task_evidence(
    framework: str,
    task: TaskRun,
    datasets: list[dict[str, Any]],
    generation: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], set[str], set[str]]:
    """The task's evidence record for the bundle, the judge identities its items name and
    the snapshots their judge's answers named;
    an lm-eval item also carries the chat messages it was sent (`lm_eval_turns`), which
    an Inspect item's and a rescored item's ``prompt`` hold."""
    checker = evidence_adapter(task.benchmark)
    if checker is None:
        return {"missing": missing_reason(task.benchmark)}, set(), set()
    raws, reason = _raw_items(framework, task)
    if raws is None:
        return {"missing": reason}, set(), set()
    shas, data_dir = _file_shas(datasets), task.options.get("data_dir")
    items: list[dict[str, Any]] = []
    identities: set[str] = set()
    snapshots: set[str] = set()
    for raw in raws:
        key = checker.item_key(task.task, raw.doc, str(data_dir) if data_dir else None)
        sha = shas.get(key.split(":", 1)[0]) if key else None
        evidence = checker.evidence_item(task.task, raw)
        prompt = {"prompt": raw.prompt} if raw.prompt is not None else {}
        if framework == LM_EVAL:
            turns = lm_eval_turns(task, raw, generation or {})
            prompt |= {"messages": turns} if turns else {}
        # The unit items share (CCPT's noun phrase...): intervals are clustered by it.
        unit = checker.unit(task.task, raw.doc) if hasattr(checker, "unit") else None
        shared = {"unit": unit} if unit is not None else {}
        items.append({"id": f"{sha}:{key}" if sha else None, **evidence, **shared, **prompt})
        identities |= _named(raw.record, "judge")
        snapshots |= _named(raw.record, "judge_snapshot")
        snapshots |= _named((raw.record or {}).get("verification"), "snapshot")
    try:
        return encode(redact(items)), identities, snapshots
    except UnicodeEncodeError:
        raise _lone_surrogate(task, items) from None


def _lone_surrogate(task: TaskRun, items: list[dict[str, Any]]) -> DataFormatError:
    """The one line for a run whose records hold a lone surrogate (which a bundle, UTF-8
    JSON, cannot carry), naming the item and the field (`safe_json.check_strings`, the
    check a bundle's reader makes)."""
    from conceptcomb.leaderboard.bundles.safe_json import Refused, check_strings

    found = "a text"
    for number, item in enumerate(items):
        try:
            check_strings(item, "evidence")
        except Refused as refused:
            if refused.limit:  # a long string, which the bundle can carry
                continue
            found = f"item {number} ({item.get('id') or 'no id'}): {refused}"
            break
    return DataFormatError(
        f"{task.source}: {task.task}'s {found}, which no bundle (UTF-8) can carry: replace it "
        "in the run's records (with U+FFFD) and re-score them with "
        f"`conceptcomb score {task.task} --predictions FILE`, or leave this run out."
    )


def _named(record: Any, field: str) -> set[str]:
    """What a core record's ``field`` names (the judge's identity, the snapshot its
    answers named), and its oracle's per-reply records'."""
    if not isinstance(record, dict):
        return set()
    found = {record[field]} if isinstance(record.get(field), str) else set()
    for sample in record.get("samples") or []:
        if isinstance(sample, dict) and isinstance(sample.get(field), str):
            found.add(sample[field])
    return found


def parse_identity(identity: str) -> dict[str, Any]:
    """An identity string as a judge record (`conceptcomb.scorers.judge_identity`): what
    determines the ratings, without the endpoint (unless a public API's) or a local path."""
    return judge_identity.from_identity(identity).as_dict()


# --- building -------------------------------------------------------------------------------
# The judge options a bundle keeps as the run gave them: not the endpoint (the record keeps a
# public API's), the cache or the key's variable, which say where it was asked, not who.
_JUDGE_OPTIONS = ("judge", "judge_model", "judge_max_tokens", "judge_response_format")
_JUDGE_OPTIONS += ("judge_format_retries", "judge_dtype")


def _question(benchmark: str) -> str:
    """The judge's question for a benchmark: yes/no where its judge is a verifier."""
    names = get(benchmark).judge_templates() or {}
    verifier = any(name.startswith("verifier/") for name in names)
    return judge_identity.YES_NO if verifier else judge_identity.RELEVANCE


def judge_records(
    task: TaskRun, identities: set[str], prompt_sha256: str | None
) -> list[judge_identity.JudgeRecord]:
    """The task's judges as records: those its items name, else the one its results name
    (`conceptcomb score`'s usage, Inspect's grader role), else the one its judge options
    describe (without CONCEPTCOMB_JUDGE* variables, which a run does not record: noted);
    [] for a run that names none."""
    retries = task.options.get("judge_format_retries")
    retries = int(retries) if isinstance(retries, int | str) and str(retries).isdigit() else None
    retries = judge_identity.DEFAULT_FORMAT_RETRIES if retries is None else retries
    named = set(identities)
    if not named and task.judge and isinstance(task.judge.get("identity"), str):
        named.add(task.judge["identity"])
    if named:
        return [
            judge_identity.from_identity(identity, prompt_sha256, retries)
            for identity in sorted(named)
        ]
    question = _question(task.benchmark)
    if task.judge and task.judge.get("kind") == "inspect-grader" and task.judge.get("model"):
        identity = _grader_identity(task, question)
        found = judge_identity.from_identity(identity, prompt_sha256, retries)
        return [replace(found, notes=("Inspect's grader role, as the log names it",))]
    from conceptcomb.scorers.judge_settings import JudgeSettings

    options = {k: v for k, v in task.options.items() if k in JudgeSettings.option_names()}
    if not options:
        return []  # the default judge, unless CONCEPTCOMB_JUDGE* said otherwise: not known
    try:
        settings = replace(JudgeSettings(), **options)
        settings.check()
    except (ConceptcombError, TypeError, ValueError):
        return []
    record = judge_identity.from_settings(settings, question, prompt_sha256)
    if record is None:
        return []
    note = "from the run's judge options (CONCEPTCOMB_JUDGE* variables are not recorded)"
    return [replace(record, notes=(*record.notes, note))]


def _grader_identity(task: TaskRun, question: str) -> str:
    """The identity of the Inspect grader a log names (``--model-role grader=MODEL``): an
    OpenAI chat model's as lm-eval's judge at that endpoint has it (`grader_identity`),
    another provider's ``inspect|PROVIDER/MODEL|BASE_URL|...``."""
    from conceptcomb.scorers.judge_base import chat_identity

    judge = task.judge or {}
    model, base_url = str(judge["model"]), str(judge.get("base_url") or "")
    max_tokens = int(task.options.get("judge_max_tokens") or judge_identity.DEFAULT_MAX_TOKENS)
    response_format = str(task.options.get("judge_response_format") or "text")
    provider, _, name = model.partition("/")
    if provider == "openai" and name:
        url = base_url or "https://api.openai.com/v1"
        identity = chat_identity(url, name, max_tokens, response_format)
    elif provider == "openai-api" and base_url and "/" in name:
        identity = chat_identity(base_url, name.split("/", 1)[1], max_tokens, response_format)
    else:
        identity = f"inspect|{model}|{base_url}|temperature=0|max_tokens={max_tokens}"
    return identity + (judge_identity.VERIFIER_SUFFIX if question == judge_identity.YES_NO else "")


def _judge(
    task: TaskRun,
    calibration: dict[str, Any] | None,
    identities: set[str],
    snapshots: set[str],
) -> dict[str, Any] | None:
    """The judge of a judged task: its record (`conceptcomb.scorers.judge_identity`), the
    judge options the run gave (no endpoint, cache or key), its calibration figure."""
    if not get(task.benchmark).judged(task.task):
        return None
    sha = judge_prompt_sha256(task.benchmark)
    records = judge_identity.with_snapshots(judge_records(task, identities, sha), snapshots)
    judge: dict[str, Any] = records[0].as_dict() if len(records) == 1 else {}
    if len(records) > 1:
        judge["records"] = [record.as_dict() for record in records]
    elif not records:
        judge["kind"] = None  # a run that names no judge: the default, unless CONCEPTCOMB_JUDGE*
        judge["description"] = "not recorded (gpt-4o at OpenAI, unless CONCEPTCOMB_JUDGE* was set)"
    judge["prompt_sha256"] = sha
    judge["options"] = {k: task.options[k] for k in _JUDGE_OPTIONS if k in task.options}
    judge["calibration"] = calibration
    return judge


def calibration_summary(path: Path) -> dict[str, Any]:
    """The figure from `conceptcomb judge calibrate --output`: correlations with humans."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = {row["group"]: row for row in data["correlations"]}
        return {
            "judge": data["judge"],
            "pairs": data["pairs"],
            "seed": data["seed"],
            "pearson": {group: row["pearson"] for group, row in rows.items()},
            "spearman": {group: row["spearman"] for group, row in rows.items()},
            "source_sha256": sha256_of(path),
        }
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
        raise DataFormatError(
            f"{path}: not a `conceptcomb judge calibrate --output` file ({err})."
        ) from err


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def task_record(
    run: Run, task: TaskRun, calibration: dict[str, Any] | None, intervals: bool = True
) -> dict[str, Any]:
    """The task's record; ``intervals`` False: without them (`conceptcomb compare` reads
    the items, not the intervals)."""
    datasets = dataset_records(task.benchmark, task.options)
    evidence, identities, snapshots = task_evidence(run.framework, task, datasets, run.generation)
    record = {
        "task": task.task,
        "benchmark": task.benchmark,
        "version": task.version,
        "created": task.created,
        "items": task.n_items,
        "items_total": task.n_total,
        "complete": task.complete,
        "num_fewshot": task.num_fewshot,
        "options": task.options,
        "datasets": datasets,
        "prompts": {
            "templates_sha256": templates_sha256(task.benchmark),
            "sent_sha256": sent_prompts_sha256(run.framework, task),
            "framework_task_hash": task.framework_hash,
        },
        "judge": _judge(task, calibration, identities, snapshots),
        "metrics": {
            name: {"value": _number(m.value), "stderr": _number(m.stderr)}
            for name, m in sorted(task.metrics.items())
        },
        "source": task.source.name,
        "evidence": evidence,
    }
    if intervals and "data" in evidence:  # each metric's 95% interval (`compare.intervals`)
        from conceptcomb.leaderboard.statistics.intervals import record_intervals

        data_dir = task.options.get("data_dir")
        record_intervals(record, decode(evidence, task.task), str(data_dir) if data_dir else None)
    return record


def build_bundle(
    run: Run, calibration: dict[str, Any] | None = None, intervals: bool = True
) -> dict[str, Any]:
    bundle = {
        "schema": SCHEMA_ID,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "conceptcomb_version": conceptcomb.__version__,
        "python": platform.python_version(),
        "framework": {"name": run.framework, "version": run.framework_version},
        "model": {
            "label": run.model.label,
            "name": run.model.name,
            "provider": run.model.provider,
            "args": run.model.args,
            "details": run.model.details,
        },
        "generation": run.generation,
        "tasks": [
            task_record(run, t, calibration, intervals) for _, t in sorted(run.tasks.items())
        ],
        "sources": [{"file": p.name, "sha256": sha256_of(p)} for p in run.sources],
        "notes": run.notes,
    }
    plain = json.loads(json.dumps(bundle, default=str))
    bundle = redact(without_private_hosts(without_local_paths(plain)))
    bundle["content_sha256"] = content_sha256(bundle)
    return bundle


def bundle_name(run: Run, apart: bool = False) -> str:
    """``<model>_<framework>.bundle.json``, the model as the bundle names it (no path);
    ``apart`` (another run of the model in the framework is bundled too, `merge_runs` kept
    them apart): ``<model>_<framework>_<hash>.bundle.json``, the hash of its results files'
    names, the same on every machine."""
    label = without_local_paths(run.model.label)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{label}_{run.framework}").strip("-")
    if apart:
        names = "\n".join(sorted(path.name for path in run.sources))
        stem += "_" + hashlib.sha256(names.encode()).hexdigest()[:8]
    return f"{stem}.bundle.json"


def write_bundles(
    runs: Iterable[Run], out: Path, calibration: dict[str, Any] | None = None
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    runs = list(runs)
    names = [bundle_name(run) for run in runs]
    written = []
    for run, name in zip(runs, names, strict=True):
        path = out / (bundle_name(run, apart=True) if names.count(name) > 1 else name)
        path.write_text(json.dumps(build_bundle(run, calibration), indent=2) + "\n")
        written.append(path)
    return written
