"""AbsPyramid's corpus metrics under Inspect's epochs: through the real epoch reducers
(pytest-inspect-evals) and one real ``inspect eval --epochs 2`` per kind of task.

The documented values (`conceptcomb.abspyramid.inspect_adapter`): equal epochs give one
epoch's values under ``mean`` and ``mode``; under ``mean`` a detection sample right in one
of two epochs is half right, which is macro-F1 over every epoch's verdict pooled; BLEU is
over every epoch's prediction pooled.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import Score
from sklearn.metrics import f1_score

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.docs import build_docs, doc_turns
from conceptcomb.abspyramid.inspect_adapter import corpus_bleu, detection_corpus
from conceptcomb.abspyramid.tasks import spec_by_name
from conceptcomb.frameworks.inspect_tasks import ItemMetrics
from conceptcomb.testing.commands import inspect_eval_command
from conceptcomb.testing.model_server import ModelServer

pytestmark = pytest.mark.usefixtures("tiktoken_offline")
from pytest_inspect_evals.metrics import (  # noqa: E402
    assert_agreeing_epochs_change_nothing,
    run_metrics,
)

DETECTION = spec_by_name("abspyramid_det_noun_zs")
LOGLIKELIHOOD = spec_by_name("abspyramid_det_noun")
GENERATION = spec_by_name("abspyramid_gen_noun")
LABELS = [1, 1, 0, 0, 1, 0]
# Each sample's verdict in epoch 1 and epoch 2: samples 1 and 3 disagree.
VERDICTS = [(1, 1), (1, 0), (0, 0), (1, 0), (0, 0), (1, 1)]


def detection_score(label: int, pred: int, p_yes: float | None = None) -> Score:
    """A detection score as the task's scorer makes it (`detection_scorer`)."""
    detection = m.Detection(label, pred, m.NAN if p_yes is None else p_yes)
    value = {**detection.item_metrics(), "label": label, "pred": pred}
    if p_yes is not None:
        value["p_yes"] = p_yes
    return ITEMS.score(value)


ITEMS = ItemMetrics(m.metric_infos(DETECTION), extra=[detection_corpus()])
LL_ITEMS = ItemMetrics(m.metric_infos(LOGLIKELIHOOD), extra=[detection_corpus()])


def pooled_macro_f1(labels: list[int], verdicts: list[tuple[int, ...]]) -> float:
    """sklearn's macro-F1 over every epoch's verdict, each its own row."""
    truth = [label for label, votes in zip(labels, verdicts, strict=True) for _ in votes]
    flat = [vote for votes in verdicts for vote in votes]
    return 100.0 * f1_score(truth, flat, average="macro")


def test_detection_corpus_equal_epochs_change_nothing() -> None:
    firsts = zip(LABELS, VERDICTS, strict=True)
    scores = [detection_score(label, votes[0]) for label, votes in firsts]
    assert_agreeing_epochs_change_nothing(ITEMS.metrics(), scores)
    probabilities = [0.9, 0.6, 0.2, 0.7, 0.4, 0.55]
    scores = [
        detection_score(label, int(p >= 0.5), p)
        for label, p in zip(LABELS, probabilities, strict=True)
    ]
    assert_agreeing_epochs_change_nothing(LL_ITEMS.metrics(), scores)


def test_a_detection_sample_right_in_one_of_two_epochs_is_half_right() -> None:
    epochs = [
        [detection_score(label, vote) for vote in votes]
        for label, votes in zip(LABELS, VERDICTS, strict=True)
    ]
    found = run_metrics(ITEMS.metrics(), epochs, reducer="mean")
    assert found[m.MACRO_F1] == pytest.approx(pooled_macro_f1(LABELS, VERDICTS))
    # The old int() read both half-right samples as No: a different, wrong number.
    floored = [(min(votes),) for votes in VERDICTS]
    assert found[m.MACRO_F1] != pytest.approx(pooled_macro_f1(LABELS, floored))
    # `mode` keeps one verdict per sample (a tie: the first epoch's).
    found = run_metrics(ITEMS.metrics(), epochs, reducer="mode")
    firsts = [(votes[0],) for votes in VERDICTS]
    assert found[m.MACRO_F1] == pytest.approx(pooled_macro_f1(LABELS, firsts))


def test_macro_f1_of_shares_is_sklearn_over_weighted_verdicts() -> None:
    shares = [1.0, 0.5, 0.0, 0.25, 0.0, 1.0]
    truth, verdicts, weights = [], [], []
    for label, share in zip(LABELS, shares, strict=True):
        truth += [label, label]
        verdicts += [1, 0]
        weights += [share, 1 - share]
    expected = f1_score(truth, verdicts, average="macro", sample_weight=weights)
    assert m.macro_f1(LABELS, shares) == pytest.approx(100.0 * expected)
    assert m.macro_f1(LABELS, [1, 0, 0, 1, 0, 1]) == pytest.approx(
        100.0 * f1_score(LABELS, [1, 0, 0, 1, 0, 1], average="macro")
    )


def generation_score(prediction: str, references: list[str]) -> Score:
    items = ItemMetrics(m.metric_infos(GENERATION), extra=[corpus_bleu()])
    values = m.generation_item_metrics(prediction, references)
    return items.score(values, metadata={"prediction": prediction, "references": references})


PAIRS = [("a dog", ["dog", "animal"]), ("fruit", ["fruit juice"]), ("a tool", ["tool"])]


def test_corpus_bleu_equal_epochs_change_nothing() -> None:
    items = ItemMetrics(m.metric_infos(GENERATION), extra=[corpus_bleu()])
    scores = [generation_score(p, refs) for p, refs in PAIRS]
    assert_agreeing_epochs_change_nothing(items.metrics(), scores)


def test_corpus_bleu_pools_every_epoch() -> None:
    items = ItemMetrics(m.metric_infos(GENERATION), extra=[corpus_bleu()])
    second = ["dog", "juice", "a hammer"]
    epochs = [
        [generation_score(p, refs), generation_score(other, refs)]
        for (p, refs), other in zip(PAIRS, second, strict=True)
    ]
    found = run_metrics(items.metrics(), epochs, reducer="mean")
    expected = m.bleu_metrics([p for p, _ in PAIRS] + second, [refs for _, refs in PAIRS] * 2)
    for name in (m.BLEU1, m.BLEU2, m.BLEU_BP):
        assert found[name] == pytest.approx(expected[name])


LIMIT = 6


def inspect_epochs(task: str, server: ModelServer, data_dir: Path, logs: Path) -> dict:
    """``inspect eval conceptcomb/<task> --epochs 2`` on the loopback model: its metrics."""
    env = {**os.environ, "LOOPBACK_API_KEY": "x"}
    command = inspect_eval_command(
        f"conceptcomb/{task}", model="openai-api/loopback/m", task_args={"data_dir": data_dir},
        limit=LIMIT, model_base_url=server.base_url, epochs=2, log_dir=logs, display="plain",
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (path,) = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    return {
        name: metric.value
        for score in log.results.scores
        for name, metric in score.metrics.items()
        if score.reducer in (None, "mean")
    }


@pytest.mark.shared_data
def test_inspect_eval_two_disagreeing_epochs_gives_the_documented_macro_f1(
    abspyramid_dir: Path, tmp_path: Path
) -> None:
    docs = build_docs(DETECTION, "test", abspyramid_dir)[:LIMIT]
    labels = [int(doc["label"]) for doc in docs]
    # Each prompt's two replies, one per epoch: samples 1 and 3 get one right, one wrong.
    verdicts = VERDICTS[:LIMIT]
    replies = {
        doc_turns(DETECTION, doc)[-1][1]: ["Yes" if vote else "No" for vote in votes]
        for doc, votes in zip(docs, verdicts, strict=True)
    }
    with ModelServer(replies) as server:
        found = inspect_epochs(DETECTION.name, server, abspyramid_dir, tmp_path)
        assert server.unknown == 0 and server.asked == 2 * LIMIT
    assert found[m.MACRO_F1] == pytest.approx(pooled_macro_f1(labels, verdicts))
    pairs = zip(labels, verdicts, strict=True)
    right = [sum(vote == label for vote in votes) / 2 for label, votes in pairs]
    assert found["mean"] == pytest.approx(100.0 * sum(right) / LIMIT)  # accuracy's mean


@pytest.mark.shared_data
def test_inspect_eval_two_disagreeing_epochs_pools_bleu(
    abspyramid_dir: Path, tmp_path: Path
) -> None:
    docs = build_docs(GENERATION, "test", abspyramid_dir)[:LIMIT]
    first = ["dog", "a doctor", "fruit", "juice", "computer", "tree"]
    second = ["animal", "a doctor", "drink", "juice", "a machine", "plant"]
    replies = {
        doc_turns(GENERATION, doc)[-1][1]: [one, two]
        for doc, one, two in zip(docs, first, second, strict=True)
    }
    with ModelServer(replies) as server:
        found = inspect_epochs(GENERATION.name, server, abspyramid_dir, tmp_path)
    references = [list(doc["references"]) for doc in docs]
    expected = m.bleu_metrics(first + second, references * 2)
    for name in (m.BLEU1, m.BLEU2, m.BLEU_BP):
        assert found[name] == pytest.approx(expected[name]), json.dumps(found)
