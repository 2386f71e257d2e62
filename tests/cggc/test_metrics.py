"""Table 4 metrics on a fixed toy corpus equal pycocoevalcap's and rouge-score's own output."""

from __future__ import annotations

import shutil

import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.meteor.meteor import Meteor
from rouge_score import rouge_scorer

from conceptcomb.cggc import metrics
from conceptcomb.cggc.metrics import Scored, all_metrics, corpus_metric, coverage, tokenize

TOY = [
    Scored("1", "The dog is wagging his tail.", ("A dog wags its tail happily.",),
           ("dog", "tail", "wag")),
    Scored("2", "He puts a cheese pizza in an oven.", ("He put the pizza in the oven.",),
           ("cheese", "oven", "pizza")),
    Scored("3", "skiers ski down the snowy mountain", ("Skier skis down the mountain",),
           ("ski", "mountain", "skier")),
    Scored("4", "", ("A man paddles his canoe on the lake.",), ("canoe", "lake", "paddle")),
]  # fmt: skip


def coco_inputs() -> tuple[dict, dict]:
    # CommonGen eval.py: spaCy tokens joined by spaces, no lower-casing
    gts = {str(i): [tokenize(r) for r in s.references] for i, s in enumerate(TOY)}
    res = {str(i): [tokenize(s.prediction)] for i, s in enumerate(TOY)}
    return gts, res


def test_tokenization_is_spacys() -> None:
    assert tokenize("The dog's tail, wagging.") == "The dog 's tail , wagging ."


def test_bleu_and_cider_equal_pycocoevalcap() -> None:
    gts, res = coco_inputs()
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    cider, _ = Cider().compute_score(gts, res)
    assert corpus_metric("bleu3", TOY) == pytest.approx(100 * bleu[2])
    assert corpus_metric("bleu4", TOY) == pytest.approx(100 * bleu[3])
    assert corpus_metric("cider", TOY) == pytest.approx(10 * cider)
    assert 0 < bleu[3] < bleu[2] < 1 and cider > 0


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")
def test_meteor_equals_the_meteor_15_jar() -> None:
    gts, res = coco_inputs()
    scorer = Meteor()
    expected, _ = scorer.compute_score(gts, res)
    del scorer
    assert corpus_metric("meteor", TOY) == pytest.approx(100 * expected)
    assert 0.1 < expected < 0.9


def test_rouge_equals_rouge_score_with_stemming() -> None:
    scorer = rouge_scorer.RougeScorer(["rouge2", "rougeL"], use_stemmer=True)
    for name in ("rouge2", "rougeL"):
        own = [scorer.score(s.references[0], s.prediction)[name].fmeasure for s in TOY]
        assert corpus_metric(name, TOY) == pytest.approx(100 * sum(own) / len(own))


def test_coverage_counts_lemmatized_concepts() -> None:
    assert coverage("The dog is wagging his tail.", ["dog", "tail", "wag"]) == pytest.approx(100)
    assert coverage(
        "Skiers ski down the snowy mountain", ["ski", "mountain", "skier"]
    ) == pytest.approx(100)
    assert coverage("A dog sleeps.", ["dog", "tail", "wag"]) == pytest.approx(100 / 3)
    assert coverage("", ["dog"]) == 0.0


def test_all_metrics_and_spice_reported_unavailable(monkeypatch, capsys) -> None:
    monkeypatch.delenv(metrics.SPICE_ENV, raising=False)
    values = all_metrics(TOY)
    assert list(values) == list(metrics.METRIC_NAMES)
    lib_ready = metrics.spice_status() is None
    if not lib_ready:  # no CoreNLP jars here: NaN and a message saying how to enable SPICE
        assert values["spice"] != values["spice"]
        assert "spice_jars=DIR" in capsys.readouterr().out + (metrics.spice_status() or "")
    assert values["coverage"] == pytest.approx((100 + 100 + 100 + 0) / 4)
    assert values["bleu4"] == pytest.approx(corpus_metric("bleu4", TOY))


def test_spice_jar_folder_must_hold_the_jars(tmp_path) -> None:
    if metrics.spice_status() is None:
        pytest.skip("SPICE's CoreNLP jars are installed here")
    with pytest.raises(Exception, match=r"stanford-corenlp-3\.6\.0\.jar"):
        metrics.spice_status(str(tmp_path))
