"""Inspect's own re-scoring (issue 52) of CGGC's relation verification: ``inspect score LOG
--scorer conceptcomb/cggc_judge --model-role grader=MODEL`` on a real Inspect log of a
``*_verified`` task gives the verdicts and Table 4 metrics (``*_verified`` included) of
``conceptcomb score`` on that log with the same judge (the loopback judge, reached through
Inspect's openai provider); the scorer asks nothing but the grader role, and a verified
task whose judge nothing chose says which it asks, in one line.

Three replies to the packaged dataset's first three ``cggc_ood_verified`` items:

  0: every concept of the item's graph -> every edge yes (the loopback's rule): verified
  1: two of its concepts only          -> an edge without both ends: not verified
  2: "" (nothing generated)            -> not verified, no question asked

The task is the real one with its samples cut to the first few (`first_pairs`): the full
task draws 32,334 demonstration sets (over a minute of CPU here) for 15,985 samples.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from conceptcomb.cggc import inspect_adapter
from conceptcomb.cggc.analysis.per_item import PER_ITEM  # the metrics with a standard error
from conceptcomb.cggc.data import CggcItem, load_dataset
from conceptcomb.cggc.docs import evaluated_items, task_pair
from conceptcomb.cggc.inspect_tasks import TASKS
from conceptcomb.cggc.metrics import METRIC_NAMES
from conceptcomb.cggc.tasks import CggcTaskSpec, TaskOptions, spec_by_name
from conceptcomb.testing.judge_server import LoopbackServer
from tests.cggc.test_inspect import mock_model
from tests.default_judge import default_judge, no_judge_line, run_without_judge
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.judge_support import loopback

pytestmark = pytest.mark.usefixtures("tiktoken_offline", "few_samples")

SPEC = spec_by_name("cggc_ood_verified")
SCORER = "conceptcomb/cggc_judge"


ITEMS = 3  # the task's samples (`first_pairs`)


def first_pairs(
    spec: CggcTaskSpec, options: TaskOptions, announce: bool = True
) -> list[tuple[CggcItem, list[CggcItem]]]:
    """The first `ITEMS` pairs of `conceptcomb.cggc.docs.task_pairs`, drawn alone: an
    item's draw depends on that item alone (`conceptcomb.cggc.docs.task_pair`)."""
    pairs = []
    for item in evaluated_items(spec, options, load_dataset(options.data_dir)):
        pair = task_pair(spec, options, item.item_id)
        if pair is not None:
            pairs.append(pair)
        if len(pairs) == ITEMS:
            break
    return pairs


@pytest.fixture
def few_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    """The task built with its first `ITEMS` samples only."""
    monkeypatch.setattr(inspect_adapter, "task_pairs", first_pairs)


def items_and_replies(count: int = ITEMS) -> tuple[list[CggcItem], list[str]]:
    items = [item for item, _ in first_pairs(SPEC, TaskOptions())][:count]
    ends = list(dict.fromkeys(e for edge in items[0].kg_edges() for e in (edge.head, edge.tail)))
    replies = ["People see " + " and ".join(ends) + " together.", f"{ends[0]} {ends[1]}.", ""]
    return items, replies[:count]


@pytest.fixture(scope="module")
def judge_off_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``inspect eval`` of the task on mockllm, ``-T judge=off`` (nothing verified): the
    log both re-scoring tests read (it is made once: its metrics start METEOR's JVM and
    spaCy, seconds each)."""
    _, replies = items_and_replies()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inspect_adapter, "task_pairs", first_pairs)
        [log] = inspect_eval(
            TASKS[SPEC.name](judge="off"),
            model=mock_model(replies),
            limit=ITEMS,
            max_samples=1,  # mockllm hands out its outputs in order
            display="none",
            log_dir=str(tmp_path_factory.mktemp("logs")),
            log_format="json",
        )
    assert log.status == "success", log.error
    return Path(log.location)


def inspect_score(log: Path, out: Path, *extra: str, base_url: str | None = None):
    """``inspect score LOG --scorer conceptcomb/cggc_judge`` (a subprocess)."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-loopback"}
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    command = ["inspect", "score", str(log), "--scorer", SCORER, "-S", f"task={SPEC.name}",
               "--action", "append", "--output-file", str(out), *extra]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def _same(inspect_value: float, reported: float | None) -> bool:
    """Equal, or both undefined (SPICE without its jars; a standard error lm-eval's results
    leave null)."""
    if reported is None or math.isnan(reported):
        return math.isnan(inspect_value)
    return math.isclose(inspect_value, reported)


def test_inspect_score_equals_conceptcomb_score(
    judge_off_log: Path, tmp_path: Path, fresh_cache: Path
) -> None:
    items, _ = items_and_replies()
    log = judge_off_log
    with LoopbackServer() as server:
        done = inspect_score(
            log,
            tmp_path / "scored.json",
            "--model-role",
            "grader=openai/gpt-4o",
            base_url=server.base_url,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        asked = server.stats.requests
        code, printed = run_cli(
            "score", SPEC.name, "--predictions", str(log), *loopback(server),
            "--output", str(tmp_path / "r.json"), "--samples-output", str(tmp_path / "s.jsonl"),
        )  # fmt: skip
        assert code == 0, printed
    edges = [len(dict.fromkeys(item.kg_edges())) for item in items]
    assert asked == edges[0] + edges[1]  # every edge of the two sentences, by `inspect score`

    # The same verdict of every edge, with the judge's own answer, and of every item.
    scored = read_eval_log(str(tmp_path / "scored.json"))
    theirs = {
        str(sample.id): sample.scores["cggc_judge"].metadata["verification"]
        for sample in scored.samples or []
    }
    ours = {}
    for line in (tmp_path / "s.jsonl").read_text().splitlines():
        record = json.loads(line)
        ours[record["doc"]["item_id"]] = record["verification"]
    assert theirs == ours
    assert [theirs[item.item_id]["verified"] for item in items] == [True, False, False]
    assert all(edge["reply"] for edge in theirs[items[0].item_id]["edges"])
    # The log's own scorer (judge=off) verified nothing; it is kept beside the new one.
    assert all(s.scores["cggc_verified"].metadata["verification"]["verified"] is None
               for s in scored.samples or [])  # fmt: skip

    # The same metrics: Table 4 on all items and on the verified one, the share, failures.
    reported = json.loads((tmp_path / "r.json").read_text())["results"]
    assert scored.results is not None
    [rescored] = [score for score in scored.results.scores if score.scorer == "cggc_judge"]
    metrics = {name: value.value for name, value in rescored.metrics.items()}
    for name in (*METRIC_NAMES, *(f"{name}_verified" for name in METRIC_NAMES)):
        assert _same(metrics[name], reported[name]["value"]), name
    for name in (*PER_ITEM, *(f"{name}_verified" for name in PER_ITEM)):
        assert _same(metrics[f"{name}_stderr"], reported[name]["stderr"]), name
    assert _same(metrics["verified_share"], reported["verified_share"]["value"])
    assert metrics["verified_share"] == pytest.approx(100 / 3)  # one of three items
    assert metrics["verifier_failures"] == reported["verifier_failures"]["value"] == 0
    assert not math.isnan(metrics["coverage_verified"])


def test_without_a_grader_role_it_stops_in_one_line(
    judge_off_log: Path, tmp_path: Path, fresh_cache: Path
) -> None:
    """No --model-role grader (and none in the log): one line naming the option, exit 1, no
    request to the model under test nor to a default judge, no log written."""
    with LoopbackServer() as server:
        done = inspect_score(judge_off_log, tmp_path / "scored.json", base_url=server.base_url)
        assert server.stats.requests == server.stats.checks == 0
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() + done.stdout.splitlines() if line.strip()]
    assert [line for line in lines if "--model-role grader=MODEL" in line] == [
        "conceptcomb: error: conceptcomb/cggc_judge asks the judge in the grader role, and none "
        "is given: add --model-role grader=MODEL (e.g. openai/gpt-4o, the paper's judge)."
    ]
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "scored.json").exists()


def test_a_task_that_verifies_nothing_is_refused_as_its_task() -> None:
    from conceptcomb.cggc.inspect_adapter import cggc_judge
    from conceptcomb.common.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^cggc_ood verifies no relations: -S task= names"):
        cggc_judge(task="cggc_ood")


def test_a_judge_nothing_chose_is_named_in_one_line(
    tmp_path: Path, fresh_cache: Path, monkeypatch, capfd
) -> None:
    """``inspect eval conceptcomb/cggc_ood_verified`` with no judge option nor grader role
    asks the paper's judge (here at a loopback OPENAI_BASE_URL), never the model under test,
    and says so in one line; ``-T judge=off`` says nothing and asks no judge."""
    items, replies = items_and_replies(2)
    questions = sum(len(dict.fromkeys(item.kg_edges())) for item in items)
    with default_judge(monkeypatch) as server:
        for judge_off in (False, True):
            log, said = run_without_judge(
                SPEC.name, mock_model(replies), len(items), tmp_path / f"off-{judge_off}", capfd,
                judge_off,
            )  # fmt: skip
            verdicts = [s.scores["cggc_verified"].metadata["verification"]["verified"]
                        for s in log.samples or []]  # fmt: skip
            if judge_off:
                assert said == [] and verdicts == [None, None]
            else:
                assert said == [no_judge_line(server)]
                assert verdicts == [True, False]
            assert server.stats.requests == questions  # every edge, at the judge; none more
    # The model under test answered each item once: the judge never asked it.
    assert log.stats.model_usage["mockllm/model"].output_tokens > 0
