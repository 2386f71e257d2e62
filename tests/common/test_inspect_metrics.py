"""Counts and grouped means kept in a score's metadata (`ItemMetrics`) give, in a real Inspect
run over several epochs, what Inspect's own per-key metrics give on the same values kept in
the score's value: its mean reducer per sample, then the mean, standard error and sum."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from conceptcomb.common.contract import MetricInfo
from conceptcomb.common.evidence import GROUPED_METRICS, score_values
from conceptcomb.common.offline import prime_tiktoken_cache
from conceptcomb.frameworks.inspect_tasks import ItemMetrics

EPOCHS = 3
SAMPLES = 6
INFOS = [MetricInfo("x"), MetricInfo("cell"), MetricInfo("fails", False, "sum")]
ITEMS = ItemMetrics(INFOS, together=["cell"])


def values_of(sample: int, epoch: int) -> dict[str, float]:
    """Per sample and epoch: a mean, a cell undefined on some epochs (all of sample 3's),
    a count."""
    undefined = sample == 3 or (sample + epoch) % 3 == 0
    return {
        "x": float(10 * sample + epoch),
        "cell": math.nan if undefined else float(100 * ((sample * epoch) % 2)),
        "fails": float((sample + epoch) % 2),
    }


@scorer(metrics=ITEMS.metrics(), name="grouped")
def grouped() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return ITEMS.score(values_of(int(state.sample_id), state.epoch), metadata={"kept": 1})

    return score


@scorer(metrics={name: [mean(), stderr()] for name in ("x", "cell", "fails")}, name="per_key")
def per_key() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=values_of(int(state.sample_id), state.epoch))

    return score


def run(scorer_: Scorer, log_dir: Path) -> EvalLog:
    dataset = MemoryDataset([Sample(id=i, input="say something") for i in range(SAMPLES)])
    task = Task(dataset=dataset, scorer=scorer_, epochs=EPOCHS)
    log = inspect_eval(task, model="mockllm/model", display="none", log_dir=str(log_dir))[0]
    assert log.status == "success", log.error
    return log


def metrics_of(log: EvalLog) -> dict[str, float]:
    """A per-key score's mean and stderr as NAME and NAME_stderr; other metrics by name."""
    found: dict[str, float] = {}
    for score in log.results.scores if log.results else []:
        for key, metric in score.metrics.items():
            if key in ("mean", "stderr"):
                found[score.name + ("" if key == "mean" else "_stderr")] = metric.value
            else:
                found[key] = metric.value
    return found


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalLog, EvalLog]:
    folder = tmp_path_factory.mktemp("logs")
    prime_tiktoken_cache()  # Inspect counts tokens with tiktoken: its file, offline
    return run(grouped(), folder), run(per_key(), folder)


def test_grouped_metrics_equal_inspects_per_key_metrics(logs: tuple[EvalLog, EvalLog]) -> None:
    ours, inspects = (metrics_of(log) for log in logs)
    for name in ("x", "x_stderr", "cell", "cell_stderr"):
        assert ours[name] == pytest.approx(inspects[name], rel=1e-12), name
    # A count is the sum over samples of each sample's mean over its epochs.
    assert ours["fails"] == pytest.approx(inspects["fails"] * SAMPLES, rel=1e-12)
    assert 0 < ours["fails"] < SAMPLES  # the epochs disagree: not a trivial sum
    assert not math.isnan(ours["cell"])


def test_the_score_keeps_counts_and_grouped_means_beside_the_record(
    logs: tuple[EvalLog, EvalLog],
) -> None:
    sample = next(s for s in logs[0].samples or [] if s.id == 1 and s.epoch == 2)
    score = sample.scores["grouped"]
    assert set(score.value) == {"x"}  # what Inspect walks key by key
    assert score.metadata["kept"] == 1
    assert set(score.metadata[GROUPED_METRICS]) == {"cell", "fails"}
    expected = values_of(1, 2)
    assert score_values(score) == pytest.approx(expected, nan_ok=True)


def test_totals_and_means_equal_epochs_change_nothing(tiktoken_offline: None) -> None:
    """pytest-inspect-evals' check: equal epochs give one epoch's `totals` and `means`."""
    from pytest_inspect_evals.metrics import assert_agreeing_epochs_change_nothing

    scores = [ITEMS.score(values_of(sample, 1)) for sample in range(SAMPLES)]
    assert_agreeing_epochs_change_nothing(ITEMS.metrics(), scores)
