"""AbsPyramid metrics, as the authors computed them, in percent like the paper's tables.

Detection (Tables 4, 5, 10): accuracy, macro-F1 and ROC-AUC with scikit-learn, as the
authors' scripts call it (``f1_score(average="macro")``, ``roc_auc_score`` on the
probability of "valid"). A prediction is "Yes" when P(Yes) >= 0.5 (their NLI threshold);
an unparsable generated answer counts as "No" (their ``parse_label`` fallback) and is counted.

Generation (Tables 7, 19-21), the authors' ``generation_metric`` scripts:

* BLEU: Hugging Face ``evaluate``'s "bleu" with ``max_order=4``, i.e. sacrebleu's 13a
  tokenizer and the tensorflow/nmt ``compute_bleu`` (corpus level, clipped counts against
  the union of the references, no smoothing, brevity penalty against the *shortest*
  reference), re-implemented here because ``evaluate.load`` needs the network. Their
  wrapper strips the texts and returns 0 when every prediction is empty. BLEU-1 and BLEU-2
  are that call's 1- and 2-gram precisions (``precisions[0]``, ``precisions[1]``): the
  script makes only the max-order-4 call and its empty-input fallback returns exactly two
  precisions. ``bleu_bp`` reports the brevity penalty, so the cumulative BLEU-n of other
  papers is ``bleu_bp * (p1 ... pn) ** (1 / n)``.
* ROUGE-2 recall and ROUGE-L F-measure from ``rouge_score`` with the Porter stemmer, the best
  over the references, then the mean over items.
* METEOR: NLTK's ``single_meteor_score`` on whitespace tokens (alpha 0.9, beta 3, gamma
  0.5), the best over the references, then the mean; WordNet 3.0 is loaded offline.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from conceptcomb.abspyramid.tasks import DETECTION, AbsTaskSpec
from conceptcomb.common.contract import PERCENT, PROPORTION, MetricInfo

SCALE = 100.0
NAN = float("nan")
ACCURACY, MACRO_F1, AUC = "accuracy", "macro_f1", "auc"
UNPARSABLE = "unparsable"
BLEU1, BLEU2, BLEU_BP = "bleu1", "bleu2", "bleu_bp"
ROUGE2, ROUGE_L, METEOR = "rouge2", "rougeL", "meteor"
EMPTY_PREDICTIONS = "empty_predictions"
MAX_ORDER = 4


def metric_infos(spec: AbsTaskSpec) -> list[MetricInfo]:
    """Every metric a task reports, in display order."""
    if spec.kind == DETECTION:
        infos = [
            MetricInfo(ACCURACY, True, "mean", scale=PERCENT),
            MetricInfo(MACRO_F1, True, "corpus", scale=PERCENT),
        ]
        if not spec.generative:
            infos.append(MetricInfo(AUC, True, "corpus", scale=PERCENT))
        return [*infos, MetricInfo(UNPARSABLE, False, "sum")]
    return [
        MetricInfo(BLEU1, True, "corpus", scale=PERCENT),
        MetricInfo(BLEU2, True, "corpus", scale=PERCENT),
        MetricInfo(ROUGE2, True, "mean", scale=PERCENT),
        MetricInfo(ROUGE_L, True, "mean", scale=PERCENT),
        MetricInfo(METEOR, True, "mean", scale=PERCENT),
        MetricInfo(BLEU_BP, True, "corpus", scale=PROPORTION),  # BLEU's brevity penalty
        MetricInfo(EMPTY_PREDICTIONS, False, "sum"),
    ]


# --- detection -------------------------------------------------------------------------


@dataclass(frozen=True)
class Detection:
    """One scored detection item: gold label, prediction, P(Yes) (NaN if unknown)."""

    label: int
    pred: int
    p_yes: float = NAN
    unparsable: bool = False

    def item_metrics(self) -> dict[str, float]:
        correct = float(self.pred == self.label)
        return {ACCURACY: SCALE * correct, UNPARSABLE: float(self.unparsable)}


def p_yes_from_loglikelihoods(ll_no: float, ll_yes: float) -> float:
    """P(Yes) normalised over the two answers: softmax of the two log-likelihoods."""
    top = max(ll_no, ll_yes)
    yes, no = math.exp(ll_yes - top), math.exp(ll_no - top)
    return yes / (yes + no)


def from_probability(label: int, p_yes: float) -> Detection:
    if math.isnan(p_yes):
        return Detection(label, 0, NAN, unparsable=True)
    return Detection(label, int(p_yes >= 0.5), p_yes)


def from_answer(label: int, answer: int | None) -> Detection:
    return Detection(label, 0 if answer is None else answer, unparsable=answer is None)


def macro_f1(labels: Sequence[int], preds: Sequence[float]) -> float:
    """Macro-F1 of the Yes (1) / No (0) predictions against the gold labels.

    A prediction may be a share of Yes: a sample's verdicts averaged over its epochs
    (Inspect's mean reducer) or repeats, so a sample right in one of two epochs is half
    right. It counts as that share of a Yes and the rest of a No (sample weights), which is
    macro-F1 over every epoch's verdict pooled; 0/1 predictions give the usual macro-F1.
    """
    from sklearn.metrics import f1_score

    if not labels:
        return NAN
    truth: list[int] = []
    verdicts: list[int] = []
    weights: list[float] = []
    for label, share in zip(labels, preds, strict=True):
        for verdict, weight in ((1, float(share)), (0, 1.0 - float(share))):
            if weight > 0:
                truth.append(label)
                verdicts.append(verdict)
                weights.append(weight)
    f1 = f1_score(truth, verdicts, average="macro", zero_division=0.0, sample_weight=weights)
    return SCALE * float(f1)


def roc_auc(labels: Sequence[int], probabilities: Sequence[float]) -> float:
    """ROC-AUC over the items with a probability; NaN when only one class is present."""
    from sklearn.metrics import roc_auc_score

    pairs = [(y, p) for y, p in zip(labels, probabilities, strict=True) if not math.isnan(p)]
    if len({y for y, _ in pairs}) < 2:
        return NAN
    return SCALE * float(roc_auc_score([y for y, _ in pairs], [p for _, p in pairs]))


def detection_metrics(items: Iterable[Detection]) -> dict[str, float]:
    """Corpus-level detection metrics (for reports and tests; the frameworks aggregate too)."""
    rows = list(items)
    labels, preds = [d.label for d in rows], [d.pred for d in rows]
    accuracy = SCALE * sum(p == y for p, y in zip(preds, labels, strict=True)) / len(rows)
    return {
        ACCURACY: accuracy if rows else NAN,
        MACRO_F1: macro_f1(labels, preds),
        AUC: roc_auc(labels, [d.p_yes for d in rows]),
        UNPARSABLE: float(sum(d.unparsable for d in rows)),
    }


# --- generation: BLEU as HF evaluate's "bleu" (tensorflow/nmt compute_bleu) --------------


@cache
def _tokenizer_13a() -> Any:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()


def tokenize_13a(text: str) -> list[str]:
    return _tokenizer_13a()(text).split()


def _ngram_counts(tokens: Sequence[str], max_order: int) -> Counter[tuple[str, ...]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for order in range(1, max_order + 1):
        for start in range(len(tokens) - order + 1):
            counts[tuple(tokens[start : start + order])] += 1
    return counts


@dataclass(frozen=True)
class Bleu:
    bleu: float
    precisions: tuple[float, ...]
    brevity_penalty: float
    length_ratio: float
    translation_length: int
    reference_length: int


def corpus_bleu(
    predictions: Sequence[str], references: Sequence[Sequence[str]], max_order: int = MAX_ORDER
) -> Bleu:
    """nmt ``compute_bleu`` (no smoothing) on 13a tokens, with the authors' wrapper around it."""
    predictions = [p.strip() for p in predictions]
    references = [[r.strip() for r in refs] for refs in references]
    if sum(len(p) for p in predictions) == 0:
        return Bleu(0.0, (0.0,) * max_order, 0.0, 0.0, 0, 0)
    matches, possible = [0] * max_order, [0] * max_order
    translation_length = reference_length = 0
    for prediction, refs in zip(predictions, references, strict=True):
        hypothesis = tokenize_13a(prediction)
        tokenized_refs = [tokenize_13a(r) for r in refs]
        reference_length += min(len(r) for r in tokenized_refs)
        translation_length += len(hypothesis)
        merged: Counter[tuple[str, ...]] = Counter()
        for ref in tokenized_refs:
            merged |= _ngram_counts(ref, max_order)
        overlap = _ngram_counts(hypothesis, max_order) & merged
        for ngram, count in overlap.items():
            matches[len(ngram) - 1] += count
        for order in range(1, max_order + 1):
            possible[order - 1] += max(len(hypothesis) - order + 1, 0)
    precisions = tuple(m / p if p > 0 else 0.0 for m, p in zip(matches, possible, strict=True))
    geo_mean = math.exp(sum(map(math.log, precisions)) / max_order) if min(precisions) > 0 else 0.0
    ratio = translation_length / reference_length if reference_length else math.inf
    penalty = 1.0 if ratio > 1.0 else (math.exp(1 - 1.0 / ratio) if ratio > 0 else 0.0)
    return Bleu(
        geo_mean * penalty, precisions, penalty, ratio, translation_length, reference_length
    )


def bleu_metrics(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> dict:
    result = corpus_bleu(predictions, references)
    return {
        BLEU1: SCALE * result.precisions[0],
        BLEU2: SCALE * result.precisions[1],
        BLEU_BP: result.brevity_penalty,
    }


# --- generation: ROUGE and METEOR, per item ---------------------------------------------


@cache
def _rouge_scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge2", "rougeL"], use_stemmer=True)


def best_rouge(prediction: str, references: Sequence[str]) -> tuple[float, float]:
    """(ROUGE-2 recall, ROUGE-L F-measure), each the best over the references."""
    scores = [_rouge_scorer().score(ref, prediction) for ref in references]
    return max(s["rouge2"].recall for s in scores), max(s["rougeL"].fmeasure for s in scores)


@cache
def _wordnet() -> Any:
    from conceptcomb.common.wordnet import wordnet

    return wordnet()


def best_meteor(prediction: str, references: Sequence[str]) -> float:
    from nltk.translate.meteor_score import single_meteor_score

    hypothesis = prediction.split()
    return max(
        single_meteor_score(ref.split(), hypothesis, wordnet=_wordnet()) for ref in references
    )


def generation_item_metrics(prediction: str, references: Sequence[str]) -> dict[str, float]:
    rouge2, rouge_l = best_rouge(prediction, references)
    return {
        ROUGE2: SCALE * rouge2,
        ROUGE_L: SCALE * rouge_l,
        METEOR: SCALE * best_meteor(prediction, references),
        EMPTY_PREDICTIONS: float(not prediction.strip()),
    }


def generation_metrics(
    predictions: Sequence[str], references: Sequence[Sequence[str]]
) -> dict[str, float]:
    """Every generation metric over a set of predictions (Table 7's columns, and counts)."""
    rows = [generation_item_metrics(p, r) for p, r in zip(predictions, references, strict=True)]
    means = {key: sum(row[key] for row in rows) / len(rows) for key in (ROUGE2, ROUGE_L, METEOR)}
    empty = float(sum(row[EMPTY_PREDICTIONS] for row in rows))
    return {**bleu_metrics(predictions, references), **means, EMPTY_PREDICTIONS: empty}
