"""CCPT items in a bundle, and checking them again with the task's own scoring core.

An item's evidence: ``reply``, ``answer`` (the parsed fields, ``in_dict`` whether they came
from the requested dictionary), ``judged`` ([concept, property, rating, answer] for the
noun phrase, head and modifier questions, the order of `conceptcomb.ccpt.scoring.ROLES`: the
judge's raw answer cut at `MOST_ANSWER_CHARS`, null where it wrote none; bundles of before the
answers hold [concept, property, rating]), ``errors`` (the judge's failures) and ``scores``.
Multi-oracle items hold ``replies``, one such record per reply in ``samples`` (with that
reply's scores), and the best-of-N ``scores``.

Checking re-runs `plan_item` (parse, the judge questions the answer asks) and `finish_item`
(the metrics from the stored ratings) on the item as the pinned dataset holds it; a stored
answer is read again with the judge's parser (`parse_relevance`, or the local judge's
expected rating) and must give the stored rating.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from conceptcomb.ccpt.answers import LEMMA
from conceptcomb.ccpt.data import CCPT_DATASET, CcptItem, load_items
from conceptcomb.ccpt.docs import chat_messages
from conceptcomb.ccpt.methods.oracle import base_spec, best_of, oracle_metric_infos
from conceptcomb.ccpt.metrics import aggregate
from conceptcomb.ccpt.modifiers import SURFACE
from conceptcomb.ccpt.scoring import ItemScore, finish_item, plan_item, without_judge
from conceptcomb.ccpt.tasks import CcptTaskSpec, spec_by_name
from conceptcomb.common.evidence import (
    ItemSet,
    ItemView,
    JudgedQuestion,
    RawItem,
    answer_cut,
    close,
    defined,
    kept_answer,
)
from conceptcomb.scorers.judge_base import JudgeReply, shorten
from conceptcomb.scorers.local_judge import expected_rating
from conceptcomb.scorers.relevance import parse_relevance

FAILED_IN_RUN = "the judge failed on this question in the run"
ANSWER_METHOD = (
    "conceptcomb.ccpt.answers: the JSON dictionary the prompt asks for (in_dict), else the "
    "fields found in the text; noun phrase completion's modifier by the npc_modifier rule"
)


@lru_cache(maxsize=32)
def _items(task: str, data_dir: str | None) -> tuple[CcptItem, ...]:
    return tuple(load_items(spec_by_name(task), data_dir))


def _content(item: CcptItem) -> tuple[str, ...]:
    return (item.combination, item.root, item.modifier, item.property, item.label)


@lru_cache(maxsize=32)
def _by_content(task: str, data_dir: str | None) -> dict[tuple[str, ...], str]:
    return {_content(item): item.item_id for item in _items(task, data_dir)}


def _scores_text(scores: dict[str, float], names: list[str]) -> str:
    return ", ".join(f"{n}={scores[n]:g}" if n in scores else f"{n}=–" for n in names)


class CcptEvidence:
    # Items of one noun phrase share it (its head, modifier and reading): their scores are
    # not independent, so standard errors are clustered by it
    # (`conceptcomb.leaderboard.statistics.stats`).
    UNIT = "noun phrase"

    def unit(self, task: str, doc: Any) -> str | None:
        """The item's noun phrase, from its doc or test item (lower-cased)."""
        found = (
            doc.get("combination") if isinstance(doc, dict) else getattr(doc, "combination", None)
        )
        return str(found).strip().lower() if found else None

    def task_settings(self, task: str) -> dict[str, str]:
        """What the task's name fixes (``compare --variants`` names it: "method: base vs
        cot" of ccpt_npc_emergent and ccpt_npc_emergent_cot)."""
        spec = spec_by_name(task)
        return {"kind": spec.kind, "method": spec.method, "subset": spec.subset}

    def explorer_fields(self, task: str, item: CcptItem) -> dict[str, str]:
        """What the item explorer filters CCPT's items by (`conceptcomb.leaderboard.explore`):
        the property's type (the annotators' majority label) and whether the task asks for
        emergent or canceled properties (its noun phrase is the item's unit, searched)."""
        kind = spec_by_name(task).kind
        asked = [name for name in ("emergent", "canceled") if name in kind]
        return {"property type": item.label, **({"asks for": asked[0]} if asked else {})}

    def explorer_references(self, task: str, item: CcptItem) -> list[str]:
        """The dataset's property of the item (the gold the judge's questions rate against)."""
        return [item.property] if item.property else []

    def explorer_questions(self, task: str, evidence: dict[str, Any]) -> list[JudgedQuestion]:
        """Each judge question (concept, property) with its rating and the judge's raw
        answer where the bundle holds it (a multi-oracle item's: each reply's, numbered)."""
        records = _records(task, evidence)
        found = []
        for number, record in enumerate(records, start=1):
            prefix = f"reply {number}: " if len(records) > 1 else ""
            found += [
                JudgedQuestion(f"{prefix}{row[0]} — {row[1]}", _rating_text(row[2]), _answer(row))
                for row in record.get("judged") or []
                if isinstance(row, list) and len(row) >= 3
            ]
        return found

    # --- building ------------------------------------------------------------------------
    def item_key(self, task: str, doc: dict[str, Any], data_dir: str | None = None) -> str | None:
        """The doc's item id, or the test item with the same fields (a user's JSONL)."""
        key = str(doc.get("item_id") or "")
        if key:
            return key
        try:
            item = CcptItem.from_doc(doc)
        except Exception:  # a doc without the item fields: no key
            return None
        return _by_content(task, data_dir).get(_content(item))

    def evidence_item(self, task: str, raw: RawItem) -> dict[str, Any]:
        spec = spec_by_name(task)
        if spec.oracle:
            samples = (raw.record or {}).get("samples") or []
            records = []
            for k, reply in enumerate(raw.replies):
                sample = samples[k] if k < len(samples) else None
                record = _reply_evidence(base_spec(spec), raw.doc, reply, sample)
                if sample is not None:  # each reply's own scores, the best of them below
                    record["scores"] = defined(sample.get("metrics"))
                records.append(record)
            return {
                "replies": [record.pop("reply") for record in records],
                "samples": records,
                "scores": defined(raw.scores),
            }
        reply = raw.replies[0] if raw.replies else ""
        return {**_reply_evidence(spec, raw.doc, reply, raw.record), "scores": defined(raw.scores)}

    def item_view(self, task: str, evidence: dict[str, Any]) -> ItemView:
        """Each reply's parsed fields as JSON; no reference: the gold stays in the pinned
        dataset, which conceptcomb does not redistribute (the item's id names it)."""
        records = evidence.get("samples") if spec_by_name(task).oracle else [evidence]
        answers = [
            "" if record.get("answer") is None else json.dumps(record["answer"], ensure_ascii=False)
            for record in records or []
            if isinstance(record, dict)
        ]
        return ItemView(answers, ANSWER_METHOD, [])

    # --- checking ------------------------------------------------------------------------
    def chat_messages(
        self, task: str, item: CcptItem, evidence: dict[str, Any], options: dict[str, Any]
    ) -> list[tuple[str, str]] | None:
        """What the task sends the pinned item (None for spreading activation: its
        concepts come from the run)."""
        return chat_messages(task, item.as_doc(), options)

    def check_options(
        self, task: str, options: dict[str, Any], items: list[dict[str, Any]]
    ) -> list[str]:
        """``npc_modifier``, where recorded: a rule of the task, the one its items judged."""
        rule = options.get("npc_modifier")
        if rule is None:
            return []
        if rule not in (LEMMA, SURFACE):
            return [f"npc_modifier={rule!r} is not a rule of the task ({LEMMA} or {SURFACE})"]
        records = [record for evidence in items for record in _records(task, evidence)]
        used = {record.get("npc_modifier") for record in records} - {None}
        if used - {rule}:
            return [f"npc_modifier={rule}, but its items judged with {', '.join(sorted(used))}"]
        return []

    def test_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> ItemSet:
        items = _items(task, data_dir)
        shas = {Path(f.name).stem: f.sha256 for f in CCPT_DATASET.files}
        return ItemSet({item.item_id: item for item in items}, shas)

    def check_item(self, task: str, item: CcptItem, evidence: dict[str, Any]) -> list[str]:
        spec = spec_by_name(task)
        if not spec.oracle:
            problems, metrics = _check_reply(spec, item, evidence)
            return problems or _check_scores(evidence, metrics, "its answer and ratings")
        replies, samples = evidence.get("replies"), evidence.get("samples")
        if not isinstance(replies, list) or not isinstance(samples, list) or not replies:
            return ["a multi-oracle item needs its replies and one record per reply"]
        if len(replies) != len(samples):
            return [f"{len(replies)} replies but {len(samples)} reply records"]
        problems, scored = [], []
        for number, (reply, sample) in enumerate(zip(replies, samples, strict=True), start=1):
            found, metrics = _check_reply(base_spec(spec), item, {**sample, "reply": reply})
            if not found and "scores" in sample:
                found = _check_scores(sample, metrics, "its answer and ratings")
            problems += [f"reply {number}: {problem}" for problem in found]
            scored.append(metrics or {})
        if problems:
            return problems
        return _check_scores(evidence, best_of(spec, scored), "the best of its replies")

    def aggregate(
        self, task: str, scores: list[dict[str, float]]
    ) -> dict[str, tuple[float, float | None]]:
        spec = spec_by_name(task)
        infos = oracle_metric_infos(spec) if spec.oracle else None
        return {
            name: (value.value, value.stderr)
            for name, value in aggregate(spec, scores, infos).items()
        }

    # --- asking the judge again ----------------------------------------------------------
    def rescore_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> dict:
        return {item.item_id: item for item in _items(task, data_dir)}

    def questions(
        self, task: str, item: CcptItem, evidence: dict[str, Any]
    ) -> list[tuple[str, float | None]]:
        """(prompt, stored rating) of every question the item's replies ask."""
        asked = []
        for spec, record in _replies(spec_by_name(task), evidence):
            planned = _plan(spec, item, record)
            stored = [row[2] for row in record.get("judged") or []]
            ratings = stored if len(stored) == len(planned.questions) else [None] * 3
            asked += [
                (question.prompt, rating)
                for question, rating in zip(planned.questions.values(), ratings, strict=False)
            ]
        return asked

    def rescored(
        self, task: str, item: CcptItem, evidence: dict[str, Any], ratings: dict[str, Any]
    ) -> dict[str, float]:
        spec = spec_by_name(task)
        scored = []
        for reply_spec, record in _replies(spec, evidence):
            planned = _plan(reply_spec, item, record)
            done = finish_item(reply_spec, planned, ratings) if planned.questions else planned
            scored.append(done.metrics)
        return defined(best_of(spec, scored) if spec.oracle else scored[0])


def _plan(spec: CcptTaskSpec, item: CcptItem, evidence: dict[str, Any]) -> ItemScore:
    """The reply parsed and its questions, with the modifier rule the run judged with."""
    rule = evidence.get("npc_modifier") or LEMMA
    return plan_item(spec, item, str(evidence.get("reply", "")), rule)


def _replies(
    spec: CcptTaskSpec, evidence: dict[str, Any]
) -> list[tuple[CcptTaskSpec, dict[str, Any]]]:
    """(the spec a reply is scored with, its record with the reply) of each reply."""
    if not spec.oracle:
        return [(spec, evidence)]
    replies, samples = evidence.get("replies") or [], evidence.get("samples") or []
    return [
        (base_spec(spec), {**sample, "reply": reply})
        for reply, sample in zip(replies, samples, strict=False)
    ]


def _records(task: str, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """An item's per-reply records (a multi-oracle item's samples; else the item itself)."""
    if spec_by_name(task).oracle:
        return [s for s in evidence.get("samples") or [] if isinstance(s, dict)]
    return [evidence]


def _reply_evidence(
    spec: CcptTaskSpec, doc: dict[str, Any], reply: str, record: dict[str, Any] | None
) -> dict[str, Any]:
    """One reply's evidence from the core's record (`ItemScore.to_json`)."""
    if record is None:
        # The run kept only the metrics (lm-eval's type prediction has no filter): what it
        # parsed is what the same core parses now.
        record = plan_item(spec, CcptItem.from_doc(doc), reply).to_json()
        record["judged"] = {}
    evidence: dict[str, Any] = {"reply": reply, "answer": record.get("answer")}
    if evidence["answer"] is not None:
        evidence["in_dict"] = record.get("answer_in_dict_format")
    rule = (record.get("modifier") or {}).get("rule")
    if rule:  # noun phrase completion: the modifier rule the run judged with
        evidence["npc_modifier"] = rule
    judged = record.get("judged") or {}
    errors = list(record.get("errors") or [])
    questions = list(judged.values())
    rows = [[q.get("concept"), q.get("property"), q.get("rating")] for q in questions]
    if any("reply" in q for q in questions):  # the judge's answers, where recorded
        rows = [[*row, kept_answer(q.get("reply"))] for row, q in zip(rows, questions, strict=True)]
    # Questions without a rating and without a failure: the judge was off.
    if rows and (errors or any(row[2] is not None for row in rows)):
        evidence["judged"] = rows
    if errors:
        evidence["errors"] = errors
    return evidence


def _check_reply(
    spec: CcptTaskSpec, item: CcptItem, evidence: dict[str, Any]
) -> tuple[list[str], dict[str, float] | None]:
    """Problems of one reply's evidence, and the metrics its stored ratings give."""
    reply = evidence.get("reply")
    if not isinstance(reply, str):
        return ["no reply stored"], None
    planned = _plan(spec, item, evidence)
    parsed = planned.answer.fields if planned.answer else None
    in_dict = planned.answer.in_dict if planned.answer else None
    same = parsed == evidence.get("answer")
    if not same or (parsed is not None and in_dict != evidence.get("in_dict")):
        return [
            f"the stored reply parses to {json.dumps(parsed)} (in the dictionary: {in_dict}), "
            f"but the bundle stores the answer {json.dumps(evidence.get('answer'))} "
            f"(in the dictionary: {evidence.get('in_dict')})"
        ], None
    judged = evidence.get("judged")
    if judged is None:
        result = without_judge(spec, planned) if planned.questions else planned
        return [], result.metrics
    asked = [[q.concept, q.prop] for q in planned.questions.values()]
    rows_ok = isinstance(judged, list) and all(_row_ok(row) for row in judged)
    if not rows_ok or [row[:2] for row in judged] != asked:
        return [
            f"the judge questions stored, {json.dumps(judged)[:400]}, are not the ones its "
            f"answer asks: {json.dumps(asked)}"
        ], None
    problems = [p for n, row in enumerate(judged, start=1) for p in _answer_problems(n, row)]
    if problems:
        return problems, None
    return [], _from_ratings(spec, planned, [row[2] for row in judged]).metrics


def _row_ok(row: Any) -> bool:
    """[concept, property, rating] (a bundle of before the answers) or with the judge's
    answer (text, or null where it wrote none) as a 4th element."""
    if not isinstance(row, list) or len(row) not in (3, 4):
        return False
    return len(row) == 3 or row[3] is None or isinstance(row[3], str)


def _answer(row: list[Any]) -> str | None:
    return row[3] if len(row) > 3 and isinstance(row[3], str) else None


def _rating_text(rating: Any) -> str:
    if rating is None:
        return "failed"
    return f"{rating:g}" if isinstance(rating, float) else str(rating)


def answer_rating(answer: str) -> float | None:
    """The rating the judge's answer gives: the local judge's expected rating (to 4
    decimals), else the 1-10 rating `parse_relevance` reads (None: the answer holds none)."""
    expected = expected_rating(answer)
    if expected is not None:
        return expected
    parsed = parse_relevance(answer)
    return None if parsed is None else float(parsed)


def _rating_matches(rating: Any, parsed: float | None, answer: str) -> bool:
    if rating is None or parsed is None:
        return rating is None and parsed is None
    if isinstance(rating, bool) or not isinstance(rating, int | float):
        return False
    if expected_rating(answer) is not None:  # written to 4 decimals
        return abs(rating - parsed) <= 5e-5 + 1e-9
    return close(float(rating), parsed)


def _answer_problems(number: int, row: list[Any]) -> list[str]:
    """The stored rating against what the judge's stored answer gives (none for a row
    without an answer, or with one cut at `MOST_ANSWER_CHARS`)."""
    answer = _answer(row)
    if answer is None or answer_cut(answer):
        return []
    parsed = answer_rating(answer)
    if _rating_matches(row[2], parsed, answer):
        return []
    return [
        f"judge question {number} ({row[0]}, {row[1]}): the bundle stores the rating "
        f"{row[2]}, but the judge's answer it stores ({shorten(answer, 120)!r}) gives "
        f"{'no rating' if parsed is None else f'{parsed:g}'}"
    ]


def _from_ratings(spec: CcptTaskSpec, planned: ItemScore, ratings: list[Any]) -> ItemScore:
    replies = {
        question.prompt: JudgeReply(rating=None, error=FAILED_IN_RUN)
        if rating is None
        else JudgeReply(rating=float(rating))
        for question, rating in zip(planned.questions.values(), ratings, strict=True)
    }
    return finish_item(spec, planned, replies)


def _check_scores(evidence: dict[str, Any], metrics: dict[str, float] | None, what: str) -> list:
    computed = defined(metrics)
    stored = evidence.get("scores")
    if not isinstance(stored, dict):
        return ["no per-item scores stored"]
    names = computed.keys() | stored.keys()
    differ = sorted(n for n in names if not close(computed.get(n), stored.get(n)))
    if not differ:
        return []
    return [
        f"the per-item scores stored ({_scores_text(stored, differ)}) are not those "
        f"{what} give ({_scores_text(computed, differ)})"
    ]


# What the contract reads (`conceptcomb.common.contract.Benchmark.evidence`): the class
# whose instance checks this benchmark's items in bundles.
EVIDENCE = CcptEvidence
