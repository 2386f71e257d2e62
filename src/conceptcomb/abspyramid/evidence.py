"""AbsPyramid items in a bundle, and their metrics recomputed offline with the tasks' code.

An item's evidence, besides its id and ``gold`` (detection: the label; generation: the
references), by kind of task:

* generated detection (``_zs``, ``_cot``, ``_icl``, ...): ``reply`` and ``pred``, the label
  the run predicted from it (an unparsable reply counts as "No");
* log-likelihood detection: ``loglikelihoods`` ([No, Yes], lm-eval) or ``top_logprobs``
  (the first token's alternatives, Inspect), ``p_yes`` and ``pred``;
* generation: ``reply`` and ``prediction`` (its first non-empty line);

and the per-item ``scores`` (accuracy, unparsable; ROUGE, METEOR, empty predictions).

Offline, the gold must be the pinned file's; the stored reply (or log-likelihoods) parsed
again with `conceptcomb.abspyramid.scoring` must give the stored prediction and the stored
scores; macro-F1, ROC-AUC and BLEU (corpus-level) and the means are recomputed from the
stored replies with `conceptcomb.abspyramid.metrics` (`recompute`). The dataset is pinned by
revision only: an item's id carries the sha256 of the file the run read, and the offline
check reads its own copy (``--data-dir``, ``CONCEPTCOMB_DATA_DIR`` or the hub cache).
"""

from __future__ import annotations

import math
from functools import cache, lru_cache
from pathlib import PurePosixPath
from typing import Any

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.answers import first_line, parse_yes_no
from conceptcomb.abspyramid.data import (
    ABSPYRAMID_DATASET,
    DetectionItem,
    GenerationItem,
    check_split,
    file_name,
    load_items,
)
from conceptcomb.abspyramid.prompts import ANSWERS
from conceptcomb.abspyramid.scoring import p_yes_from_top_logprobs
from conceptcomb.abspyramid.tasks import DETECTION, AbsTaskSpec, spec_by_name
from conceptcomb.common.datafiles import sha256_of
from conceptcomb.common.evidence import (
    CorpusInputs,
    ItemSet,
    ItemView,
    RawItem,
    Recomputed,
    close,
    defined,
)
from conceptcomb.common.hubfiles import resolve_hub_files

AbsItem = DetectionItem | GenerationItem
# Generation metrics by the tool that computes them (missing tool: not re-checked here).
TOOLS = {
    "sacrebleu": (m.BLEU1, m.BLEU2, m.BLEU_BP),
    "rouge_score": (m.ROUGE2, m.ROUGE_L),
    "nltk and WordNet 3.0": (m.METEOR,),
}


def _file(spec: AbsTaskSpec, split: str) -> str:
    return file_name(spec.kind, spec.relation, check_split(split))


def _stem(name: str) -> str:
    """The file's path without its suffix: every split is a ``test.json``, a folder apart."""
    return str(PurePosixPath(name).with_suffix(""))


def _item_metric_names(spec: AbsTaskSpec) -> set[str]:
    return {info.name for info in m.metric_infos(spec) if info.aggregation != "corpus"}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


# --- what the run recorded -------------------------------------------------------------------
def _pair(raw: RawItem, name: str) -> list | None:
    """lm-eval's per-item value of a corpus metric: (label, prediction) and the like."""
    value = raw.scores.get(name)
    return list(value) if isinstance(value, list | tuple) and len(value) == 2 else None


def _run_value(raw: RawItem, key: str, pair_metric: str, position: int = 1) -> Any:
    """What the run computed for the item: Inspect keeps it in the score's value or
    metadata, lm-eval in a corpus metric's pair ((label, prediction), (prediction,
    references)...) at ``position``."""
    for source in (raw.scores, raw.record or {}):
        if key in source and not isinstance(source[key], list | tuple):
            return source[key]
    pair = _pair(raw, pair_metric)
    return pair[position] if pair else None


def _loglikelihoods(raw: RawItem) -> list[float] | None:
    """lm-eval's [No, Yes] log-likelihoods (one logged reply per answer)."""
    if len(raw.replies) != 2:
        return None
    try:
        return [float(reply) for reply in raw.replies]
    except ValueError:
        return None


def _detection_evidence(spec: AbsTaskSpec, raw: RawItem) -> dict[str, Any]:
    pred = _run_value(raw, "pred", m.MACRO_F1)
    evidence: dict[str, Any] = {"gold": int(raw.doc["label"])}
    if spec.generative:
        evidence["reply"] = raw.replies[0] if raw.replies else ""
    else:
        top = (raw.record or {}).get("top_logprobs")
        lls = _loglikelihoods(raw)
        if isinstance(top, list):
            evidence["top_logprobs"] = top
        elif lls is not None:
            evidence["loglikelihoods"] = lls
        evidence["p_yes"] = _number(_run_value(raw, "p_yes", m.AUC))
    return {**evidence, "pred": None if pred is None else int(pred)}


def _generation_evidence(raw: RawItem) -> dict[str, Any]:
    return {
        "reply": raw.replies[0] if raw.replies else "",
        "prediction": _run_value(raw, "prediction", m.BLEU1, position=0),
        "gold": list(raw.doc["references"]),
    }


# --- the same code again ---------------------------------------------------------------------
def _detection(spec: AbsTaskSpec, item: DetectionItem, evidence: dict[str, Any]) -> m.Detection:
    """The item scored again from its stored reply (or log-likelihoods) and the pinned label."""
    if spec.generative:
        reply = evidence.get("reply")
        if not isinstance(reply, str):
            raise ValueError("no reply stored")
        return m.from_answer(item.label, parse_yes_no(reply, reasoning_first=spec.reasoning))
    if isinstance(evidence.get("loglikelihoods"), list):
        ll_no, ll_yes = (float(value) for value in evidence["loglikelihoods"])
        return m.from_probability(item.label, m.p_yes_from_loglikelihoods(ll_no, ll_yes))
    if isinstance(evidence.get("top_logprobs"), list):
        top = [(str(token), float(logprob)) for token, logprob in evidence["top_logprobs"]]
        return m.from_probability(item.label, p_yes_from_top_logprobs(top))
    raise ValueError("neither log-likelihoods nor the first token's alternatives stored")


def _prediction(evidence: dict[str, Any]) -> str:
    reply = evidence.get("reply")
    if not isinstance(reply, str):
        raise ValueError("no reply stored")
    return first_line(reply)


@cache
def missing_tools() -> dict[str, str]:
    """Generation metric -> why its tool cannot run here (nothing when all can)."""
    missing: dict[str, str] = {}
    for tool, names in TOOLS.items():
        try:
            if tool == "sacrebleu":
                m.tokenize_13a("a")
            elif tool == "rouge_score":
                m.best_rouge("a", ["a"])
            else:
                m.best_meteor("a", ["a"])
        except Exception as err:  # the tool is missing or broken: say which
            missing.update(dict.fromkeys(names, f"{tool} unavailable ({type(err).__name__})"))
    return missing


@lru_cache(maxsize=65536)
def _generation_item(prediction: str, references: tuple[str, ...]) -> dict[str, float]:
    """`generation_item_metrics` once per item (the item check and the recompute share it)."""
    skipped = missing_tools()
    rouge2 = rouge_l = meteor = math.nan
    if m.ROUGE2 not in skipped:
        rouge2, rouge_l = (m.SCALE * value for value in m.best_rouge(prediction, references))
    if m.METEOR not in skipped:
        meteor = m.SCALE * m.best_meteor(prediction, references)
    values = {m.ROUGE2: rouge2, m.ROUGE_L: rouge_l, m.METEOR: meteor}
    values[m.EMPTY_PREDICTIONS] = float(not prediction.strip())
    return defined(values)


def _item_scores(spec: AbsTaskSpec, item: AbsItem, evidence: dict[str, Any]) -> dict[str, float]:
    if spec.kind == DETECTION:
        return _detection(spec, item, evidence).item_metrics()  # type: ignore[arg-type]
    return _generation_item(_prediction(evidence), tuple(item.references))  # type: ignore[union-attr]


# --- the checks ------------------------------------------------------------------------------
def _check_gold(item: AbsItem, evidence: dict[str, Any]) -> list[str]:
    pinned: Any = item.label if isinstance(item, DetectionItem) else list(item.references)
    if evidence.get("gold") != pinned:
        return [
            f"the stored gold {evidence.get('gold')!r:.200} is not the pinned file's "
            f"{pinned!r:.200}"
        ]
    return []


def _check_parse(spec: AbsTaskSpec, item: AbsItem, evidence: dict[str, Any]) -> list[str]:
    if spec.kind != DETECTION:
        prediction = _prediction(evidence)
        if prediction != evidence.get("prediction"):
            return [
                f"the stored reply's first line is {prediction!r:.120}, but the bundle stores "
                f"the prediction {evidence.get('prediction')!r:.120}"
            ]
        return []
    detection = _detection(spec, item, evidence)  # type: ignore[arg-type]
    problems = []
    if detection.pred != evidence.get("pred"):
        source = "reply gives" if spec.generative else "log-likelihoods give"
        problems.append(
            f"the stored {source} the label {detection.pred}, but the bundle stores the "
            f"label {evidence.get('pred')!r:.40}"
        )
    if not spec.generative and not close(_number(detection.p_yes), _number(evidence.get("p_yes"))):
        problems.append(
            f"the stored log-likelihoods give P(Yes) {detection.p_yes}, but the bundle stores "
            f"{evidence.get('p_yes')!r:.40}"
        )
    return problems


def _check_scores(spec: AbsTaskSpec, item: AbsItem, evidence: dict[str, Any]) -> list[str]:
    stored = evidence.get("scores")
    if not isinstance(stored, dict):
        return ["no per-item scores stored"]
    computed = _item_scores(spec, item, evidence)
    # Detection needs none of the generation tools (loading WordNet takes seconds).
    skipped = missing_tools() if spec.kind != DETECTION else {}
    names = (computed.keys() | stored.keys()) - skipped.keys()
    differ = sorted(n for n in names if not close(computed.get(n), _number(stored.get(n))))
    if not differ:
        return []
    shown = ", ".join(f"{n}: stored {stored.get(n)}, recomputed {computed.get(n)}" for n in differ)
    return [f"the per-item scores stored are not those its reply gives ({shown:.300})"]


def _texts(evidence: dict[str, Any]) -> list[str]:
    gold = evidence.get("gold")
    return [str(text) for text in gold] if isinstance(gold, list) else []


def _mean(values: list[float]) -> tuple[float, float | None]:
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, None
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n)


def _finite(metrics: dict[str, tuple[float, float | None]]) -> dict:
    """NaN (AUC of one class...) is what the results call undefined: left out, as there."""
    return {name: pair for name, pair in metrics.items() if _number(pair[0]) is not None}


class AbspyramidEvidence:
    def explorer_fields(self, task: str, item: DetectionItem | GenerationItem) -> dict[str, str]:
        """What the item explorer filters AbsPyramid's items by: the relation (noun, verb,
        event; "all": the merged files) and the instance's entity type."""
        return {"relation": spec_by_name(task).relation, "entity type": item.type}

    def explorer_references(self, task: str, item: DetectionItem | GenerationItem) -> list[str]:
        """Detection: the abstract concept and its gold validity; generation: the gold
        concepts."""
        if isinstance(item, DetectionItem):
            return [f"{item.concept}: {'valid' if item.label else 'not valid'}"]
        return list(item.references)

    # --- building ------------------------------------------------------------------------
    def item_key(self, task: str, doc: dict[str, Any], data_dir: str | None = None) -> str | None:
        """``<file path without .json>:<relation>:<split>:<n>`` (every file is a test.json)."""
        item_id = str(doc.get("item_id") or "")
        parts = item_id.split(":")
        if len(parts) != 3:
            return None
        return f"{_stem(_file(spec_by_name(task), parts[1]))}:{item_id}"

    def evidence_item(self, task: str, raw: RawItem) -> dict[str, Any]:
        spec = spec_by_name(task)
        if spec.kind == DETECTION:
            evidence = _detection_evidence(spec, raw)
        else:
            evidence = _generation_evidence(raw)
        names = _item_metric_names(spec)
        scores = {name: value for name, value in defined(raw.scores).items() if name in names}
        return {**evidence, "scores": scores}

    def item_view(self, task: str, evidence: dict[str, Any]) -> ItemView:
        """The label predicted (Yes / No) or the concept generated, and the gold."""
        spec = spec_by_name(task)
        if spec.kind != DETECTION:
            method = "conceptcomb.abspyramid.answers.first_line: the first non-empty line"
            return ItemView([str(evidence.get("prediction") or "")], method, _texts(evidence))
        pred, gold = evidence.get("pred"), evidence.get("gold")
        answer = ANSWERS[pred] if pred in (0, 1) else ""
        reference = [ANSWERS[gold]] if gold in (0, 1) else []
        if spec.generative:
            method = "conceptcomb.abspyramid.answers.parse_yes_no (none: counted as No)"
            return ItemView([answer], method, reference)
        stored = "loglikelihoods" if "loglikelihoods" in evidence else "top_logprobs"
        method = f"P(Yes) from the {stored.replace('_', ' ')} of No and Yes, Yes when >= 0.5"
        return ItemView([answer], method, reference, f"metadata.{stored}", tuple(ANSWERS))

    # --- checking ------------------------------------------------------------------------
    def test_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> ItemSet:
        spec, split = spec_by_name(task), str(options.get("split") or "test")
        name = _file(spec, split)
        path = resolve_hub_files(ABSPYRAMID_DATASET, [name], data_dir)[name]
        items = load_items(spec, split, data_dir)
        stem = _stem(name)
        return ItemSet({f"{stem}:{item.item_id}": item for item in items}, {stem: sha256_of(path)})

    def check_item(self, task: str, item: AbsItem, evidence: dict[str, Any]) -> list[str]:
        spec = spec_by_name(task)
        return (
            _check_gold(item, evidence)
            or _check_parse(spec, item, evidence)
            or _check_scores(spec, item, evidence)
        )

    def recompute(
        self, task: str, options: dict[str, Any], pairs: list[tuple[Any, dict[str, Any]]]
    ) -> Recomputed:
        spec = spec_by_name(task)
        if not pairs:
            return Recomputed({})
        if spec.kind == DETECTION:
            return Recomputed(_finite(_detection_metrics(spec, pairs)))
        return _generation_metrics(pairs)

    def corpus_inputs(
        self, task: str, options: dict[str, Any], pairs: list[tuple[Any, dict[str, Any]]]
    ) -> dict[str, CorpusInputs]:
        """Macro-F1 and AUC (detection), BLEU-1/2 and the brevity penalty (generation), from
        each item scored again as `recompute` scores it."""
        spec = spec_by_name(task)
        if spec.kind == DETECTION:
            rows = [_detection(spec, item, evidence) for item, evidence in pairs]
            found = {
                m.MACRO_F1: CorpusInputs("macro-f1", [(r.label, r.pred) for r in rows], m.SCALE)
            }
            if not spec.generative:
                found[m.AUC] = CorpusInputs("auc", [(r.label, r.p_yes) for r in rows], m.SCALE)
            return found
        tokens = [
            (
                m.tokenize_13a(_prediction(evidence).strip()),
                [m.tokenize_13a(r.strip()) for r in item.references],
            )
            for item, evidence in pairs
        ]
        return {
            m.BLEU1: CorpusInputs("nmt-bleu", tokens, m.SCALE, "precision_1"),
            m.BLEU2: CorpusInputs("nmt-bleu", tokens, m.SCALE, "precision_2"),
            m.BLEU_BP: CorpusInputs("nmt-bleu", tokens, 1.0, "brevity_penalty"),
        }

    def aggregate(
        self, task: str, scores: list[dict[str, float]]
    ) -> dict[str, tuple[float, float | None]]:
        """The per-item metrics' means and counts (``recompute`` gives the corpus ones)."""
        spec, results = spec_by_name(task), {}
        for info in m.metric_infos(spec):
            values = [row[info.name] for row in scores if info.name in row]
            if info.aggregation == "corpus" or not values:
                continue
            results[info.name] = (
                _mean(values) if info.aggregation == "mean" else (sum(values), None)
            )
        return results

    # --- no judge: rescoring recomputes the per-item scores --------------------------------
    def rescore_set(self, task: str, options: dict[str, Any], data_dir: str | None) -> dict:
        return self.test_set(task, options, data_dir).items

    def questions(self, task: str, item: Any, evidence: dict[str, Any]) -> list:
        return []

    def rescored(
        self, task: str, item: AbsItem, evidence: dict[str, Any], ratings: dict[str, Any]
    ) -> dict[str, float]:
        return _item_scores(spec_by_name(task), item, evidence)


def _detection_metrics(spec: AbsTaskSpec, pairs: list) -> dict[str, tuple[float, float | None]]:
    rows = [_detection(spec, item, evidence) for item, evidence in pairs]
    corpus = m.detection_metrics(rows)
    wanted = {info.name for info in m.metric_infos(spec)}
    results = {name: (value, None) for name, value in corpus.items() if name in wanted}
    results[m.ACCURACY] = _mean([row.item_metrics()[m.ACCURACY] for row in rows])
    return results


def _generation_metrics(pairs: list) -> Recomputed:
    predictions = [_prediction(evidence) for _, evidence in pairs]
    references = [list(item.references) for item, _ in pairs]
    rows = [_generation_item(p, tuple(r)) for p, r in zip(predictions, references, strict=True)]
    skipped = missing_tools()
    results: dict[str, tuple[float, float | None]] = {}
    if m.BLEU1 not in skipped:
        results |= {name: (v, None) for name, v in m.bleu_metrics(predictions, references).items()}
    for name in (m.ROUGE2, m.ROUGE_L, m.METEOR):
        if name not in skipped:
            results[name] = _mean([row[name] for row in rows])
    results[m.EMPTY_PREDICTIONS] = (sum(row[m.EMPTY_PREDICTIONS] for row in rows), None)
    return Recomputed(_finite(results), dict(skipped))


# What the contract reads (`conceptcomb.common.contract.Benchmark.evidence`): the class
# whose instance checks this benchmark's items in bundles.
EVIDENCE = AbspyramidEvidence
