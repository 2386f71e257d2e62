"""The vectorised corpus metrics equal the libraries' scores on all items and on resamples
(an item drawn twice is listed twice for the library)."""

from __future__ import annotations

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from sklearn.metrics import f1_score, roc_auc_score

from conceptcomb.abspyramid.metrics import corpus_bleu, tokenize_13a
from conceptcomb.common.evidence import CorpusInputs
from conceptcomb.leaderboard.statistics import corpus, stats

RNG = np.random.default_rng(11)
WORDS = "a dog cat runs sits on the mat park ball throws man woman child red big".split()


def sentence(length: int) -> str:
    return " ".join(RNG.choice(WORDS, length))


RECORDS = [
    (sentence(int(RNG.integers(3, 10))), [sentence(int(RNG.integers(4, 9))) for _ in range(k)])
    for k in RNG.integers(1, 4, 40)
]
RECORDS[5] = ("", [sentence(5)])  # an empty reply, as a model may give


def resamples() -> np.ndarray:
    return stats.resample_indices(len(RECORDS), 6, seed=5)


def counts_of(rows: np.ndarray) -> np.ndarray:
    return np.stack([np.bincount(row, minlength=len(RECORDS)) for row in rows]).astype(float)


def coco(records: list) -> tuple[dict, dict]:
    gts = {str(i): list(refs) for i, (_, refs) in enumerate(records)}
    res = {str(i): [hypothesis] for i, (hypothesis, _) in enumerate(records)}
    return gts, res


def test_the_n_grams_are_counted_as_pycocoevalcaps_precook() -> None:
    """Words split as ``str.split()`` splits them (runs of any white space), every run of 1
    to 4 of them counted per sentence; words the references do not hold numbered apart."""
    from pycocoevalcap.cider.cider_scorer import precook

    sentences = [
        "a dog a dog a dog", "", "  the\tcat  sat\non the mat ", "a", "x y", "é è é è é",
        *(sentence(int(RNG.integers(0, 12))) for _ in range(30)),
    ]  # fmt: skip
    known = {"a": 0, "dog": 1, "mat": 2}
    numbers, lengths, new = corpus._words(sentences, known)
    assert list(lengths) == [len(s.split()) for s in sentences]
    assert set(new) == {w for s in sentences for w in s.split()} - set(known)
    counted = corpus.count_ngrams(numbers, lengths)
    name = {number: word for word, number in {**known, **new}.items()}

    def words_of(order: int, number: int) -> tuple[str, ...]:
        key = int(counted.distinct[order][number])
        if order == 0:
            return (name[key],)
        return (*words_of(order - 1, key // corpus.BASE), name[key % corpus.BASE])

    found: list[dict] = [{} for _ in sentences]
    for row in range(len(counted.tf)):
        gram = words_of(int(counted.order[row]), int(counted.number[row]))
        found[counted.sentence[row]][gram] = counted.tf[row]
    assert found == [dict(precook(s)) for s in sentences]


def test_coco_bleu_is_pycocoevalcaps() -> None:
    for order in (3, 4):
        metric = corpus.coco_bleu(RECORDS, order, scale=100.0)
        scores, _ = Bleu(4).compute_score(*coco(RECORDS), verbose=0)
        assert metric.value() == pytest.approx(100 * scores[order - 1], rel=1e-12)
        rows = resamples()
        found = metric.resampled(counts_of(rows))
        for row, value in zip(rows, found, strict=True):
            scores, _ = Bleu(4).compute_score(*coco([RECORDS[i] for i in row]), verbose=0)
            assert value == pytest.approx(100 * scores[order - 1], rel=1e-10)


def test_coco_cider_recomputes_the_document_frequencies_per_resample() -> None:
    metric = corpus.CocoCider(RECORDS, scale=10.0)
    score, _ = Cider().compute_score(*coco(RECORDS))
    assert metric.value() == pytest.approx(10 * score, rel=1e-12)
    rows = resamples()
    found = metric.resampled(counts_of(rows))
    for row, value in zip(rows, found, strict=True):
        score, _ = Cider().compute_score(*coco([RECORDS[i] for i in row]))
        assert value == pytest.approx(10 * score, rel=1e-12)
    subset = metric.subset([3, 1, 4])
    score, _ = Cider().compute_score(*coco([RECORDS[3], RECORDS[1], RECORDS[4]]))
    assert subset.value() == pytest.approx(10 * score, rel=1e-12)
    assert metric.subset(range(len(RECORDS))) is metric  # all items: nothing built again


def test_runs_on_the_same_references_share_them_and_are_resampled_together() -> None:
    """Every run of a task has the same references: their side of CIDEr-D is built once,
    and runs resampled together (`conceptcomb compare`) get what each gets alone."""
    runs = [
        [(RECORDS[(n + shift) % len(RECORDS)][0], refs) for n, (_, refs) in enumerate(RECORDS)]
        for shift in (0, 1, 7)
    ]
    ciders = [corpus.CocoCider(records, scale=10.0) for records in runs]
    assert ciders[1].refs is ciders[0].refs and ciders[2].refs is ciders[0].refs
    bleu = corpus.coco_bleu(runs[1], 4, scale=100.0)
    lazy = corpus.Lazy(lambda: ciders[2])
    counts = stats.resample_counts(len(RECORDS), 70, seed=9)  # more than one chunk of 64
    together = corpus.resampled_together([ciders[0], bleu, ciders[1], lazy], counts)
    alone = [m.resampled(counts) for m in (ciders[0], bleu, ciders[1], ciders[2])]
    for found, expected in zip(together, alone, strict=True):
        assert np.array_equal(found, expected)
    for row in (0, 69):
        drawn = [runs[1][i] for i in np.repeat(np.arange(len(RECORDS)), counts[row].astype(int))]
        score, _ = Cider().compute_score(*coco(drawn))
        assert together[2][row] == pytest.approx(10 * score, rel=1e-12)


def test_nmt_bleu_is_abspyramids_compute_bleu() -> None:
    texts = [(h, refs) for h, refs in RECORDS]
    tokens = [(tokenize_13a(h), [tokenize_13a(r) for r in refs]) for h, refs in texts]
    parts = {
        "precision_1": lambda b: b.precisions[0],
        "precision_2": lambda b: b.precisions[1],
        "brevity_penalty": lambda b: b.brevity_penalty,
    }
    rows = resamples()
    for part, read in parts.items():
        metric = corpus.nmt_bleu(tokens, part)
        expected = corpus_bleu([h for h, _ in texts], [r for _, r in texts])
        assert metric.value() == pytest.approx(read(expected), rel=1e-12)
        for row, value in zip(rows, metric.resampled(counts_of(rows)), strict=True):
            drawn = [texts[i] for i in row]
            expected = corpus_bleu([h for h, _ in drawn], [r for _, r in drawn])
            assert value == pytest.approx(read(expected), rel=1e-12)


def test_macro_f1_and_auc_are_scikit_learns() -> None:
    gold = RNG.integers(0, 2, 60)
    predicted = np.where(RNG.random(60) < 0.7, gold, 1 - gold)
    p_yes = np.round(RNG.random(60), 1)  # ties, as rounded probabilities have
    p_yes[4] = np.nan
    f1 = corpus.macro_f1(list(gold), list(predicted), scale=100.0)
    auc = corpus.Auc(list(gold), list(p_yes), scale=100.0)
    rows = stats.resample_indices(60, 8, seed=2)
    counts = np.stack([np.bincount(r, minlength=60) for r in rows]).astype(float)
    keep = np.isfinite(p_yes)
    assert f1.value() == pytest.approx(100 * f1_score(gold, predicted, average="macro"))
    assert auc.value() == pytest.approx(100 * roc_auc_score(gold[keep], p_yes[keep]))
    for row, weights, f, a in zip(
        rows, counts, f1.resampled(counts), auc.resampled(counts), strict=True
    ):
        expected = f1_score(gold[row], predicted[row], average="macro", zero_division=0.0)
        assert f == pytest.approx(100 * expected)
        w = weights[keep]
        expected_auc = roc_auc_score(gold[keep], p_yes[keep], sample_weight=w)
        assert a == pytest.approx(100 * expected_auc)


def test_looped_calls_the_aggregation_on_each_resample() -> None:
    from lm_eval.api.metrics import bleu

    items = [(refs[0], hypothesis) for hypothesis, refs in RECORDS]
    metric = corpus.Looped(items, bleu)
    assert metric.value() == pytest.approx(bleu(items))
    rows = resamples()
    for row, value in zip(rows, metric.resampled(counts_of(rows)), strict=True):
        drawn = [items[i] for i in sorted(row)]
        assert value == pytest.approx(bleu(drawn))


def test_a_metric_of_some_items_draws_from_all_of_them() -> None:
    """A `_verified` metric: the resamples draw from every item, the metric takes those kept."""
    keep = [n % 3 != 0 for n in range(len(RECORDS))]
    inputs = CorpusInputs(
        "coco-bleu", [r if k else None for r, k in zip(RECORDS, keep, strict=True)], 100.0, 4
    )
    metric = corpus.build(inputs)
    rows = resamples()
    for row, value in zip(rows, metric.resampled(counts_of(rows)), strict=True):
        drawn = [RECORDS[i] for i in row if keep[i]]
        scores, _ = Bleu(4).compute_score(*coco(drawn), verbose=0)
        assert value == pytest.approx(100 * scores[3], rel=1e-10)
    kept = [RECORDS[i] for i in (4, 2, 7) if keep[i]]
    scores, _ = Bleu(4).compute_score(*coco(kept), verbose=0)
    assert metric.subset([4, 2, 7, 3]).value() == pytest.approx(100 * scores[3], rel=1e-10)
    # CIDEr-D of the same items, built after BLEU from the n-grams it counted (one count
    # per records): its document frequencies are those of the items kept in each resample.
    counted: dict = {}
    corpus.build(inputs, counted)
    cider = corpus.build(CorpusInputs("coco-cider", inputs.records, 10.0), counted)
    assert sum(what == "n-grams" for what, _ in counted) == 1
    for row, value in zip(rows, cider.resampled(counts_of(rows)), strict=True):
        score, _ = Cider().compute_score(*coco([RECORDS[i] for i in row if keep[i]]))
        assert value == pytest.approx(10 * score, rel=1e-12)
