"""Pairing rules of `conceptcomb.leaderboard.compare.comparison`, on runs' per-item scores
built here: what refuses a pair (in one line naming both), what --allow-different-prompts
allows, how several runs of one model are averaged per item, and what is listed as not
paired."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from conceptcomb.leaderboard.compare.cli import number_text, table
from conceptcomb.leaderboard.compare.comparison import Comparison, _Distributions, compare, sides
from conceptcomb.leaderboard.compare.items import CHAT_ONE, CHAT_TURNS, TEXT, Found, TaskItems
from conceptcomb.leaderboard.statistics import corpus, stats

RNG = np.random.default_rng(3)
IDS = [f"item {n:02d}" for n in range(40)]  # in the order compare pairs items: by id


def run(model: str, scores: np.ndarray, **fields: object) -> TaskItems:
    items = TaskItems(
        task="my_task", framework=str(fields.pop("framework", "lm-eval")), model=model,
        source=f"{model}.json", version="1.0", ids=list(fields.pop("ids", IDS)),
        scores={"accuracy": np.asarray(scores, dtype=float)},
        fingerprint={"task version": "1.0", "prompt templates": "abc"},
        prompt_format=CHAT_TURNS, demonstrations=3,
    )  # fmt: skip
    for name, value in fields.items():
        setattr(items, name, value)
    return items


def compared(*runs: TaskItems, **options: Any) -> Comparison:
    found = [Found(items=[r]) for r in runs]
    return compare(sides([Path(r.source) for r in runs], found), **options)


def test_a_different_prompt_layout_is_refused_in_one_line_unless_allowed() -> None:
    a = run("a", RNG.normal(50, 10, 40))
    b = run("b", RNG.normal(45, 10, 40), prompt_format=CHAT_ONE)
    result = compared(a, b)
    assert result.rows == []
    (note,) = [n for n in result.notes if "differ" in n]
    assert "A (a.json) and B (b.json) differ" in note and "prompt layout" in note
    assert "--allow-different-prompts compares them anyway" in note
    allowed = compared(a, b, allow_different_prompts=True)
    (row,) = allowed.rows
    assert row.label == "different prompts"
    test = scipy_stats.ttest_rel(a.scores["accuracy"], b.scores["accuracy"])
    assert row.result.p == pytest.approx(test.pvalue)


def test_zero_shot_chat_layouts_and_unknown_layouts_pair() -> None:
    a = run("a", RNG.normal(50, 10, 40), demonstrations=0)
    b = run("b", RNG.normal(45, 10, 40), prompt_format=CHAT_ONE, demonstrations=0)
    assert len(compared(a, b).rows) == 1
    c = run("c", RNG.normal(45, 10, 40), prompt_format=None)  # replies scored afterwards
    assert len(compared(a, c).rows) == 1
    text = run("d", RNG.normal(45, 10, 40), prompt_format=TEXT, demonstrations=0)
    assert compared(a, text).rows == []


def test_another_version_is_never_paired() -> None:
    a = run("a", RNG.normal(50, 10, 40))
    b = run("b", RNG.normal(50, 10, 40), fingerprint={"task version": "2.0"})
    result = compared(a, b, allow_different_prompts=True)
    assert result.rows == []
    assert any("task version: 1.0 vs 2.0" in n and "not comparable" in n for n in result.notes)


def test_several_runs_of_one_model_are_averaged_per_item() -> None:
    seeds = [RNG.normal(50, 10, 40) for _ in range(3)]
    other = RNG.normal(47, 10, 40)
    found = [Found(items=[run("a", s) for s in seeds]), Found(items=[run("b", other)])]
    result = compare(sides([Path("a"), Path("b")], found))
    (row,) = result.rows
    mean = np.mean(seeds, axis=0)
    test = scipy_stats.ttest_rel(mean, other)
    assert row.result.difference == pytest.approx(np.mean(mean - other))
    assert row.result.p == pytest.approx(test.pvalue)
    assert any("3 runs of my_task, averaged per item" in n for n in result.notes)


def test_items_one_run_lacks_or_whose_data_differ_are_listed_not_paired() -> None:
    a = run("a", RNG.normal(50, 10, 40), data_hashes={i: "same" for i in IDS})
    hashes = {i: "same" for i in IDS[:30]} | {IDS[3]: "other"}
    b = run("b", RNG.normal(50, 10, 30), ids=IDS[:30], data_hashes=hashes)
    result = compared(a, b)
    (unpaired,) = result.unpaired
    assert unpaired.paired == 29 and unpaired.only_a == IDS[30:] and unpaired.only_b == []
    assert unpaired.data_differs == [IDS[3]]
    assert result.rows[0].result.n == 29


def test_a_corpus_metric_of_the_paired_items_is_bootstrapped() -> None:
    labels = list(RNG.integers(0, 2, 40))
    a = run("a", RNG.normal(50, 10, 40))
    b = run("b", RNG.normal(50, 10, 40))
    a.corpus["macro_f1"] = corpus.macro_f1(labels, labels, 100.0)
    b.corpus["macro_f1"] = corpus.macro_f1(
        labels, [1 - x for x in labels[:20]] + labels[20:], 100.0
    )
    result = compared(a, b, n_resamples=200)
    row = next(r for r in result.rows if r.metric == "macro_f1")
    assert row.result.method == "paired bootstrap, percentile" and row.result.resamples == 200
    expected = a.corpus["macro_f1"].value() - b.corpus["macro_f1"].value()
    assert row.result.difference == pytest.approx(expected)
    assert row.result.lower <= row.result.difference <= row.result.upper
    holm = multipletests([r.result.p for r in result.rows], method="holm")[1]
    assert [r.p_holm for r in result.rows] == pytest.approx(list(holm))


def test_the_cider_of_many_runs_is_resampled_together_as_each_alone() -> None:
    """Three runs' CIDEr-D on the same references, resampled together (one pass over each
    chunk's idf weights): each difference is the one their distributions alone give."""
    words = "a dog cat runs on the mat park ball".split()
    refs = [[" ".join(RNG.choice(words, 6))] for _ in IDS]
    runs = [run(m, RNG.normal(50, 10, 40)) for m in "abc"]
    for number, items in enumerate(runs):
        records = [(" ".join(RNG.choice(words, 5 + number)), r) for r in refs]
        items.corpus["cider"] = corpus.Lazy(lambda records=records: corpus.CocoCider(records, 10))
    result = compared(*runs, n_resamples=100)
    rows = [r for r in result.rows if r.metric == "cider"]
    assert [(r.a, r.b) for r in rows] == [("A", "B"), ("A", "C"), ("B", "C")]
    alone = {
        letter: (items.corpus["cider"].value(), items.corpus["cider"].resampled(
            stats.resample_counts(len(IDS), 100)
        ))
        for letter, items in zip("ABC", runs, strict=True)
    }  # fmt: skip
    for row in rows:
        expected = stats.bootstrap_difference(alone[row.a], alone[row.b], len(IDS))
        assert row.result == expected
    distributions = _Distributions(100, stats.SEED)  # what compare asks first, at once
    distributions.prefetch([(items, "cider", np.arange(len(IDS))) for items in runs])
    assert [value for value, _ in distributions.cache.values()] == [
        alone[letter][0] for letter in "ABC"
    ]


def test_a_corpus_metric_too_small_for_two_decimals_is_printed_not_rounded_away() -> None:
    """A corpus metric near 0 (BLEU-4 on a 0-1 scale): a difference the table calls
    significant is never printed as +0.00 [+0.00, +0.00]; float noise (1e-15) is 0."""
    runs = [run(m, RNG.normal(50, 10, 40)) for m in "ab"]
    runs[0].corpus["bleu4"] = corpus.Mean(RNG.uniform(1e-7, 5e-7, 40))
    runs[1].corpus["bleu4"] = corpus.Mean(np.full(40, 7e-15))
    result = compared(*runs, n_resamples=100)
    (row,) = [r for r in result.rows if r.metric == "bleu4"]
    assert row.result.p < 0.05
    line = next(line for line in table(result).splitlines() if " bleu4 " in line)
    assert f" {number_text(row.result.a)} " in line and " 0.00 " in line
    shown = number_text(row.result.difference, sign=True)
    assert shown.startswith("+") and "e-07" in shown and f"{shown} [" in line
    assert number_text(2.388e-7) == "2.4e-07" and number_text(9.3e-5, sign=True) == "+9.3e-05"
    assert number_text(6.8e-15) == "0.00" and number_text(-6.8e-15, sign=True) == "+0.00"
    assert number_text(14.2857) == "14.29" and number_text(0.005, sign=True) == "+0.01"


def test_few_paired_items_are_compared_with_a_note() -> None:
    few = IDS[:5]
    a, b = (run(m, RNG.normal(50, 10, 5), ids=few) for m in "ab")
    result = compared(a, b)
    assert [row.result.n for row in result.rows] == [5]
    (note,) = [n for n in result.notes if "items paired" in n]
    assert note.startswith("my_task A - B: only 5 items paired") and "rough" in note
    assert not any(
        "items paired" in n for n in compared(*(run(m, RNG.normal(50, 10, 40)) for m in "ab")).notes
    )


def test_unpaired_items_are_listed_by_their_readable_key() -> None:
    """A stable id is the pinned file's sha256 and the item's key: the key is printed."""
    sha = "ab" * 32
    ids = [f"{sha}:test.jsonl:{n}" for n in range(40)]
    a = run("a", RNG.normal(50, 10, 40), ids=ids)
    b = run("b", RNG.normal(50, 10, 35), ids=ids[:35])
    printed = table(compared(a, b))
    assert "5 only in A (test.jsonl:35, test.jsonl:36," in printed and sha not in printed


def test_one_models_runs_with_another_seed_are_named_not_paired() -> None:
    a = run("m", RNG.normal(50, 10, 40), settings={"seed": "0", "temperature": "0"})
    b = run("m", RNG.normal(50, 10, 40), settings={"seed": "1", "temperature": "0"})
    result = compared(a, b)
    assert not result.rows
    (line,) = [n for n in result.notes if "seed" in n]
    assert "seed: 0 vs 1" in line and "not paired" in line and "--variants" in line
    other = run("other", RNG.normal(50, 10, 40), settings={"seed": "0", "temperature": "1"})
    result = compared(a, other)  # two models: compared, the difference said in one line
    assert result.rows and any(
        "temperature: 0 vs 1: compared as they are" in n for n in result.notes
    )
    assert result.rows[0].label == ""  # a generation setting is not a prompt


def test_variants_pair_within_a_model_and_say_what_differs() -> None:
    from conceptcomb.leaderboard.compare.comparison import compare_variants

    x, y = RNG.normal(50, 10, 40), RNG.normal(45, 10, 40)
    first = run("m", x, settings={"order": "easy_to_hard"}, benchmark="cggc")
    second = run("m", y, settings={"order": "hard_to_easy"}, benchmark="cggc")
    other_model = run("n", y, settings={"order": "hard_to_easy"}, benchmark="cggc")
    found = [Found(items=[first]), Found(items=[second, other_model])]
    result = compare_variants(sides([Path("a"), Path("b")], found))
    (row,) = result.rows  # the other model's run is no variant of m's
    assert row.differs == ["order: easy_to_hard vs hard_to_easy"] and (row.a, row.b) == ("A", "B")
    assert row.result.p == pytest.approx(scipy_stats.ttest_rel(x, y).pvalue)
    named = run("m", y, task="my_other_task")
    result = compare_variants(sides([Path("a")], [Found(items=[run("m", x), named])]),
                              [("my_task", "my_other_task")])  # fmt: skip
    assert [r.differs for r in result.rows] == [["task: my_task vs my_other_task"]]
    assert not compare_variants(sides([Path("a")], [Found(items=[run("m", x), named])])).rows


def test_the_interval_does_not_depend_on_the_order_items_were_read_in() -> None:
    """The same replies read in another order (an Inspect log keeps its samples in another
    order than lm-eval's file) give the same bootstrap interval: rows go by item id."""
    labels = [int(x) for x in RNG.integers(0, 2, 40)]
    right = [int(x) for x in labels[:25]] + [1 - x for x in labels[25:]]
    wrong = [1 - x for x in labels[:15]] + labels[15:]
    scores_a, scores_b = RNG.normal(50, 10, 40), RNG.normal(48, 10, 40)

    def side(model: str, predicted: list[int], scores: np.ndarray, order: list[int]) -> TaskItems:
        items = run(model, scores[order], ids=[IDS[n] for n in order])
        items.corpus["macro_f1"] = corpus.macro_f1(
            [labels[n] for n in order], [predicted[n] for n in order], 100.0
        )
        return items

    forward, backward = list(range(40)), list(range(39, -1, -1))
    bounds = []
    for order_a, order_b in ((forward, forward), (backward, backward), (forward, backward)):
        result = compared(
            side("a", right, scores_a, order_a), side("b", wrong, scores_b, order_b),
            n_resamples=300,
        )  # fmt: skip
        row = next(r for r in result.rows if r.metric == "macro_f1")
        bounds.append((row.result.difference, row.result.lower, row.result.upper))
    assert bounds[0] == pytest.approx(bounds[1]) and bounds[0] == pytest.approx(bounds[2])
