"""P@k and R@k: the gold words score 1, and the seed's duplicate rule, checked by hand."""

from __future__ import annotations

import random

import pytest

from conceptcomb.mcrae.docs import build_doc
from conceptcomb.mcrae.lm_eval_hooks import process_results
from conceptcomb.mcrae.metrics import concept_metrics, match_properties, metric_infos
from conceptcomb.mcrae.tasks import ESSLLI44, McraeTaskSpec

pytestmark = pytest.mark.shared_data


def gold_words(gold) -> list[str]:
    """Each gold feature's head word: what a perfect word-space model would output."""
    return [feature.heads[0] for feature in gold.features]


def gold_phrases(gold) -> list[str]:
    """The gold features written as phrases (``beh_-_lays_eggs`` -> ``lays eggs``)."""
    phrases = [feature.feature.replace("_", " ") for feature in gold.features]
    return [phrase.replace("inbeh -", "").replace("beh -", "") for phrase in phrases]


def fate(gold, match) -> str:
    if match.duplicate:
        return "dup"
    return "miss" if match.claimed is None else gold.features[match.claimed].feature


def test_gold_words_as_output_give_precision_at_10_of_one(esslli_golds) -> None:
    for concept, gold in esslli_golds.items():
        expected = len(gold.features) / 10  # 1.0, and 0.9 for snail (9 features)
        for properties in (gold_words(gold), gold_phrases(gold)):
            values = concept_metrics(gold, properties)
            assert values["P@10"] == pytest.approx(expected), (concept, properties)
            assert values["R@10"] == 1.0, concept
            assert values["P@20"] == pytest.approx(expected / 2), concept
        assert concept_metrics(gold, gold_words(gold))["P@10_strict"] == pytest.approx(expected)


def test_gold_words_in_any_order_still_score_one(esslli_golds) -> None:
    rng = random.Random(6)
    for gold in esslli_golds.values():
        words = gold_words(gold)
        rng.shuffle(words)
        assert concept_metrics(gold, words)["R@10_strict"] == 1.0


def test_gold_words_score_one_on_all_541_concepts(all_golds) -> None:
    assert len(all_golds) == 541
    for gold in all_golds.values():
        values = concept_metrics(gold, gold_words(gold))
        assert values["P@10"] == pytest.approx(min(len(gold.features), 10) / 10), gold.concept
        assert values["R@10"] == 1.0, gold.concept


def test_shuffled_output_with_duplicates_hand_checked(esslli_golds) -> None:
    """cherry's gold: is_red, a_fruit, has_a_pit, tastes_sweet, has_a_stem, grows_on_trees,
    is_round, is_small, eaten_in_pies, eaten_in_summer.

    rank  property   fate
     1    sweet      hit  tastes_sweet
     2    red        hit  is_red
     3    sweetness  duplicate of tastes_sweet (derivation of sweet): skipped, not counted
     4    juicy      miss
     5    fruits     hit  a_fruit
     6    reds       duplicate of is_red (inflection): skipped
     7    pits       hit  has_a_pit
     8    cherries   miss (the concept's own name never counts)
     9    round      hit  is_round
    10    trees      hit  grows_on_trees
    11    pie        hit  eaten_in_pies
    12    sweeter    duplicate of tastes_sweet: skipped
    13    summer     hit  eaten_in_summer   <- the 10th counted property
    14    small      hit  is_small
    15    stem       hit  has_a_stem
    16    red        duplicate: skipped

    Counted (duplicates out): 12 properties, 10 hits, 8 of them among the first 10.
    P@10 = 8/10, P@20 = 10/20, P@30 = 10/30; R@10 = 8/10, R@20 = R@30 = 10/10.
    Counting the duplicates would give 6 hits in the first 10 (P@10 = 0.6).
    """
    gold = esslli_golds["cherry"]
    output = [
        "sweet", "red", "sweetness", "juicy", "fruits", "reds", "pits", "cherries", "round",
        "trees", "pie", "sweeter", "summer", "small", "stem", "red",
    ]  # fmt: skip
    result = match_properties(gold, output, "strict")
    fates = [fate(gold, match) for match in result.matches]
    assert fates == [
        "tastes_sweet", "is_red", "dup", "miss", "a_fruit", "dup", "has_a_pit", "miss",
        "is_round", "grows_on_trees", "eaten_in_pies", "dup", "eaten_in_summer", "is_small",
        "has_a_stem", "dup",
    ]  # fmt: skip
    values = concept_metrics(gold, output)
    for suffix in ("_strict", ""):  # single words: both matching modes agree
        assert values[f"P@10{suffix}"] == pytest.approx(0.8)
        assert values[f"P@20{suffix}"] == pytest.approx(0.5)
        assert values[f"P@30{suffix}"] == pytest.approx(10 / 30)
        assert values[f"R@10{suffix}"] == pytest.approx(0.8)
        assert values[f"R@20{suffix}"] == 1.0
    assert values["n_properties"] == 16


def test_one_word_naming_two_features_claims_the_better_one_first(esslli_golds) -> None:
    dog = esslli_golds["dog"]  # has_4_legs (18 subjects) and has_legs (18), both head "legs"
    result = match_properties(dog, ["legs", "leg", "four legs"], "phrase")
    assert [fate(dog, match) for match in result.matches] == ["has_4_legs", "has_legs", "dup"]
    assert result.matches[2].duplicate


def test_phrases_match_by_any_content_word_strict_needs_one_word(esslli_golds) -> None:
    gold = esslli_golds["cherry"]
    properties = ["is red in colour", "Grows on trees.", "Sweet", "a small stone"]
    values = concept_metrics(gold, properties)
    assert values["P@10"] == pytest.approx(0.4)  # red, trees, sweet, small
    assert values["P@10_strict"] == pytest.approx(0.1)  # only "Sweet" is a single word


def test_lm_eval_process_results_reads_a_numbered_reply(esslli_golds) -> None:
    gold = esslli_golds["chicken"]
    doc = build_doc(McraeTaskSpec(ESSLLI44), gold, "norms_order", "tagged")
    reply = "Sure! Properties of a chicken:\n" + "\n".join(
        f"{rank}. {prop}" for rank, prop in enumerate(gold_phrases(gold), start=1)
    )
    values = process_results(doc, [reply])
    assert values["P@10"] == 1.0 and values["n_properties"] == 10
    assert set(values) == {info.name for info in metric_infos()}
