"""Corpus metrics on bootstrap resamples, vectorised (`stats`'s bootstrap).

A corpus metric (BLEU, CIDEr, macro-F1, AUC) is not a mean over items, so a resample of the
items needs the metric computed again. Each class here takes the items once, computes what
each item adds (its n-gram counts and lengths, its confusion cell, its tf-idf terms) with the
library the benchmark scores with, and then computes the metric on a (resamples x items)
matrix of draw counts with numpy at once: a resample that draws an item twice counts it
twice, as the library would if the item were listed twice. Each one's ``value()`` equals the
library's score on all items, and ``resampled`` the library's score on each resample
(tests/leaderboard/statistics/test_corpus.py checks both against the libraries):

* `coco_bleu`: pycocoevalcap's BLEU-n (CommonGen, CGGC): clipped n-gram matches and guesses,
  hypothesis lengths and the closest reference length summed over the items, then
  ``prod_k ((correct_k + 1e-15) / (guess_k + 1e-9))^(1/n)`` with the brevity penalty
  ``exp(1 - ref/test)`` when test < ref (``BleuScorer.compute_score``);
* `CocoCider`: pycocoevalcap's CIDEr-D. Its idf comes from the references of the corpus
  scored, so it changes with every resample: the document frequency of each n-gram is
  recomputed per resample (the draw counts times each item's n-gram presence), and since
  every term of the score is a product of term frequencies with idf^2, each item's score on
  a resample is a few sparse products with that resample's idf^2;
* `nmt_bleu`: tensorflow/nmt ``compute_bleu`` as Hugging Face ``evaluate``'s "bleu" computes
  it (AbsPyramid): the n-gram precision of one order, or the brevity penalty against the
  shortest reference;
* `macro_f1`: scikit-learn's ``f1_score(average="macro", zero_division=0)``: per-class F1 from
  the summed confusion cells, averaged over the classes present in the resample;
* `Auc`: scikit-learn's ``roc_auc_score`` with the draw counts as sample weights (ties
  count one half);
* `Mean`: a weighted mean (metrics that are means, for tests and the generic path);
* `Looped`: any other aggregation (one registered with lm-eval, such as its ``bleu``): called
  on each resample's items in turn, not vectorised.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptcomb.benchmarks import evidence_adapter
from conceptcomb.common.errors import ConceptcombError, DataFormatError
from conceptcomb.common.evidence import CorpusInputs

CHUNK = 64  # resamples computed at once where a (resamples x vocabulary) matrix is needed


class Summed:
    """A metric computed from statistics summed over the items: ``formula`` maps the
    (resamples x k) sums to the metric's values."""

    def __init__(self, stats: np.ndarray, formula: Callable[[np.ndarray], np.ndarray]) -> None:
        self.stats = np.asarray(stats, dtype=float)
        self.formula = formula

    @property
    def n(self) -> int:
        return len(self.stats)

    def value(self) -> float:
        return float(self.formula(self.stats.sum(axis=0)[None, :])[0])

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        return self.formula(counts @ self.stats)

    def subset(self, rows: Sequence[int]) -> Summed:
        return Summed(self.stats[np.asarray(rows, dtype=int)], self.formula)


# --- pycocoevalcap: BLEU -------------------------------------------------------------------
def coco_bleu_stats(records: Sequence[tuple[str, Sequence[str]]], max_order: int = 4) -> np.ndarray:
    """Per item (hypothesis, references; tokens joined by spaces as pycocoevalcap takes them):
    [test length, closest reference length, guess_1..n, correct_1..n], counted by
    pycocoevalcap's own ``BleuScorer``."""
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer

    scorer = BleuScorer(n=max_order)
    for hypothesis, references in records:
        scorer += (hypothesis, list(references))
    rows = []
    for comps in scorer.ctest:
        reflen = scorer._single_reflen(comps["reflen"], "closest", comps["testlen"])
        rows.append([comps["testlen"], reflen, *comps["guess"], *comps["correct"]])
    return np.asarray(rows, dtype=float).reshape(len(rows), 2 + 2 * max_order)


def _coco_bleu_formula(order: int, max_order: int, scale: float) -> Callable:
    def formula(sums: np.ndarray) -> np.ndarray:
        tiny, small = 1e-15, 1e-9
        testlen, reflen = sums[:, 0], sums[:, 1]
        guess, correct = sums[:, 2 : 2 + max_order], sums[:, 2 + max_order :]
        product = np.prod((correct[:, :order] + tiny) / (guess[:, :order] + small), axis=1)
        bleu = product ** (1.0 / order)
        ratio = (testlen + tiny) / (reflen + small)
        with np.errstate(divide="ignore", over="ignore"):
            penalty = np.where(ratio < 1, np.exp(1 - 1 / ratio), 1.0)
        return scale * bleu * penalty

    return formula


def coco_bleu(
    records: Sequence[tuple[str, Sequence[str]]], order: int, scale: float = 1.0, max_order: int = 4
) -> Summed:
    """pycocoevalcap ``Bleu(max_order)``'s BLEU-``order`` (times ``scale``)."""
    return Summed(coco_bleu_stats(records, max_order), _coco_bleu_formula(order, max_order, scale))


# --- pycocoevalcap: CIDEr-D ----------------------------------------------------------------
@dataclass
class _CiderTerms:
    """One n-gram order's sparse terms (rows: (item, reference) pairs or items; columns:
    the n-grams)."""

    clipped: Any  # pairs x V: min(tf_hyp, tf_ref) * tf_ref
    ref_sq: Any  # pairs x V: tf_ref^2
    hyp_sq: Any  # items x V: tf_hyp^2


class CocoCider:
    """pycocoevalcap ``Cider()``'s CIDEr-D (times ``scale``) on resamples, its document
    frequencies recomputed on each (`CiderScorer.compute_doc_freq` counts an n-gram once per
    item whose references hold it; a resample lists an item as often as it is drawn)."""

    def __init__(
        self, records: Sequence[tuple[str, Sequence[str]]], scale: float = 1.0, sigma: float = 6.0
    ) -> None:
        from pycocoevalcap.cider.cider_scorer import cook_refs, cook_test

        self.scale, self.sigma, self.max_order = scale, sigma, 4
        tests = [cook_test(hypothesis) for hypothesis, _ in records]
        refs = [cook_refs(list(references)) for _, references in records]
        self._build(tests, refs)
        self.records = list(records)

    def _build(self, tests: list[dict], refs: list[list[dict]]) -> None:
        from scipy import sparse

        vocabulary: dict[tuple[str, ...], int] = {}

        def column(ngram: tuple[str, ...]) -> int:
            return vocabulary.setdefault(ngram, len(vocabulary))

        self.n = len(tests)
        pair_item, penalty = [], []
        presence: list[tuple[int, int]] = []
        entries: dict[int, dict[str, list]] = {
            k: {"pair": [], "hyp": []} for k in range(self.max_order)
        }
        pair = 0
        for item, (test, references) in enumerate(zip(tests, refs, strict=True)):
            for ngram in {g for ref in references for g in ref}:
                presence.append((item, column(ngram)))
            for ngram, tf in test.items():
                entries[len(ngram) - 1]["hyp"].append((item, column(ngram), float(tf) ** 2))
            hyp_length = sum(tf for g, tf in test.items() if len(g) == 2)  # as the scorer counts
            for ref in references:
                ref_length = sum(tf for g, tf in ref.items() if len(g) == 2)
                for ngram, tf_ref in ref.items():
                    clipped = min(float(test.get(ngram, 0.0)), float(tf_ref)) * tf_ref
                    entries[len(ngram) - 1]["pair"].append(
                        (pair, column(ngram), clipped, float(tf_ref) ** 2)
                    )
                delta = float(hyp_length - ref_length)
                penalty.append(math.exp(-(delta**2) / (2 * self.sigma**2)))
                pair_item.append(item)
                pair += 1
        width = len(vocabulary)
        rows, cols = zip(*presence, strict=True) if presence else ((), ())
        self.presence = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(self.n, width))
        self.terms = []
        for k in range(self.max_order):
            p = entries[k]["pair"]
            h = entries[k]["hyp"]
            pr, pc, pv, ps = (list(x) for x in zip(*p, strict=True)) if p else ([], [], [], [])
            hr, hc, hv = (list(x) for x in zip(*h, strict=True)) if h else ([], [], [])
            self.terms.append(
                _CiderTerms(
                    sparse.csr_matrix((pv, (pr, pc)), shape=(pair, width)),
                    sparse.csr_matrix((ps, (pr, pc)), shape=(pair, width)),
                    sparse.csr_matrix((hv, (hr, hc)), shape=(self.n, width)),
                )
            )
        self.pair_item = np.asarray(pair_item, dtype=int)
        self.penalty = np.asarray(penalty, dtype=float)
        self.item_of_pair = sparse.csr_matrix(
            (np.ones(pair), (self.pair_item, np.arange(pair))), shape=(self.n, pair)
        )
        counts = np.bincount(self.pair_item, minlength=self.n)
        self.refs_per_item = np.maximum(counts, 1).astype(float)

    def _item_scores(self, counts: np.ndarray) -> np.ndarray:
        """(resamples x items) CIDEr-D of each item, with each resample's idf."""
        df = (self.presence.T @ counts.T).T  # resamples x V: document frequencies
        size = np.maximum(counts.sum(axis=1, keepdims=True), 1.0)  # the items listed
        idf = np.log(size) - np.log(np.maximum(df, 1.0))
        weight = (idf**2).T  # V x resamples
        total = np.zeros((counts.shape[0], len(self.penalty)))
        for terms in self.terms:
            numerator = (terms.clipped @ weight).T  # resamples x pairs
            ref_norm = np.sqrt((terms.ref_sq @ weight).T)
            hyp_norm = np.sqrt((terms.hyp_sq @ weight).T)[:, self.pair_item]
            denominator = hyp_norm * ref_norm
            with np.errstate(divide="ignore", invalid="ignore"):
                value = np.where(denominator != 0, numerator / denominator, numerator)
            total += value * self.penalty
        per_item = (self.item_of_pair @ total.T).T  # resamples x items: summed over references
        return per_item / self.max_order / self.refs_per_item * 10.0

    def value(self) -> float:
        ones = np.ones((1, self.n))
        return float(self.scale * np.mean(self._item_scores(ones)[0]))

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        out = np.empty(counts.shape[0])
        for start in range(0, counts.shape[0], CHUNK):
            chunk = counts[start : start + CHUNK]
            scores = self._item_scores(chunk)
            size = chunk.sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                out[start : start + CHUNK] = self.scale * np.sum(chunk * scores, axis=1) / size
        return out

    def subset(self, rows: Sequence[int]) -> CocoCider:
        return CocoCider([self.records[i] for i in rows], self.scale, self.sigma)


# --- tensorflow/nmt compute_bleu (Hugging Face evaluate's "bleu") ------------------------
def nmt_bleu_stats(
    records: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]], max_order: int = 4
) -> np.ndarray:
    """Per item (hypothesis tokens, references' tokens): [matches_1..n, possible_1..n,
    translation length, shortest reference length], as ``compute_bleu`` counts them."""
    from collections import Counter

    def ngrams(tokens: Sequence[str]) -> Counter:
        found: Counter = Counter()
        for order in range(1, max_order + 1):
            for start in range(len(tokens) - order + 1):
                found[tuple(tokens[start : start + order])] += 1
        return found

    rows = []
    for hypothesis, references in records:
        merged: Counter = Counter()
        for reference in references:
            merged |= ngrams(reference)
        matches = [0.0] * max_order
        for ngram, count in (ngrams(hypothesis) & merged).items():
            matches[len(ngram) - 1] += count
        possible = [max(len(hypothesis) - k + 1, 0) for k in range(1, max_order + 1)]
        shortest = min(len(reference) for reference in references) if references else 0
        rows.append([*matches, *possible, len(hypothesis), shortest])
    return np.asarray(rows, dtype=float).reshape(len(rows), 2 * max_order + 2)


def nmt_bleu(
    records: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]],
    part: str,
    scale: float = 1.0,
    max_order: int = 4,
) -> Summed:
    """``part``: "precision_<k>" (the k-gram precision) or "brevity_penalty"."""

    def formula(sums: np.ndarray) -> np.ndarray:
        matches, possible = sums[:, :max_order], sums[:, max_order : 2 * max_order]
        length, reference = sums[:, 2 * max_order], sums[:, 2 * max_order + 1]
        if part.startswith("precision_"):
            k = int(part.removeprefix("precision_")) - 1
            with np.errstate(divide="ignore", invalid="ignore"):
                return scale * np.where(possible[:, k] > 0, matches[:, k] / possible[:, k], 0.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.where(reference > 0, length / reference, np.inf)
            penalty = np.where(ratio > 1.0, 1.0, np.exp(1 - 1.0 / ratio))
        return scale * np.where(length > 0, penalty, 0.0)

    return Summed(nmt_bleu_stats(records, max_order), formula)


# --- classification ------------------------------------------------------------------------
def macro_f1(gold: Sequence[Any], predicted: Sequence[Any], scale: float = 1.0) -> Summed:
    """scikit-learn's macro F1 (zero_division=0): the classes are those present in the
    gold or predicted labels of each resample."""
    labels = sorted({*gold, *predicted}, key=str)
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    cells = np.zeros((len(gold), k * k))
    for row, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        cells[row, index[g] * k + index[p]] = 1.0

    def formula(sums: np.ndarray) -> np.ndarray:
        confusion = sums.reshape(-1, k, k)
        true_pos = np.diagonal(confusion, axis1=1, axis2=2)
        gold_total, predicted_total = confusion.sum(axis=2), confusion.sum(axis=1)
        present = (gold_total + predicted_total) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            f1 = np.where(present, 2 * true_pos / (gold_total + predicted_total), 0.0)
        classes = present.sum(axis=1)
        return scale * np.where(classes > 0, f1.sum(axis=1) / np.maximum(classes, 1), np.nan)

    return Summed(cells, formula)


class Auc:
    """scikit-learn's ``roc_auc_score`` with each item weighted by its draw count: the
    weighted share of (positive, negative) pairs ranked right, ties counting one half; NaN
    where a resample holds one class only. Items without a score (NaN) are left out, as the
    benchmark leaves them out."""

    def __init__(self, labels: Sequence[int], scores: Sequence[float], scale: float = 1.0) -> None:
        self.labels, self.scores = list(labels), [float(s) for s in scores]
        self.scale, self.n = scale, len(self.labels)
        score = np.asarray(self.scores, dtype=float)
        self.keep = np.isfinite(score)
        levels, group = np.unique(np.where(self.keep, score, 0.0), return_inverse=True)
        self.groups = len(levels)
        label = np.asarray(self.labels, dtype=int)
        self.positive = (label == 1) & self.keep
        self.negative = (label != 1) & self.keep
        self.group = group

    def _by_group(self, weights: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = np.zeros((weights.shape[0], self.groups))
        for g in range(self.groups):  # few distinct scores or many: one column each
            members = mask & (self.group == g)
            if members.any():
                out[:, g] = weights[:, members].sum(axis=1)
        return out

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        pos, neg = self._by_group(counts, self.positive), self._by_group(counts, self.negative)
        below = np.cumsum(neg, axis=1) - neg
        ranked = np.sum(pos * (below + 0.5 * neg), axis=1)
        total = pos.sum(axis=1) * neg.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.scale * np.where(total > 0, ranked / total, np.nan)

    def value(self) -> float:
        return float(self.resampled(np.ones((1, self.n)))[0])

    def subset(self, rows: Sequence[int]) -> Auc:
        return Auc([self.labels[i] for i in rows], [self.scores[i] for i in rows], self.scale)


# --- means and the rest -----------------------------------------------------------------------
class Mean:
    """The mean of per-item values (NaN left out) on each resample."""

    def __init__(self, values: Sequence[float]) -> None:
        self.values = np.asarray(values, dtype=float)
        self.n = len(self.values)

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        defined = np.isfinite(self.values)
        weights = counts[:, defined]
        with np.errstate(divide="ignore", invalid="ignore"):
            return weights @ self.values[defined] / weights.sum(axis=1)

    def value(self) -> float:
        return float(np.nanmean(self.values)) if np.isfinite(self.values).any() else math.nan

    def subset(self, rows: Sequence[int]) -> Mean:
        return Mean(self.values[np.asarray(rows, dtype=int)])


class Looped:
    """Any aggregation of per-item values (lm-eval's registered ``bleu``, ``f1``...), called
    once on all items and once per resample, on the items drawn (in the order drawn)."""

    def __init__(self, items: Sequence[Any], aggregate: Callable[[list[Any]], float]) -> None:
        self.items, self.aggregate, self.n = list(items), aggregate, len(items)

    def value(self) -> float:
        return float(self.aggregate(list(self.items)))

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        positions = np.arange(self.n)
        out = np.empty(counts.shape[0])
        for row, drawn in enumerate(counts.astype(int)):
            chosen = np.repeat(positions, drawn)
            try:
                out[row] = float(self.aggregate([self.items[i] for i in chosen]))
            except (ValueError, ZeroDivisionError, TypeError):
                out[row] = math.nan
        return out

    def subset(self, rows: Sequence[int]) -> Looped:
        return Looped([self.items[i] for i in rows], self.aggregate)


class Masked:
    """A metric over some of the items only (a ``_verified`` metric's verified items): a
    resample draws from all items and the metric takes those it keeps."""

    def __init__(self, metric: Any, keep: Sequence[bool]) -> None:
        self.metric, self.keep = metric, np.asarray(keep, dtype=bool)
        self.n = len(self.keep)

    def value(self) -> float:
        return self.metric.value() if self.keep.any() else math.nan

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        if not self.keep.any():
            return np.full(counts.shape[0], math.nan)
        return self.metric.resampled(counts[:, self.keep])

    def subset(self, rows: Sequence[int]) -> Masked:
        rows = np.asarray(rows, dtype=int)
        kept = rows[self.keep[rows]]
        inner = np.cumsum(self.keep) - 1  # an item's row among the kept
        return Masked(self.metric.subset(inner[kept]), self.keep[rows])


class Lazy:
    """A corpus metric built on first use (CIDEr's tables take seconds on a large task; a
    report ranks by one metric of several)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make, self._metric = make, None

    @property
    def metric(self) -> Any:
        if self._metric is None:
            self._metric = self._make()
        return self._metric

    @property
    def n(self) -> int:
        return int(self.metric.n)

    def value(self) -> float:
        return float(self.metric.value())

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        return self.metric.resampled(counts)

    def subset(self, rows: Sequence[int]) -> Any:
        return self.metric.subset(rows)


def build(inputs: CorpusInputs) -> Any:
    """The resampled computation a benchmark's `CorpusInputs` names (records of None: the
    items the metric leaves out)."""
    keep = [record is not None for record in inputs.records]
    records = [record for record in inputs.records if record is not None]
    kind, scale = inputs.kind, inputs.scale
    if kind == "coco-bleu":
        metric: Any = coco_bleu(records, int(inputs.part), scale)
    elif kind == "coco-cider":
        metric = CocoCider(records, scale)
    elif kind == "nmt-bleu":
        metric = nmt_bleu(records, str(inputs.part), scale)
    elif kind == "macro-f1":
        metric = macro_f1([g for g, _ in records], [p for _, p in records], scale)
    elif kind == "auc":
        metric = Auc([label for label, _ in records], [p for _, p in records], scale)
    else:
        raise ValueError(f"no resampled computation of kind {kind!r}")
    return metric if all(keep) else Masked(metric, keep)


# --- a benchmark's corpus metrics --------------------------------------------------------
def _pairs_with_test_set(
    adapter: Any, record: dict[str, Any], items: list[dict[str, Any]], data_dir: str | None
) -> list[tuple[Any, dict[str, Any]]]:
    test = adapter.test_set(record["task"], record.get("options") or {}, data_dir)
    by_id = {test.item_id(key): item for key, item in test.items.items()}
    pairs = []
    for evidence in items:
        found = by_id.get(evidence.get("id"))
        if found is None:
            raise DataFormatError(f"item {evidence.get('id')} is not in the pinned test set here")
        pairs.append((found, evidence))
    return pairs


def corpus_metrics(
    benchmark: str,
    record: dict[str, Any],
    items: list[dict[str, Any]],
    wanted: list[str],
    data_dir: str | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The task's corpus metrics on its items (`corpus.build`), and why others are not
    there: the benchmark computes them from its test items (references, gold labels)."""
    if not wanted:
        return {}, {}
    adapter = evidence_adapter(benchmark)
    if adapter is None or not hasattr(adapter, "corpus_inputs"):
        return {}, dict.fromkeys(wanted, f"{benchmark} does not resample its corpus metrics")
    try:
        pairs = _pairs_with_test_set(adapter, record, items, data_dir)
        inputs = adapter.corpus_inputs(record["task"], record.get("options") or {}, pairs)
    except ConceptcombError as err:
        reason = f"its test items could not be read here ({err})"
        return {}, dict.fromkeys(wanted, reason)
    except Exception as err:  # an item the computation does not take: named, not raised
        return {}, dict.fromkeys(wanted, f"cannot be recomputed ({type(err).__name__}: {err})")
    found, skipped = {}, {}
    for metric in wanted:
        if metric in inputs:
            found[metric] = Lazy(functools.partial(build, inputs[metric]))
        else:
            skipped[metric] = "a corpus metric whose tool scores the whole corpus at once (a jar)"
    return found, skipped
