"""CGGC items in a bundle, and their metrics recomputed from the stored replies.

An item's evidence: ``reply`` (raw), ``answer`` (the sentence the task scored,
`scoring.prediction_of`), ``demonstrations`` and ``references`` (stable ids of the pinned
dataset's items, in order), ``verification`` for ``_verified`` tasks (``edges``: [head,
relation, tail, verdict, answer] per question, verdict None where the judge failed, answer
the judge's raw answer cut at `MOST_ANSWER_CHARS`, None where it wrote none; bundles of before
the answers hold [head, relation, tail, verdict]; ``verified``, ``failed``) and ``scores``
(the per-item values the framework aggregated).

Checking: the answer is the reply cleaned again; the demonstrations are those the task's
sampler gives the item with the run's options (seed, k, packaging...); the reference is the
item's own (each CGGC item is scored against its own sentence); the questions are the
item's edges; a stored answer, read again with the verifier's parser (`parse_verdict`),
gives the stored verdict; the per-item scores follow from the answer and the verdicts.
Every corpus metric is then recomputed from the answers and the pinned references with the
tasks' code (`conceptcomb.cggc.metrics`); METEOR without Java and SPICE without its jars are
"not re-checked" on this machine.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from conceptcomb.cggc import metrics
from conceptcomb.cggc.data import (
    PACKAGED_SHA256,
    POOL_FILE,
    TEST_FILE,
    CggcItem,
    _find_file,
    dataset_dir,
    load_dataset,
    read_bytes,
)
from conceptcomb.cggc.docs import chat_messages, task_pair, task_pairs
from conceptcomb.cggc.metrics import Scored
from conceptcomb.cggc.scoring import prediction_of
from conceptcomb.cggc.tasks import CggcTaskSpec, TaskOptions, spec_by_name
from conceptcomb.cggc.verification import (
    SUFFIX,
    VERIFIED_SHARE,
    VERIFIER_FAILURES,
    Verification,
    edge_questions,
    with_verified,
)
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.common.evalcard import load_card
from conceptcomb.common.evidence import (
    CorpusInputs,
    ItemSet,
    ItemView,
    JudgedQuestion,
    RawItem,
    Recomputed,
    answer_cut,
    close,
    defined,
    kept_answer,
)
from conceptcomb.common.results import sem
from conceptcomb.scorers.judge_base import shorten
from conceptcomb.scorers.verdicts import parse_verdict

PER_ITEM = ("rouge2", "rougeL", "coverage")  # means of per-item values; the rest are corpus
JAVA_MISSING = "no 'java' on PATH here (METEOR 1.5 is a jar)"
SPICE_MISSING = f"Stanford CoreNLP 3.6.0 jars not found here (set {metrics.SPICE_ENV}=DIR)"


@dataclass(frozen=True)
class TestItem:
    """A test item as the task serves it: the item and its demonstrations' ids."""

    item: CggcItem
    demonstrations: tuple[str, ...]  # stable ids, in the order shown


@lru_cache(maxsize=4)
def file_digests(data_dir: str | None) -> dict[str, str]:
    """File stem -> sha256 of the uncompressed file (the lines of the dataset's manifest,
    the same whether the copy is gzipped or not)."""
    folder = dataset_dir(data_dir)
    found = {}
    for stem in (POOL_FILE, TEST_FILE):
        path = _find_file(folder, stem)
        if path is not None:
            found[stem] = hashlib.sha256(read_bytes(path)).hexdigest()
    return found


def _stable_id(digests: dict[str, str], stem: str, item_id: str) -> str:
    return f"{digests.get(stem, '')}:{stem}:{item_id}"


def _options(options: dict[str, Any]) -> TaskOptions:
    return TaskOptions.resolve({k: v for k, v in options.items() if v is not None})


@lru_cache(maxsize=8)
def _test_items(task: str, options: tuple[tuple[str, Any], ...]) -> dict[str, TestItem]:
    """Key -> the item and its demonstrations, as the task's sampler chooses them."""
    spec, resolved = spec_by_name(task), _options(dict(options))
    digests = file_digests(resolved.data_dir)
    return {
        f"{TEST_FILE}:{item.item_id}": _test_item(spec, digests, item, demos)
        for item, demos in task_pairs(spec, resolved, announce=False)  # a bundle, not a run
    }


class _ItemsAsked(Mapping[str, TestItem]):
    """The task's test items by key, each drawn when it is looked up (a bundle's items
    only), and their number from the card: the shipped dataset with the default options."""

    def __init__(self, task: str, options: tuple[tuple[str, Any], ...], size: int) -> None:
        self.task, self.options, self.size = task, options, size
        self.spec, self.resolved = spec_by_name(task), _options(dict(options))
        self.digests = file_digests(self.resolved.data_dir)
        self.found: dict[str, TestItem | None] = {}

    def __getitem__(self, key: str) -> TestItem:
        if key not in self.found:
            stem, _, item_id = key.partition(":")
            pair = task_pair(self.spec, self.resolved, item_id) if stem == TEST_FILE else None
            self.found[key] = None if pair is None else _test_item(self.spec, self.digests, *pair)
        found = self.found[key]
        if found is None:
            raise KeyError(key)
        return found

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[str]:  # every item: what a lookup spares
        return iter(_test_items(self.task, self.options))


@lru_cache(maxsize=8)
def _items_asked(task: str, options: tuple[tuple[str, Any], ...], size: int) -> _ItemsAsked:
    return _ItemsAsked(task, options, size)


def _card_size(task: str, options: TaskOptions) -> int | None:
    """The task's number of test items as its card gives it (checked against `task_pairs`
    by tests/common/test_eval_cards.py), where the card's count applies: the shipped
    dataset and the default options; None elsewhere (then every item is drawn)."""
    spec = spec_by_name(task)
    given = replace(options, data_dir=None, spice_jars=None).for_spec(spec)
    if given != TaskOptions().for_spec(spec):
        return None
    if load_dataset(options.data_dir).sha256 != PACKAGED_SHA256:
        return None
    card = load_card("conceptcomb.cggc").tasks.get(task)
    return card.dataset_samples if card is not None else None


def _test_item(
    spec: CggcTaskSpec, digests: dict[str, str], item: CggcItem, demos: list[CggcItem]
) -> TestItem:
    pool = TEST_FILE if spec.setting == "id" else POOL_FILE
    return TestItem(item, tuple(_stable_id(digests, pool, d.item_id) for d in demos))


@lru_cache(maxsize=8)
@collector_paused()  # a large build (common.collector)
def _reference_items(task: str, options: tuple[tuple[str, Any], ...]) -> dict[str, TestItem]:
    """Key -> the item, without demonstrations (`CggcEvidence.reference_set`)."""
    from conceptcomb.cggc.data import load_dataset
    from conceptcomb.cggc.docs import evaluated_items

    resolved = _options(dict(options))
    items = evaluated_items(spec_by_name(task), resolved, load_dataset(resolved.data_dir))
    return {f"{TEST_FILE}:{item.item_id}": TestItem(item, ()) for item in items}


def _frozen(options: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    keys = ("data_dir", "k", "seed", "packaging", "test_type")  # what decides items and demos
    return tuple((k, str(options[k])) for k in keys if options.get(k) not in (None, ""))


def _verification_evidence(record: Any) -> dict[str, Any] | None:
    if not isinstance(record, dict):
        return None
    found = [edge for edge in record.get("edges") or [] if isinstance(edge, dict)]
    edges = [
        [edge.get("head"), edge.get("relation"), edge.get("tail"), edge.get("verdict")]
        for edge in found
    ]
    if any("reply" in edge for edge in found):  # the verifier's answers, where recorded
        edges = [[*row, kept_answer(e.get("reply"))] for row, e in zip(edges, found, strict=True)]
    return {"edges": edges, "verified": record.get("verified"), "failed": record.get("failed")}


def _verdict(item: CggcItem, answer: str, stored: dict[str, Any]) -> tuple[Verification, list[str]]:
    """The item's verification from the stored verdicts, and what does not match the task."""
    asked = [[q.head, q.relation, q.tail] for q in edge_questions(item, answer)]
    edges = stored.get("edges") if isinstance(stored.get("edges"), list) else []
    problems = []
    if [list(edge[:3]) for edge in edges if isinstance(edge, list)] != asked:
        problems.append(
            f"the verifier's questions {edges!r:.200} are not the item's edges {asked!r:.200}"
        )
    verdicts = [edge[3] if isinstance(edge, list) and len(edge) > 3 else None for edge in edges]
    if not all(v is None or isinstance(v, bool) for v in verdicts):
        problems.append("a verdict must be true, false or null (the judge failed)")
    problems += [p for n, edge in enumerate(edges, start=1) for p in _answer_problems(n, edge)]
    result = Verification(item.item_id)
    # A question without its stored verdict counts as failed, never as a yes.
    result.failed = len(verdicts) != len(asked) or any(v is None for v in verdicts)
    result.verified = False if not asked else None if result.failed else all(verdicts)
    if (stored.get("verified"), bool(stored.get("failed"))) != (result.verified, result.failed):
        problems.append(
            f"its verdicts give verified={result.verified}, failed={result.failed}, but the "
            f"bundle stores verified={stored.get('verified')}, failed={stored.get('failed')}"
        )
    return result, problems


def _stored_answer(edge: Any) -> str | None:
    """The verifier's stored answer of an edge row (its 5th element), where there is one."""
    if isinstance(edge, list) and len(edge) > 4 and isinstance(edge[4], str):
        return edge[4]
    return None


def _answer_problems(number: int, edge: Any) -> list[str]:
    """A 5th element that is no answer, or an answer that does not give the row's verdict
    (none for a row without one, or with one cut at `MOST_ANSWER_CHARS`)."""
    if not isinstance(edge, list) or len(edge) <= 4:
        return []
    if len(edge) > 5 or not (edge[4] is None or isinstance(edge[4], str)):
        return [f"verifier question {number}: a row is [head, relation, tail, verdict, answer]"]
    answer = _stored_answer(edge)
    if answer is None or answer_cut(answer):
        return []
    parsed = parse_verdict(answer)
    if parsed is edge[3]:
        return []
    return [
        f"verifier question {number} ({edge[0]} --{edge[1]}--> {edge[2]}): the bundle stores "
        f"the verdict {_verdict_text(edge[3])}, but the verifier's answer it stores "
        f"({shorten(answer, 120)!r}) gives {_verdict_text(parsed)}"
    ]


def _verdict_text(verdict: Any) -> str:
    return {True: "yes", False: "no", None: "no verdict"}.get(verdict, repr(verdict))


class CggcEvidence:
    # Items of one concept set (its relation paths, its demonstrations) are not independent:
    # standard errors are clustered by it (`conceptcomb.leaderboard.statistics.stats`).
    UNIT = "concept set"

    def __init__(self) -> None:
        # (item id, answer) -> per-item values: checked per item, then averaged in recompute
        self._values: dict[tuple[str, str], dict[str, float]] = {}

    def unit(self, task: str, doc: Any) -> str | None:
        """The item's concept set, from its doc or test item."""
        if isinstance(doc, TestItem):
            return str(doc.item.concept_set_idx)
        found = doc.get("concept_set_idx") if isinstance(doc, dict) else None
        return str(found) if found not in (None, "") else None

    def task_settings(self, task: str) -> dict[str, str]:
        """What the task's name fixes, named as Inspect's ``-T`` options name it (``compare
        --variants`` says "order: easy_to_hard vs hard_to_easy" of two named tasks too)."""
        spec = spec_by_name(task)
        found = {"setting": spec.setting, "order": spec.order, "style": spec.style}
        optional = {"structure": spec.structure, "test_type": spec.test_type,
                    "packaging": spec.packaging}  # fmt: skip
        found.update({key: value or "–" for key, value in optional.items()})
        found["verify"] = str(spec.verify).lower()
        return found

    def explorer_fields(self, task: str, item: TestItem) -> dict[str, str]:
        """What the item explorer filters CGGC's items by: the structure type of the
        reasoning graph, the concept set's size and the setting (id/ood)."""
        cggc = item.item
        return {
            "structure type": cggc.structure or "–",
            "concept-set size": str(len(cggc.concepts)),
            "setting": spec_by_name(task).setting,
        }

    def explorer_references(self, task: str, item: TestItem) -> list[str]:
        """The item's reference sentence."""
        return [item.item.target]

    def explorer_questions(self, task: str, evidence: dict[str, Any]) -> list[JudgedQuestion]:
        """Each relation the verifier was asked about, its verdict and the verifier's raw
        answer where the bundle holds it."""
        stored = evidence.get("verification")
        edges = stored.get("edges") if isinstance(stored, dict) else None
        return [
            JudgedQuestion(
                f"{edge[0]} --{edge[1]}--> {edge[2]}",
                "failed" if edge[3] is None else _verdict_text(edge[3]),
                _stored_answer(edge),
            )
            for edge in edges or []
            if isinstance(edge, list) and len(edge) >= 4
        ]

    # --- building ------------------------------------------------------------------------
    def item_key(self, task: str, doc: dict[str, Any], data_dir: str | None = None) -> str | None:
        item_id = str(doc.get("item_id") or "")
        return f"{TEST_FILE}:{item_id}" if item_id else None

    def evidence_item(self, task: str, raw: RawItem) -> dict[str, Any]:
        reply = raw.replies[0] if raw.replies else ""
        digests = raw.doc.get("dataset_files")
        if not isinstance(digests, dict):  # docs of conceptcomb before the files' sha256
            digests = file_digests(str(raw.doc["data_dir"]) if raw.doc.get("data_dir") else None)
        pool = TEST_FILE if raw.doc.get("setting") == "id" else POOL_FILE
        evidence: dict[str, Any] = {
            "reply": reply,
            "answer": prediction_of(raw.doc, reply),
            "demonstrations": [
                _stable_id(digests, pool, str(d)) for d in raw.doc.get("demonstration_ids") or []
            ],
            "references": [_stable_id(digests, TEST_FILE, str(raw.doc.get("item_id")))],
        }
        verification = _verification_evidence((raw.record or {}).get("verification"))
        if verification is not None:
            evidence["verification"] = verification
        return {**evidence, "scores": defined(raw.scores)}

    def item_view(self, task: str, evidence: dict[str, Any]) -> ItemView:
        """The sentence scored; the reference is the item's own sentence, by its id."""
        method = "conceptcomb.cggc.scoring.prediction_of: the reply's sentence, cleaned"
        return ItemView(
            [str(evidence.get("answer") or "")], method, _strings(evidence, "references")
        )

    # --- checking ------------------------------------------------------------------------
    def start(self, task: str) -> None:
        """METEOR's JVM, started before the checks: it loads its paraphrase tables (~8 s)
        while the test set, spaCy and ROUGE load and the items are checked."""
        metrics.start_meteor()

    def stop(self) -> None:
        """METEOR's JVM, if it runs (one still loading its tables goes on for seconds)."""
        metrics.stop_meteor()

    def prepare(self, task: str, items: list[dict[str, Any]]) -> None:
        """Lemmatize every stored answer in one batch (Coverage), before the items are
        checked one by one: a full bundle's 16k answers in a fraction of the time."""
        style = spec_by_name(task).style
        metrics.prime_lemmas([_answer(style, evidence) for evidence in items])

    def test_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> ItemSet:
        wanted = {**options, "data_dir": data_dir or options.get("data_dir")}
        resolved, frozen = _options(wanted), _frozen(wanted)
        size = _card_size(task, resolved)
        if size is None:  # every item drawn here: the options' errors are raised here too
            items: Mapping[str, TestItem] = dict(_test_items(task, frozen))
        else:
            items = _items_asked(task, frozen, size)
        return ItemSet(items, file_digests(resolved.data_dir))

    def chat_messages(
        self, task: str, item: TestItem, evidence: dict[str, Any], options: dict[str, Any]
    ) -> list[tuple[str, str]]:
        """What the task sends the pinned item with the run's options: its demonstrations
        as the task's sampler chooses them, in order (`docs.chat_messages`)."""
        spec, resolved = spec_by_name(task), _options(options)
        doc = {
            **item.item.as_doc(),
            "setting": spec.setting,
            "prompt_style": spec.style,
            "seed": resolved.seed,
            "demonstration_ids": [d.rsplit(":", 1)[-1] for d in item.demonstrations],
        }
        return chat_messages(task, doc, {"data_dir": resolved.data_dir})

    def check_options(
        self, task: str, options: dict[str, Any], items: list[dict[str, Any]]
    ) -> list[str]:
        """Options the task takes, with values it accepts, none contradicting its name."""
        try:
            _options(options).for_spec(spec_by_name(task))
        except (ConceptcombError, TypeError, ValueError) as err:
            return [str(err)]
        return []

    def check_item(self, task: str, item: TestItem, evidence: dict[str, Any]) -> list[str]:
        spec = spec_by_name(task)
        reply = evidence.get("reply")
        if not isinstance(reply, str):
            return ["no reply stored"]
        doc = {"prompt_style": spec.style}
        answer = prediction_of(doc, reply)
        problems = []
        if evidence.get("answer") != answer:
            problems.append(
                f"the stored reply gives the sentence {answer!r:.120}, the bundle stores "
                f"{evidence.get('answer')!r:.120}"
            )
        if evidence.get("demonstrations") != list(item.demonstrations):
            problems.append(
                "its demonstrations are not those the task's sampler gives it with the run's "
                f"options ({', '.join(d.rsplit(':', 1)[-1] for d in item.demonstrations)})"
            )
        if evidence.get("references") != [evidence.get("id")]:  # scored against its own
            problems.append("its reference must be the item's own sentence (the item's id)")
        expected = self._item_values(item.item, answer)
        if spec.verify:
            stored = evidence.get("verification")
            if not isinstance(stored, dict):
                return [*problems, "a _verified task's item needs the verifier's answers"]
            verification, found = _verdict(item.item, answer, stored)
            problems += found
            expected = defined(with_verified(expected, verification))
        return problems + _check_scores(evidence.get("scores"), expected)

    def _item_values(self, item: CggcItem, answer: str) -> dict[str, float]:
        key = (item.item_id, answer)
        if key not in self._values:
            scored = Scored(item.item_id, answer, (item.target,), item.concepts)
            self._values[key] = defined(metrics.item_metrics(scored))
        return self._values[key]

    def recompute(
        self, task: str, options: dict[str, Any], pairs: list[tuple[TestItem, dict[str, Any]]]
    ) -> Recomputed:
        spec = spec_by_name(task)
        rows = [(test.item, _answer(spec.style, evidence), evidence) for test, evidence in pairs]
        result = self._table4(rows, "")
        if spec.verify:
            verdicts = [
                _verdict(item, answer, evidence.get("verification") or {})[0]
                for item, answer, evidence in rows
            ]
            # Per item 100 or 0, as the task scores it (its standard error on that scale).
            known = [100.0 * v.verified for v in verdicts if v.verified is not None]
            if known:
                result.metrics[VERIFIED_SHARE] = (sum(known) / len(known), sem(known))
            failures = float(sum(v.failed for v in verdicts))
            result.metrics[VERIFIER_FAILURES] = (failures, None)
            kept = [row for row, v in zip(rows, verdicts, strict=True) if v.verified]
            subset = self._table4(kept, SUFFIX)
            result.metrics.update(subset.metrics)
            result.not_rechecked.update(subset.not_rechecked)
        return result

    def reference_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> ItemSet:
        """The task's test items without their demonstrations (`corpus_inputs` reads each
        item's reference and concepts only): `test_set` samples the demonstrations of every
        item, about 9 s for cggc_ood's 15,985, which ``conceptcomb compare`` does not need.
        A superset of the items `test_set` holds (those no pool can serve included)."""
        wanted = {**options, "data_dir": data_dir or options.get("data_dir")}
        frozen = _frozen(wanted)  # as `test_set` reads them
        items = _reference_items(task, frozen)
        return ItemSet(dict(items), file_digests(_options(dict(frozen)).data_dir))

    def corpus_inputs(
        self, task: str, options: dict[str, Any], pairs: list[tuple[TestItem, dict[str, Any]]]
    ) -> dict[str, CorpusInputs]:
        """BLEU-3/4 and CIDEr on spaCy tokens as `metrics.bleu` and `metrics.cider` score them
        (``_verified``: the verified items only). METEOR 1.5 and SPICE are jars that score a
        corpus at once: not resampled here."""
        spec = spec_by_name(task)
        records: list[Any] = []
        kept: list[bool] = []
        for test, evidence in pairs:
            answer = _answer(spec.style, evidence)
            records.append((metrics.tokenize(answer), [metrics.tokenize(test.item.target)]))
            if spec.verify:
                verdict = _verdict(test.item, answer, evidence.get("verification") or {})[0]
                kept.append(bool(verdict.verified))
        sets = {"": records}
        if spec.verify:
            sets[SUFFIX] = [r if k else None for r, k in zip(records, kept, strict=True)]
        found = {}
        for suffix, rows in sets.items():
            found[f"bleu3{suffix}"] = CorpusInputs("coco-bleu", rows, 100.0, 3)
            found[f"bleu4{suffix}"] = CorpusInputs("coco-bleu", rows, 100.0, 4)
            found[f"cider{suffix}"] = CorpusInputs("coco-cider", rows, 10.0)
        return found

    def _table4(self, rows: list[tuple[CggcItem, str, dict]], suffix: str) -> Recomputed:
        """Every Table 4 metric over the rows (named with ``suffix``); none for no rows."""
        result = Recomputed({})
        if not rows:
            return result
        values = [self._item_values(item, answer) for item, answer, _ in rows]
        for name in PER_ITEM:
            found = [v[name] for v in values if name in v]
            if found:
                result.metrics[name + suffix] = (sum(found) / len(found), sem(found))
        records = [Scored(i.item_id, a, (i.target,), i.concepts) for i, a, _ in rows]
        for name, value in metrics.bleu(records).items():
            result.metrics[name + suffix] = (value, None)
        result.metrics["cider" + suffix] = (metrics.cider(records), None)
        if shutil.which("java") is None:
            result.not_rechecked["meteor" + suffix] = JAVA_MISSING
        else:
            result.metrics["meteor" + suffix] = (metrics.meteor(records), None)
        missing = metrics.spice_status()
        if missing:
            result.not_rechecked["spice" + suffix] = SPICE_MISSING
        else:
            result.metrics["spice" + suffix] = (metrics.spice(records), None)
        return result


def _strings(evidence: dict[str, Any], key: str) -> list[str]:
    value = evidence.get(key)
    return [str(v) for v in value] if isinstance(value, list) else []


def _answer(style: str, evidence: dict[str, Any]) -> str:
    return prediction_of({"prompt_style": style}, str(evidence.get("reply") or ""))


def _check_scores(stored: Any, expected: dict[str, float]) -> list[str]:
    """The stored per-item scores against the recomputed ones (Inspect keeps no per-item
    ``<metric>_verified`` values: they may be absent)."""
    if not isinstance(stored, dict):
        return ["no per-item scores stored"]
    problems = []
    for name in sorted(stored.keys() | expected.keys()):
        if name not in stored and name.endswith(SUFFIX):
            continue
        if not close(stored.get(name), expected.get(name)):
            problems.append(
                f"per-item {name}: the bundle stores {stored.get(name)}, its answer gives "
                f"{expected.get(name)}"
            )
    return problems


# What the contract reads (`conceptcomb.common.contract.Benchmark.evidence`): the class
# whose instance checks this benchmark's items in bundles.
EVIDENCE = CggcEvidence
