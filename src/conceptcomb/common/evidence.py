"""Per-item evidence of a run: what a bundle carries so that a maintainer can check it.

For every item a bundle stores its stable id (the sha256 of the dataset file the item comes
from and the item's key there), the raw model reply (N replies for the multi-oracle), what
the task parsed from it, each judge question with the judge's rating, and the per-item
scores the framework aggregated. The records come from where the frameworks keep them:

* lm-eval: the ``samples_<task>_*.jsonl`` beside the results (``--log_samples``);
* Inspect: the log's samples;
* ``conceptcomb score``: its ``--samples-output`` file.

In all three the per-item record is the one the shared scoring core wrote
(`conceptcomb.ccpt.scoring.ItemScore.to_json` ...), so the same reply gives the same
evidence whichever framework ran it. Each benchmark's `EvidenceAdapter` turns those records
into compact evidence items and checks them again (`conceptcomb.leaderboard.checks.verify`).

In the bundle the items of a task are one gzip-compressed, base64-encoded JSON array
(``tasks[i].evidence.data``) with the sha256 of the uncompressed JSON beside it.
"""

from __future__ import annotations

import ast
import base64
import gzip
import hashlib
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from conceptcomb.common.errors import DataFormatError

EVIDENCE_FORMAT = "conceptcomb-evidence/1"
ENCODING = "gzip+base64"


@dataclass
class RawItem:
    """One item as a run recorded it, before it becomes evidence."""

    doc: dict[str, Any]  # the item as the run saw it (lm-eval doc, Inspect metadata)
    replies: list[str]  # the raw reply (N of them for the multi-oracle)
    record: dict[str, Any] | None  # the scoring core's per-item record, when kept
    scores: dict[str, float]  # the per-item metrics the framework aggregated (defined only)
    # What the framework sent the model, as the bundle's ``sent_sha256`` hashes it (None:
    # not recorded, e.g. `conceptcomb score` on saved replies): lm-eval ``[doc_id,
    # arguments]``, Inspect ``[sample id, epoch, [[role, text], ...]]``.
    prompt: list[Any] | None = None


@dataclass(frozen=True)
class ItemView:
    """How one evidence item reads in other formats (Every Eval Ever's instance rows): what
    only the benchmark knows about it, derived from the item alone."""

    answers: list[str]  # what the task parsed from each reply, as text ("" for none)
    method: str  # how it parsed them
    references: list[str]  # what it was scored against, as the item holds it (ids or text)
    source: str = "output.raw"  # where the answers were read ("metadata.loglikelihoods"...)
    choices: tuple[str, ...] | None = None  # the answers a log-likelihood task compares


class EvidenceAdapter(Protocol):
    """What a benchmark provides to put its items in a bundle and check them again."""

    def item_key(self, task: str, doc: dict[str, Any], data_dir: str | None = None) -> str | None:
        """The item's key, ``<dataset file stem>:<key in that file>`` (None: unknown)."""

    def evidence_item(self, task: str, raw: RawItem) -> dict[str, Any]:
        """The compact evidence of one item (without its id)."""

    def item_view(self, task: str, evidence: dict[str, Any]) -> ItemView:
        """The item's answers, how they were parsed and its references (leaderboard exports)."""

    def test_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> ItemSet:
        """The task's items in the pinned dataset, by key (cheap to load)."""

    def check_item(self, task: str, item: Any, evidence: dict[str, Any]) -> list[str]:
        """What is wrong with one item's evidence (empty: it holds)."""

    def aggregate(
        self, task: str, scores: list[dict[str, float]]
    ) -> dict[str, tuple[float, float | None]]:
        """The task's metrics (value, standard error) from per-item scores."""

    def rescore_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> dict:
        """The items as rescoring needs them, by key."""

    def questions(
        self, task: str, item: Any, evidence: dict[str, Any]
    ) -> list[tuple[str, float | None]]:
        """(judge prompt, stored rating) of every judge question of one item."""

    def rescored(
        self, task: str, item: Any, evidence: dict[str, Any], ratings: dict[str, Any]
    ) -> dict[str, float]:
        """The item's scores from the judge's new replies (keyed by prompt)."""


class StartsEarly(Protocol):
    """What a benchmark whose checks wait on a slow tool adds to `EvidenceAdapter`: before
    a bundle's tasks are checked, ``start`` sets the tool going without waiting for it
    (CGGC: METEOR's JVM, ~8 s to load its tables), so that it loads while the test set,
    spaCy and the items are checked; once per process."""

    def start(self, task: str) -> None:
        """Start what checking the task's evidence will wait on; never raise."""

    def stop(self) -> None:
        """End what ``start`` started (a command ends with it); never raise."""


class Explorable(Protocol):
    """What a benchmark adds to `EvidenceAdapter` for the item explorer
    (`conceptcomb.leaderboard.explore`): its own fields to filter items by, and the
    references shown beside the replies, both from the test item ``test_set`` holds."""

    def explorer_fields(self, task: str, item: Any) -> dict[str, str]:
        """Field name -> the item's value ("structure type" -> "A")."""

    def explorer_references(self, task: str, item: Any) -> list[str]:
        """What the item's replies are scored against, as text."""


@dataclass
class Recomputed:
    """A task's metrics recomputed from its stored items (corpus-level metrics: BLEU, CIDEr,
    macro-F1, AUC... are not means of per-item scores)."""

    metrics: dict[str, tuple[float, float | None]]  # metric -> (value, standard error)
    # metric -> why it could not be recomputed on this machine (Java missing for METEOR...):
    # reported as "not re-checked: <reason>", never as passing.
    not_rechecked: dict[str, str] = field(default_factory=dict)


class CorpusRecheck(Protocol):
    """What a benchmark with corpus-level metrics adds to `EvidenceAdapter`: when an adapter
    has ``recompute``, the offline check uses it instead of ``aggregate``."""

    def recompute(
        self, task: str, options: dict[str, Any], pairs: list[tuple[Any, dict[str, Any]]]
    ) -> Recomputed:
        """The task's metrics from (test item, evidence) of every item whose checks passed
        or not (each test item at most once, in the bundle's order)."""


@dataclass(frozen=True)
class CorpusInputs:
    """What a corpus metric needs of each item to be computed again on bootstrap resamples
    (`conceptcomb.leaderboard.statistics.corpus` builds the computation ``kind`` names): one
    record per item, in the order of the items given, None for an item the metric leaves out (a
    ``_verified`` metric's unverified items)."""

    kind: str  # "coco-bleu", "coco-cider", "nmt-bleu", "macro-f1", "auc"
    records: list[Any]
    scale: float = 1.0  # the metric's factor (x100 for a percentage)
    part: Any = None  # the BLEU order ("coco-bleu": 3), the nmt part ("precision_1")


class Clustering(Protocol):
    """What a benchmark whose items share a unit adds to `EvidenceAdapter`: the unit's name
    (``UNIT``, "noun phrase") and each item's unit, from its doc (lm-eval doc, Inspect
    metadata) or its test item. Standard errors are clustered by it
    (`conceptcomb.leaderboard.statistics.stats.clustered_stderr`); a bundle's evidence items
    carry it."""

    UNIT: str

    def unit(self, task: str, doc: Any) -> str | None:
        """The item's unit (None: unknown)."""


class CorpusResampling(Protocol):
    """What a benchmark with corpus-level metrics adds to `EvidenceAdapter` for their
    bootstrap intervals and comparisons (and, optionally, ``reference_set(task, options,
    data_dir) -> ItemSet``: the test items as ``corpus_inputs`` needs them, where
    ``test_set`` does more work, e.g. CGGC's demonstrations)."""

    def corpus_inputs(
        self, task: str, options: dict[str, Any], pairs: list[tuple[Any, dict[str, Any]]]
    ) -> dict[str, CorpusInputs]:
        """Corpus metric -> its inputs, from (test item, evidence) of each item in order."""


@dataclass
class ItemSet:
    items: Mapping[str, Any]  # key -> the benchmark's item (CGGC: drawn when looked up)
    file_sha256: dict[str, str]  # file stem -> the pinned sha256

    def item_id(self, key: str) -> str | None:
        sha = self.file_sha256.get(key.split(":", 1)[0])
        return f"{sha}:{key}" if sha else None


def missing_reason(benchmark: str) -> str:
    return (
        f"per-item checks of {benchmark} are not implemented yet (corpus-level metrics): its "
        "rows stay unverified"
    )


@dataclass(frozen=True)
class JudgedQuestion:
    """One question a judge decided, as the item explorer shows it: the question, the
    rating or verdict (``failed`` where the judge gave none) and the judge's raw answer
    (None where the bundle holds none: a bundle of before the answers, a failed request)."""

    question: str
    rating: str
    answer: str | None


class JudgeAnswers(Protocol):
    """An adapter whose items hold a judge's questions (CCPT's ratings, CGGC's verdicts):
    each item's questions for the item explorer (`conceptcomb.leaderboard.explore`)."""

    def explorer_questions(self, task: str, evidence: dict[str, Any]) -> list[JudgedQuestion]:
        """The item's judge questions, in the order the bundle stores them."""


# --- the judge's raw answers -------------------------------------------------------------------
# A judge's answer is kept in the evidence up to this many characters (the judge's
# max_tokens bounds it in practice; a bundle must not grow without limit whatever it wrote).
MOST_ANSWER_CHARS = 2_000
_CUT = re.compile(r" … \[cut: [\d,]+ characters in all\]")


def kept_answer(answer: Any) -> str | None:
    """A judge's raw answer as the evidence keeps it: cut at `MOST_ANSWER_CHARS`, saying
    how long it was; None for no answer (none recorded, or an empty one)."""
    if not isinstance(answer, str) or not answer:
        return None
    if len(answer) <= MOST_ANSWER_CHARS:
        return answer
    return answer[:MOST_ANSWER_CHARS] + f" … [cut: {len(answer):,} characters in all]"


def answer_cut(answer: str) -> bool:
    """Whether a stored answer is one `kept_answer` cut (then its rating cannot be read
    from it again: the part that held it may be gone)."""
    found = _CUT.search(answer, MOST_ANSWER_CHARS)
    return found is not None and found.start() == MOST_ANSWER_CHARS and found.end() == len(answer)


# --- numbers ---------------------------------------------------------------------------------
def defined(values: dict[str, Any] | None) -> dict[str, float]:
    """Finite numbers only: NaN and None mark undefined values, left out as the means do."""
    out = {}
    for name, value in (values or {}).items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if math.isfinite(value):
            out[name] = float(value)
    return out


def close(a: float | None, b: float | None) -> bool:
    """Equal up to floating-point rounding (the frameworks sum in their own order)."""
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


# --- encoding --------------------------------------------------------------------------------
def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def encode(items: list[dict[str, Any]]) -> dict[str, Any]:
    body = _canonical(items)
    packed = gzip.compress(body, compresslevel=9, mtime=0)
    return {
        "format": EVIDENCE_FORMAT,
        "items": len(items),
        "encoding": ENCODING,
        "sha256": hashlib.sha256(body).hexdigest(),
        "data": base64.b64encode(packed).decode("ascii"),
    }


def decode(record: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The items of an evidence record; DataFormatError naming ``where`` when unreadable."""
    try:
        body = gzip.decompress(base64.b64decode(record["data"], validate=True))
        items = json.loads(body)
    except (KeyError, TypeError, ValueError, OSError, EOFError) as err:
        raise DataFormatError(f"{where}.data: not gzip+base64 JSON ({err})") from err
    if hashlib.sha256(body).hexdigest() != record.get("sha256"):
        raise DataFormatError(
            f"{where}.sha256 does not match the items: the evidence was edited after it was written"
        )
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise DataFormatError(f"{where}.data: expected a list of item objects")
    return items


# --- reading the runs' records ---------------------------------------------------------------
@lru_cache(maxsize=8)
def full_inspect_log(path: str) -> Any:
    """An Inspect log with its samples (read once for the prompts' hash and the evidence)."""
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(path)
    except ValueError as err:  # JSON Inspect's reader refuses, as a lone surrogate's escape
        cause = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataFormatError(
            f"{path}: Inspect cannot read this log's samples ({cause}): the file was cut short "
            "or edited; run the task again, or leave this log out of the folder."
        ) from err


def lm_eval_samples_path(results: Path, task: str) -> Path | None:
    stamp = results.stem.removeprefix("results_")
    path = results.parent / f"samples_{task}_{stamp}.jsonl"
    return path if path.is_file() else None


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise DataFormatError(f"{path}:{number}: not a JSON line ({err}).") from err


def _as_record(value: Any) -> dict[str, Any] | None:
    """The scoring core's record that lm-eval logged as a filter's output: lm-eval writes
    it as Python prints a dict (``str``), read back with `ast.literal_eval` (literals only)."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value.startswith("{"):
        return None
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return None
    # CGGC's verification filter writes {"reply", "verification"} (no metrics of its own).
    wanted = ("metrics", "verification")
    return parsed if isinstance(parsed, dict) and any(k in parsed for k in wanted) else None


def lm_eval_items(samples: Path) -> list[RawItem]:
    rows = sorted(_json_lines(samples), key=lambda row: row.get("doc_id", 0))
    items = []
    for row in rows:
        resps = row.get("resps") or [[]]
        replies = [str(reply) for reply in (resps[0] if resps else [])]
        if len(resps) > 1:  # multiple_choice: per answer, [[log-likelihood, is_greedy]]
            replies = [str(r[0][0]) if r and isinstance(r[0], list) else str(r) for r in resps]
        filtered = row.get("filtered_resps") or [None]
        metrics = {name: row.get(name) for name in row.get("metrics") or []}
        # Without a filter ("none") the filtered response is the reply itself.
        record = _as_record(filtered[0]) if row.get("filter") != "none" else None
        prompt = lm_eval_prompt(row)
        items.append(RawItem(row.get("doc") or {}, replies, record, metrics, prompt))
    return items


def lm_eval_prompt(row: dict[str, Any]) -> list[Any]:
    """What lm-eval sent for one sample: its doc id and request arguments (the prompt as
    the model received it, chat template applied, with the generation settings)."""
    return [row.get("doc_id"), row.get("arguments")]


def inspect_prompt(sample: Any) -> list[Any]:
    """What Inspect sent for one sample: the conversation before the model's last reply
    (system, demonstrations, the question: what solvers added included)."""
    messages = list(sample.messages or [])
    if messages and messages[-1].role == "assistant":
        messages = messages[:-1]
    if not messages:  # a sample that never reached the model
        messages = [sample.input] if isinstance(sample.input, str) else list(sample.input)
    turns = [["user", m] if isinstance(m, str) else [m.role, m.text] for m in messages]
    return [str(sample.id), sample.epoch, turns]


Turns = list[list[str]]  # [[role, text], ...]: chat messages as a bundle records them


def turns_of(messages: Any) -> Turns | None:
    """``[[role, text], ...]`` from (role, text) pairs or ``{"role", "content"}`` dicts
    (None unless every message is one, with text)."""
    if not isinstance(messages, list | tuple) or not messages:
        return None
    turns = []
    for message in messages:
        if isinstance(message, dict):
            message = (message.get("role"), message.get("content"))
        if not isinstance(message, list | tuple) or len(message) != 2:
            return None
        role, text = message
        if not isinstance(role, str) or not isinstance(text, str):
            return None
        turns.append([role, text])
    return turns


def lm_eval_sent_text(arguments: Any) -> str | None:
    """The prompt text of an lm-eval sample's first request (``arg_0``)."""
    if not isinstance(arguments, dict):
        return None
    requests = [arguments[key] for key in sorted(arguments) if isinstance(arguments[key], dict)]
    text = requests[0].get("arg_0") if requests else None
    if isinstance(text, list) and len(text) == 1:  # an API model's chat: a JsonChatStr tuple
        text = text[0]
    return text if isinstance(text, str) else None


def lm_eval_recorded_turns(text: str) -> Turns | None:
    """The messages lm-eval recorded as sent, where its model sends chat messages (API
    models: the prompt is their JSON), else None (a local model's chat template applied)."""
    if not text.startswith("["):
        return None
    try:
        return turns_of(json.loads(text))
    except json.JSONDecodeError:
        return None


def appear_in_order(turns: Turns, text: str) -> bool:
    """Whether each message's text appears in ``text`` (a chat-templated prompt), in order:
    what ties messages rendered from a doc to the prompt a local model received (templates
    may trim a message's outer whitespace, so the check does too)."""
    position = 0
    for _, content in turns:
        found = text.find(content.strip(), position)
        if found < 0:
            return False
        position = found + len(content.strip())
    return True


def evidence_turns(evidence: dict[str, Any]) -> Turns | None:
    """The chat messages an evidence item says were sent: its ``messages`` (lm-eval runs,
    rendered from the doc and checked against the prompt), else the conversation of its
    ``prompt`` record (Inspect: the log's; ``conceptcomb score``: the task's rendering)."""
    if "messages" in evidence:
        return turns_of(evidence["messages"])
    prompt = evidence.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 3:
        return turns_of(prompt[2])
    return None


def prompts_sha256(prompts: list[Any]) -> str:
    """sha256 of a task's sent prompts (`lm_eval_prompt`, `inspect_prompt`), in a fixed
    order: by sample id, then epoch."""
    ordered = sorted(prompts, key=lambda p: (str(p[0]), p[1] if isinstance(p[1], int) else 0))
    return hashlib.sha256(_canonical(ordered)).hexdigest()


# The key of an Inspect score's metadata holding the item's counts and grouped means, kept
# out of the score's value (`conceptcomb.frameworks.inspect_tasks.ItemMetrics`).
GROUPED_METRICS = "grouped_metrics"


def score_values(score: Any) -> dict[str, Any]:
    """An Inspect score's per-item metrics: its value's keys and the counts and grouped
    means kept in its metadata (`conceptcomb.frameworks.inspect_tasks.ItemMetrics`)."""
    value = score.value if isinstance(score.value, dict) else {}
    grouped = score.metadata.get(GROUPED_METRICS) if isinstance(score.metadata, dict) else None
    return {**value, **(grouped if isinstance(grouped, dict) else {})}


def inspect_items(log_path: Path) -> tuple[list[RawItem], str | None]:
    """The log's samples; with a reason instead when they cannot serve as evidence."""
    log = full_inspect_log(str(log_path))
    samples = log.samples or []
    if not samples:
        return [], "the Inspect log holds no samples"
    if any(sample.epoch != 1 for sample in samples):
        return [], "the Inspect run has several epochs: per-item evidence takes one reply per item"
    items = []
    for sample in samples:
        if sample.output is None or not sample.scores:
            return [], f"sample {sample.id} of the Inspect log has no output or no score"
        choices = sample.output.choices
        replies = (
            [choice.message.text for choice in choices]
            if len(choices) > 1
            else [sample.output.completion]
        )
        score = next(iter(sample.scores.values()))
        metadata = score.metadata if isinstance(score.metadata, dict) else None
        doc, scores = dict(sample.metadata or {}), score_values(score)
        items.append(RawItem(doc, replies, metadata, scores, inspect_prompt(sample)))
    return items, None


def score_items(samples: Path) -> list[RawItem]:
    """A ``conceptcomb score --samples-output`` file: the core's records with the replies
    and, where it records them, the chat messages the task would have sent each item
    (`rescored_prompt`)."""
    items = []
    for row in _json_lines(samples):
        replies = row.get("responses") or [row.get("response", "")]
        doc = row.get("doc") or {"item_id": row.get("item_id", "")}
        turns = turns_of(row.get("messages"))
        prompt = rescored_prompt(doc, turns) if turns else None
        items.append(RawItem(doc, [str(r) for r in replies], row, row.get("metrics") or {}, prompt))
    return items


def rescored_prompt(doc: dict[str, Any], turns: Turns) -> list[Any]:
    """The prompt record of a rescored item, as Inspect's (`inspect_prompt`) without an
    epoch: ``[item id, None, [[role, text], ...]]``, the task's rendering of its doc."""
    return [str(doc.get("item_id", "")), None, turns]
