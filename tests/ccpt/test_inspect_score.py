"""Inspect's own re-scoring (issue 52): ``inspect score LOG --scorer conceptcomb/ccpt_judge
--model-role grader=MODEL`` on a real Inspect log of a CCPT task gives the ratings and
metrics of ``conceptcomb score`` on that log with the same judge (a loopback judge reached
through Inspect's openai provider); the scorer never asks anything but the grader role, and a
judged task whose judge nothing chose says which it asks, in one line."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.inspect_tasks import TASKS
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.testing.judge_server import LoopbackServer
from tests.ccpt.test_inspect import mock_model
from tests.ccpt.test_scoring import gold_reply
from tests.default_judge import default_judge, no_judge_line, run_without_judge
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.judge_support import loopback, ratings_of

pytestmark = pytest.mark.shared_data

SPEC = CcptTaskSpec("pi_emergent")
SCORER = "conceptcomb/ccpt_judge"


def judged_log(log_dir: Path, items: int = 3) -> EvalLog:
    """``inspect eval`` of the task on mockllm (the items' own answers), ``-T judge=off``."""
    replies = [gold_reply(SPEC.kind, item) for item in load_items(SPEC)[:items]]
    [log] = inspect_eval(
        TASKS[SPEC.name](judge="off"),
        model=mock_model(replies),
        limit=items,
        max_samples=1,  # mockllm hands out its outputs in order
        display="none",
        log_dir=str(log_dir),
        log_format="json",
    )
    assert log.status == "success", log.error
    return log


def inspect_score(log: Path, out: Path, *extra: str, base_url: str | None = None):
    """``inspect score LOG --scorer conceptcomb/ccpt_judge -S task=...`` (a subprocess)."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-loopback"}
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    command = ["inspect", "score", str(log), "--scorer", SCORER, "-S", f"task={SPEC.name}",
               "--action", "append", "--output-file", str(out), *extra]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def test_inspect_score_equals_conceptcomb_score(tmp_path: Path, fresh_cache: Path) -> None:
    log = Path(judged_log(tmp_path / "logs").location)
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
    assert asked == 9  # 3 items, 3 questions each: all asked by `inspect score`

    scored = read_eval_log(str(tmp_path / "scored.json"))
    # The same judge, named the same way, and the same rating of every question.
    judged = [sample.scores["ccpt_judge"].metadata for sample in scored.samples or []]
    identity = f"openai-chat|{server.base_url}|gpt-4o|temperature=0|max_tokens=1024"
    assert {record["judge"] for record in judged} == {identity}
    ratings = {
        (q["concept"].lower(), q["property"].lower()): float(q["rating"])
        for record in judged
        for q in record["judged"].values()
    }
    assert ratings == ratings_of(tmp_path / "s.jsonl") and len(ratings) == 9
    # Each question's raw answer kept beside its rating, as `conceptcomb score` keeps it.
    answers = {
        (q["concept"].lower(), q["property"].lower()): q["reply"]
        for record in judged
        for q in record["judged"].values()
    }
    samples = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    theirs_answers = {
        (q["concept"].lower(), q["property"].lower()): q["reply"]
        for line in samples
        for q in (line.get("judged") or {}).values()
    }
    assert answers == {pair: json.dumps({"relevance": int(r)}) for pair, r in ratings.items()}
    assert theirs_answers == answers

    # The same metrics: each mean and standard error of the scorer `inspect score` added.
    ours = json.loads((tmp_path / "r.json").read_text())["results"]
    assert scored.results is not None
    theirs = {
        (score.name, metric): value.value
        for score in scored.results.scores
        if score.scorer == "ccpt_judge"
        for metric, value in score.metrics.items()
    }
    for name in ("E", "R_HMP", "R_NP"):
        assert math.isclose(theirs[name, "mean"], ours[name]["value"]), name
        assert math.isclose(theirs[name, "stderr"], ours[name]["stderr"]), name
    for name in ("format_failures", "non_dict_answers", "judge_failures"):  # the counts
        assert theirs["ccpt_judge", name] == ours[name]["value"], name
    assert not math.isnan(ours["E"]["value"])


def test_without_a_grader_role_it_stops_in_one_line(tmp_path: Path, fresh_cache: Path) -> None:
    """No --model-role grader (and none in the log): one line naming the option, exit 1, no
    request to the model under test nor to a default judge, no log written."""
    log = Path(judged_log(tmp_path / "logs", items=2).location)
    with LoopbackServer() as server:
        done = inspect_score(log, tmp_path / "scored.json", base_url=server.base_url)
        assert server.stats.requests == server.stats.checks == 0
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() + done.stdout.splitlines() if line.strip()]
    error = "--model-role grader=MODEL"
    assert [line for line in lines if error in line] == [
        "conceptcomb: error: conceptcomb/ccpt_judge asks the judge in the grader role, and none "
        "is given: add --model-role grader=MODEL (e.g. openai/gpt-4o, the paper's judge)."
    ]
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "scored.json").exists()


def test_a_judge_nothing_chose_is_named_in_one_line(
    tmp_path: Path, fresh_cache: Path, monkeypatch, capfd
) -> None:
    """``inspect eval conceptcomb/ccpt_pi_emergent`` with no judge option nor grader role asks
    the paper's judge (here at a loopback OPENAI_BASE_URL), never the model under test, and
    says so in one line; ``-T judge=off`` says nothing and asks no judge."""
    items = load_items(SPEC)[:2]
    replies = [gold_reply(SPEC.kind, item) for item in items]
    with default_judge(monkeypatch) as server:
        for judge_off in (False, True):
            log, said = run_without_judge(
                SPEC.name, mock_model(replies), len(items), tmp_path / f"off-{judge_off}", capfd,
                judge_off,
            )  # fmt: skip
            if judge_off:
                assert said == [] and server.stats.requests == 6
            else:
                assert said == [no_judge_line(server)]
                assert server.stats.requests == 6  # 2 items x 3 questions, at the judge
    # The model under test answered each item once: the judge never asked it.
    assert log.stats.model_usage["mockllm/model"].output_tokens > 0
