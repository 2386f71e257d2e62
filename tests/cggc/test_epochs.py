"""CGGC's metrics under Inspect's epochs: through the real epoch reducers
(pytest-inspect-evals) and one real ``inspect eval --epochs 2`` on a loopback model.

The documented values (`conceptcomb.cggc.inspect_adapter`): equal epochs give one epoch's
values under ``mean`` and ``mode``; for epochs that disagree each Table 4 metric is each
epoch's corpus metric averaged over the epochs, ``verified_share`` is over every epoch's
reply and ``verifier_failures`` counts failures per epoch.
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import Score

from conceptcomb.cggc.docs import task_pairs
from conceptcomb.cggc.inspect_adapter import (
    EPOCH,
    _table4_metric,
    verified_share,
    verifier_failures,
)
from conceptcomb.cggc.inspect_tasks import TASKS
from conceptcomb.cggc.metrics import METRICS, Scored
from conceptcomb.cggc.scoring import corpus_score, score_doc
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from conceptcomb.frameworks.inspect_tasks import score_metadata
from conceptcomb.testing.commands import inspect_eval_command
from conceptcomb.testing.model_server import ModelServer

pytestmark = pytest.mark.usefixtures("tiktoken_offline")
from pytest_inspect_evals.metrics import (  # noqa: E402
    assert_agreeing_epochs_change_nothing,
    run_metrics,
)

# SPICE needs Stanford CoreNLP's jars: NaN here, in every epoch alike.
NAMES = [info.name for info in METRICS if info.name != "spice"]
TABLE4 = [_table4_metric(name, None) for name in NAMES]
ITEMS = [
    ("a dog runs in the park", "the dog runs in a park", ("dog", "run", "park")),
    ("people eat food at tables", "a man eats food at the table", ("man", "eat", "table")),
    ("cat sleeps on a sofa bed", "the cat is sleeping on the sofa", ("cat", "sleep", "sofa")),
]
SECOND = ["a dog in a park", "a man eats", "the cat is sleeping on the sofa"]


def record(n: int, prediction: str) -> Scored:
    _, target, concepts = ITEMS[n]
    return Scored(f"item{n}", prediction, (target,), concepts)


def cggc_score(n: int, prediction: str, epoch: int = 1, verification: dict | None = None) -> Score:
    """A score as `cggc_scorer` (and the verified scorer) makes it."""
    meta: dict = {"record": record(n, prediction).as_record(), EPOCH: epoch}
    if verification is not None:
        meta["verification"] = verification
    return Score(value={"coverage": 1.0}, answer=prediction, metadata=score_metadata(meta))


def test_table4_metrics_equal_epochs_change_nothing() -> None:
    scores = [cggc_score(n, item[0]) for n, item in enumerate(ITEMS)]
    assert_agreeing_epochs_change_nothing(TABLE4, scores)


def test_table4_metrics_average_each_epochs_corpus_metric() -> None:
    epochs = [
        [cggc_score(n, item[0], 1), cggc_score(n, other, 2)]
        for n, (item, other) in enumerate(zip(ITEMS, SECOND, strict=True))
    ]
    found = run_metrics(TABLE4, epochs, reducer="mean")
    first = [record(n, item[0]) for n, item in enumerate(ITEMS)]
    second = [record(n, other) for n, other in enumerate(SECOND)]
    for name in NAMES:
        expected = (corpus_score(name, first) + corpus_score(name, second)) / 2
        assert found[name] == pytest.approx(expected), name
    # Pooling both epochs would give another CIDEr (its document frequencies change).
    assert found["cider"] != pytest.approx(corpus_score("cider", first + second))


def test_verification_metrics_under_epochs() -> None:
    metrics = [verified_share(), verifier_failures()]
    one = [
        cggc_score(0, "a", verification={"verified": True}),
        cggc_score(1, "b", verification={"verified": False}),
        cggc_score(2, "c", verification={"failed": True}),
    ]
    assert_agreeing_epochs_change_nothing(metrics, one)
    epochs = [
        [one[0], cggc_score(0, "a", 2, {"verified": False})],
        [one[1], cggc_score(1, "b", 2, {"verified": True})],
        [one[2], cggc_score(2, "c", 2, {"verified": True})],
    ]
    found = run_metrics(metrics, epochs, reducer="mean")
    assert found["verified_share"] == pytest.approx(100.0 * 3 / 5)  # 3 of 5 known verdicts
    assert found["verifier_failures"] == pytest.approx(0.5)  # one failure in two epochs


LIMIT = 4


@pytest.mark.slow
def test_inspect_eval_two_disagreeing_epochs(built_dir: Path, tmp_path: Path) -> None:
    """``inspect eval conceptcomb/cggc_ood --epochs 2``, each item answered differently in
    each epoch: each metric is the mean of the two epochs' corpus metrics."""
    spec = spec_by_name("cggc_ood")
    options = TaskOptions.resolve({"data_dir": str(built_dir)})
    task = TASKS["cggc_ood"](data_dir=str(built_dir))
    samples = list(task.dataset)[:LIMIT]
    pairs = {item.item_id: item for item, _ in task_pairs(spec, options)}
    one = [" A dog wags its tail.", " The man eats.", "", " A car drives on the road."]
    two = [pairs[str(s.id)].target for s in samples]  # the reference itself
    replies = {
        str(sample.input[-1].content): [a, b]
        for sample, a, b in zip(samples, one, two, strict=True)
    }
    env = {**os.environ, "LOOPBACK_API_KEY": "x"}
    with ModelServer(replies) as server:
        command = inspect_eval_command(
            "conceptcomb/cggc_ood", model="openai-api/loopback/m",
            task_args={"data_dir": built_dir}, limit=LIMIT, model_base_url=server.base_url,
            epochs=2, log_dir=tmp_path, display="plain",
        )  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert server.unknown == 0 and server.asked == 2 * LIMIT
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    found = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
    # Which reply each epoch got is the order the requests came in: read it from the log.
    epochs: dict[int, list[Scored]] = {}
    for sample in log.samples or []:
        epochs.setdefault(sample.epoch, []).append(
            score_doc(sample.metadata, sample.output.completion).scored
        )
    assert sorted(epochs) == [1, 2] and all(len(r) == LIMIT for r in epochs.values())
    answered = {s.epoch: set() for s in log.samples or []}
    for sample in log.samples or []:
        answered[sample.epoch].add(sample.output.completion)
    assert answered[1] != answered[2]  # the epochs disagree
    for name in NAMES:
        values = [corpus_score(name, records) for records in epochs.values()]
        defined = [v for v in values if not math.isnan(v)]
        expected = sum(defined) / len(defined) if defined else math.nan
        if math.isnan(expected):
            assert math.isnan(found[name]), name
        else:
            assert found[name] == pytest.approx(expected), name
    assert found["bleu4"] > 0
