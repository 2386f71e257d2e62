"""CCPT in Inspect: offline mockllm runs, the paper's numbers, and parity with lm-eval."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, get_model

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.inspect_tasks import TASKS
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.common.offline import O200K_SHA256, tiktoken_cache_path
from conceptcomb.common.results import sem
from conceptcomb.testing.commands import inspect_eval_command
from tests.ccpt.test_scoring import GOLD_NPC_MODIFIER, TABLE_3_GOLD, gold_reply, replay_server

pytestmark = pytest.mark.shared_data


def mock_model(replies: list[str]):
    outputs = [ModelOutput.from_content(model="mockllm/model", content=r) for r in replies]
    return get_model("mockllm/model", custom_outputs=outputs)


def run_task(task_name: str, replies: list[str], log_dir: Path, **options) -> EvalLog:
    task = TASKS[task_name](**{k: v for k, v in options.items() if k != "model_roles"})
    logs = inspect_eval(
        task,
        model=mock_model(replies),
        limit=len(replies),
        max_samples=1,  # mockllm hands out its outputs in order
        display="none",
        log_dir=str(log_dir),
        model_roles=options.get("model_roles"),
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def means(log: EvalLog) -> dict[str, float]:
    """Each metric's value: a per-key score's mean or total; the values of a metric of
    several (ccpt_tp's confusion-matrix cells, with their ``NAME_stderr``) by name."""
    values = {}
    for score in log.results.scores:
        named = {name.split("/")[-1]: metric.value for name, metric in score.metrics.items()}
        if "mean" in named or "total" in named:
            values[score.name] = named.get("mean", named.get("total"))
        else:
            values.update(named)
    return values


def test_cli_mockllm_type_prediction_offline(tmp_path: Path) -> None:
    """The acceptance command, run as a user would (tiktoken's file is rebuilt offline)."""
    command = inspect_eval_command(
        "conceptcomb/ccpt_tp", model="mockllm/model", limit=4, log_dir=tmp_path, display="plain"
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "accuracy" in done.stdout
    cached = tiktoken_cache_path()
    assert cached is not None and cached.is_file()
    import hashlib

    assert hashlib.sha256(cached.read_bytes()).hexdigest() == O200K_SHA256
    assert os.environ["TIKTOKEN_CACHE_DIR"] in str(cached)


def test_type_prediction_metrics(tmp_path: Path) -> None:
    items = load_items(CcptTaskSpec("tp"))[:3]  # three emergent items
    replies = ['{"property_type": "emergent"}', '{"property_type": "component"}', "??"]
    log = run_task("ccpt_tp", replies, tmp_path)
    values = means(log)
    assert log.results and log.results.headline  # what log listings show: accuracy
    assert (log.results.headline.score, log.results.headline.metric) == ("accuracy", "mean")
    assert {item.label for item in items} == {"emergent"}
    assert values["accuracy"] == pytest.approx(100 / 3)
    assert values["cm_emergent_as_emergent"] == pytest.approx(100 / 3)
    assert values["cm_emergent_as_component"] == pytest.approx(100 / 3)
    # lm-eval's standard error of the mean (sample SD / sqrt(n)), as Inspect's stderr()
    assert values["cm_emergent_as_emergent_stderr"] == pytest.approx(sem([100.0, 0.0, 0.0]))
    assert math.isnan(values["cm_component_as_emergent"])  # no component item: undefined
    assert values["format_failures"] == 1


@pytest.mark.parametrize("kind", sorted(TABLE_3_GOLD))
def test_gold_answers_reproduce_table_3_in_inspect(
    kind: str, ccpt_dir: Path, tmp_path: Path, fresh_cache: Path
) -> None:
    spec = CcptTaskSpec(kind)
    replies = [gold_reply(kind, item) for item in load_items(spec)]
    with replay_server(ccpt_dir, kind) as server:
        options = {"judge_base_url": server.base_url, "npc_modifier": GOLD_NPC_MODIFIER}
        log = run_task(spec.name, replies, tmp_path, **options)
    values = means(log)
    assert log.results and log.results.headline
    assert log.results.headline.score == spec.score_name  # E or C, the paper's headline
    for name, published in TABLE_3_GOLD[kind][1].items():
        assert round(values[name], 1) == published, name


def test_grader_role_is_the_judge(ccpt_dir: Path, tmp_path: Path, fresh_cache: Path) -> None:
    spec = CcptTaskSpec("pi_canceled")
    replies = [gold_reply("pi_canceled", item) for item in load_items(spec)[:30]]
    with replay_server(ccpt_dir, "pi_canceled") as server:
        grader = get_model("openai-api/loopback/gpt-4o", base_url=server.base_url, api_key="x")
        via_role = means(run_task(spec.name, replies, tmp_path, model_roles={"grader": grader}))
        asked = server.stats.requests
        via_ours = means(run_task(spec.name, replies, tmp_path, judge_base_url=server.base_url))
    assert asked > 0
    for name in ("R_HMP", "R_NP", "C"):
        assert via_role[name] == pytest.approx(via_ours[name])


@pytest.mark.slow
def test_same_replies_same_numbers_in_both_frameworks(pi_emergent_run, tmp_path: Path) -> None:
    """SmolLM2's replies from a real lm-eval run, scored again in Inspect: identical metrics."""
    run = pi_emergent_run
    replies = [s["resps"][0][0] for s in sorted(run.samples, key=lambda s: s["doc_id"])]
    options = {"judge_base_url": run.server.base_url, "judge_cache": run.metadata["judge_cache"]}
    values = means(run_task("ccpt_pi_emergent", replies, tmp_path, **options))
    compared = 0
    for name, value in run.metrics.items():
        metric, _, kind = name.partition(",")
        if kind != "judged" or metric.endswith("_stderr"):
            continue
        assert math.isclose(values[metric], value, abs_tol=1e-9), metric
        compared += 1
    assert compared == 6


@pytest.mark.slow
def test_inspect_runs_the_local_model(smollm2_inspect_model: list[str], tmp_path: Path) -> None:
    command = inspect_eval_command(
        "conceptcomb/ccpt_tp", model=smollm2_inspect_model, limit=2, max_tokens=32,
        log_dir=tmp_path / "logs", display="plain", log_format="json",
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    log = json.loads(next((tmp_path / "logs").glob("*.json")).read_text())
    assert log["status"] == "success"
    assert len(log["samples"]) == 2
