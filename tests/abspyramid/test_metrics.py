"""AbsPyramid metrics against numbers worked out by hand and against the reference libraries."""

from __future__ import annotations

import math

import pytest
from nltk.translate.bleu_score import modified_precision
from sklearn.metrics import f1_score, roc_auc_score

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.answers import first_line, parse_yes_no
from conceptcomb.abspyramid.scoring import p_yes_from_top_logprobs

# --- detection ---------------------------------------------------------------------------

LABELS = [1, 1, 0, 0, 1]
P_YES = [0.9, 0.4, 0.6, 0.2, 0.7]


def test_detection_toy_by_hand() -> None:
    """Predictions (P >= 0.5) 1,0,1,0,1: 3 of 5 right; F1 2/3 (Yes) and 1/2 (No); 5 of 6
    (positive, negative) pairs ranked right."""
    scored = [m.from_probability(y, p) for y, p in zip(LABELS, P_YES, strict=True)]
    assert [d.pred for d in scored] == [1, 0, 1, 0, 1]
    result = m.detection_metrics(scored)
    assert result[m.ACCURACY] == pytest.approx(60.0)
    assert result[m.MACRO_F1] == pytest.approx(100 * (2 / 3 + 1 / 2) / 2)
    assert result[m.AUC] == pytest.approx(100 * 5 / 6)
    assert result[m.UNPARSABLE] == 0


def test_detection_matches_scikit_learn_as_the_authors_call_it() -> None:
    preds = [int(p >= 0.5) for p in P_YES]
    expected = 100 * f1_score(LABELS, preds, average="macro")
    assert m.macro_f1(LABELS, preds) == pytest.approx(expected)
    assert m.roc_auc(LABELS, P_YES) == pytest.approx(100 * roc_auc_score(LABELS, P_YES))


def test_auc_is_undefined_with_one_class_and_skips_missing_probabilities() -> None:
    assert math.isnan(m.roc_auc([1, 1], [0.2, 0.9]))
    assert m.roc_auc([1, 0, 1], [0.9, 0.1, float("nan")]) == pytest.approx(100.0)


def test_probability_of_yes_from_two_loglikelihoods() -> None:
    assert m.p_yes_from_loglikelihoods(math.log(0.1), math.log(0.3)) == pytest.approx(0.75)
    # Far-out log-likelihoods do not overflow; a tie counts as Yes (threshold >= 0.5).
    assert m.p_yes_from_loglikelihoods(-2000.0, -1000.0) == pytest.approx(1.0)
    assert m.from_probability(0, 0.5).pred == 1


def test_probability_of_yes_from_top_logprobs() -> None:
    top = [("Yes", math.log(0.6)), (" yes", math.log(0.1)), ("No", math.log(0.2)), ("Maybe", -1)]
    assert p_yes_from_top_logprobs(top) == pytest.approx(0.7 / 0.9)
    assert math.isnan(p_yes_from_top_logprobs([("Maybe", -0.1)]))


def test_unparsable_answers_count_as_no_and_are_counted() -> None:
    scored = [m.from_answer(1, None), m.from_answer(0, None), m.from_answer(1, 1)]
    assert [d.pred for d in scored] == [0, 0, 1]
    result = m.detection_metrics(scored)
    assert result[m.UNPARSABLE] == 2
    assert result[m.ACCURACY] == pytest.approx(200 / 3)


@pytest.mark.parametrize(
    ("reply", "cot", "expected"),
    [
        ("Yes", False, 1),
        ("No.", False, 0),
        ("  yes, it does", False, 1),
        ("The answer: NO", False, 0),
        ("No. Actually, yes.", False, 0),  # the first Yes/No
        ("Nothing is known about it; not sure.", False, None),  # whole words only
        ("", False, None),
        ("Step 1: there is no overlap.\nStep 2: Yes", True, 1),  # the last line with one
        ("Step 1: Yes, a flame gives heat.\nStep 2: No.\n", True, 0),
        ("Step 1: words.\nStep 2: unsure", True, None),
    ],
)
def test_yes_no_parsing(reply: str, cot: bool, expected: int | None) -> None:
    assert parse_yes_no(reply, reasoning_first=cot) == expected


# --- generation -------------------------------------------------------------------------

# 13a tokens: "Animal." -> "Animal", "." (case kept); the references' n-gram counts are
# merged by maximum ("dog dog dog" may match "dog" twice, "dog dog" once).
BLEU_TOY = [
    ("large animal", ["dog", "large animal", "pet"]),  # 1-grams 2/2, 2-grams 1/1
    ("a cooked meal", ["meal", "food"]),  # 1/3, 0/2
    ("Animal.", ["animal"]),  # 0/2, 0/1
    ("dog dog dog", ["dog", "dog dog"]),  # 2/3, 1/2
]


def test_bleu_toy_by_hand() -> None:
    """p1 = 5/10, p2 = 2/6; 10 hypothesis tokens against 4 (shortest references): BP = 1."""
    result = m.corpus_bleu([p for p, _ in BLEU_TOY], [r for _, r in BLEU_TOY])
    assert result.precisions[:2] == pytest.approx((0.5, 1 / 3))
    assert (result.translation_length, result.reference_length) == (10, 4)
    assert result.brevity_penalty == 1.0
    assert result.bleu == 0.0  # no 3-gram matches: BLEU-4 without smoothing is 0
    metrics = m.bleu_metrics([p for p, _ in BLEU_TOY], [r for _, r in BLEU_TOY])
    assert metrics == pytest.approx({m.BLEU1: 50.0, m.BLEU2: 100 / 3, m.BLEU_BP: 1.0})


def test_bleu_precisions_agree_with_nltk_modified_precision() -> None:
    """NLTK clips against the references the same way (every hypothesis has >= 2 tokens)."""
    for order, ours in ((1, 0.5), (2, 1 / 3)):
        fractions = [
            modified_precision([m.tokenize_13a(r) for r in refs], m.tokenize_13a(prediction), order)
            for prediction, refs in BLEU_TOY
        ]
        numerator = sum(f.numerator for f in fractions)
        denominator = sum(f.denominator for f in fractions)
        assert numerator / denominator == pytest.approx(ours)


def test_brevity_penalty_uses_the_shortest_reference() -> None:
    """1 token against references of 2 and 3 tokens: BP = exp(1 - 2/1)."""
    result = m.corpus_bleu(["dog"], [["big dog", "large brown dog"]])
    assert result.brevity_penalty == pytest.approx(math.exp(-1))
    assert result.precisions[0] == 1.0


def test_bleu_of_empty_predictions_is_zero_as_in_the_authors_wrapper() -> None:
    result = m.bleu_metrics(["  ", ""], [["dog"], ["cat"]])
    assert result == {m.BLEU1: 0.0, m.BLEU2: 0.0, m.BLEU_BP: 0.0}


def test_rouge_toy_by_hand() -> None:
    """Stemming makes "cooking meals" equal "cooked meal"; ROUGE-2 is recall, ROUGE-L is F."""
    assert m.best_rouge("cooking meals", ["cooked meal", "prepare food"]) == (1.0, 1.0)
    # vs "dog": no reference bigram (0); LCS 1 of 3 and 1 -> F = 0.5 (vs "large dog": 0.4).
    rouge2, rouge_l = m.best_rouge("a big dog", ["dog", "large dog"])
    assert rouge2 == 0.0
    assert rouge_l == pytest.approx(0.5)


METEOR_TOY = [
    ("large animal", ["dog", "large animal"]),  # 1 chunk of 2: 1 - 0.5 * 0.5**3 = 0.9375
    ("dog", ["big dog", "puppy"]),  # P 1, R 1/2: Fmean 0.5 / 0.95, penalty 0.5
    ("cooking", ["cooked"]),  # Porter stems match: 1 * (1 - 0.5)
    ("dog", ["hound", "cat"]),  # WordNet synonyms (dog.n.01 has the lemma hound): 0.5
]


def test_meteor_toy_by_hand_uses_wordnet_offline() -> None:
    scores = [m.best_meteor(p, refs) for p, refs in METEOR_TOY]
    assert scores == pytest.approx([0.9375, (0.5 / 0.95) * 0.5, 0.5, 0.5])


def test_generation_metrics_of_a_toy_set() -> None:
    predictions = [p for p, _ in METEOR_TOY]
    references = [r for _, r in METEOR_TOY]
    result = m.generation_metrics(predictions, references)
    assert result[m.METEOR] == pytest.approx(100 * (0.9375 + 0.5 / 0.95 * 0.5 + 0.5 + 0.5) / 4)
    # 1-grams: 2/2 + 1/1 + 0/1 + 0/1 = 3/5; 2-grams: 1/1.
    assert result[m.BLEU1] == pytest.approx(60.0)
    assert result[m.BLEU2] == pytest.approx(100.0)
    # ROUGE-2 recall: 1 (large animal), 0 elsewhere (no bigrams); ROUGE-L F: 1, 2/3 (dog |
    # big dog), 1 (cooking | cooked: both stem to "cook"), 0.
    assert result[m.ROUGE2] == pytest.approx(25.0)
    assert result[m.ROUGE_L] == pytest.approx(100 * (1 + 2 / 3 + 1) / 4)
    assert result[m.EMPTY_PREDICTIONS] == 0


def test_prediction_is_the_first_non_empty_line() -> None:
    assert first_line(" \n  a fruit\nmore text") == "a fruit"
    assert first_line("\n\n") == ""
