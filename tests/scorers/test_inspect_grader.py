"""The Inspect judge is an Inspect model (issue 26): real Inspect runs of a CCPT task, the
judge a loopback OpenAI-compatible server reached through Inspect's own providers."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog
from inspect_ai.model import get_model

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.inspect_tasks import TASKS
from conceptcomb.ccpt.lm_eval_hooks import JudgeFilter, judged_metrics
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.common.evidence import score_values
from conceptcomb.leaderboard.bundles.bundle import parse_identity
from conceptcomb.scorers.api_judge import OpenAIJudge
from conceptcomb.scorers.inspect_judge import default_grader, grader_identity
from conceptcomb.scorers.judge_cache import JudgeCache, default_cache_path
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.testing.judge_server import LoopbackServer
from tests.ccpt.test_inspect import mock_model
from tests.ccpt.test_lm_eval import task_manager
from tests.ccpt.test_scoring import gold_reply

pytestmark = pytest.mark.shared_data

SPEC = CcptTaskSpec("pi_emergent")
SECRET = "sk-loopback-secret-26"


def run(replies: list[str], log_dir: Path, roles=None, max_connections=None, **options) -> EvalLog:
    log = inspect_eval(
        TASKS[SPEC.name](**options),
        model=mock_model(replies),
        model_roles=roles,
        limit=len(replies),
        max_samples=1,  # mockllm hands out its outputs in order
        max_connections=max_connections,
        display="none",
        log_dir=str(log_dir),
        log_format="json",
    )[0]
    return log


def grader_events(log: EvalLog) -> list[ModelEvent]:
    return [
        event
        for sample in log.samples or []
        for event in sample.events
        if isinstance(event, ModelEvent) and event.role == "grader"
    ]


def test_the_grader_is_an_inspect_model_sharing_ratings_with_lm_eval(
    tmp_path: Path, fresh_cache: Path, monkeypatch
) -> None:
    """--model-role grader=openai/gpt-4o at a loopback OPENAI_BASE_URL: its calls are in the
    log's events and model usage, --max-connections bounds them, and lm-eval's judge at the
    same endpoint then finds every rating in the cache."""
    items = load_items(SPEC)[:6]
    replies = [gold_reply(SPEC.kind, item) for item in items]
    with LoopbackServer(latency=0.05, api_key=SECRET) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        log = run(replies, tmp_path, roles={"grader": "openai/gpt-4o"}, max_connections=2)
        assert log.status == "success", log.error
        asked, checks = server.stats.requests, server.stats.checks
        assert asked > 2 and checks == 1
        # Every judge request is a grader model call in the transcript, preflight included.
        events = grader_events(log)
        assert len(events) == asked + checks
        assert all(event.model == "openai/gpt-4o" for event in events)
        usage = log.stats.model_usage["openai/gpt-4o"]
        assert usage.input_tokens > 0 and usage.output_tokens > 0
        # --max-connections bounds the judge's requests in flight (and they did overlap).
        assert server.stats.peak_in_flight == 2

        # lm-eval's judge at the same endpoint: the same identity, every rating cached.
        metadata = {"judge_base_url": server.base_url, "judge_model": "gpt-4o"}
        task = task_manager(**metadata).load([SPEC.name])["tasks"][SPEC.name]
        docs = list(task.test_docs())[: len(items)]
        records = JudgeFilter().apply([[reply] for reply in replies], docs)
        assert server.stats.requests == asked  # 0 judge requests: all from the cache
    identity = f"openai-chat|{server.base_url}|gpt-4o|temperature=0|max_tokens=1024"
    assert {record["judge"] for record in records} == {identity}
    by_item = {record["item_id"]: record for record in records}
    assert len(by_item) == len(log.samples or []) == len(items)
    for sample in log.samples or []:
        record = by_item[sample.scores["ccpt"].metadata["item_id"]]
        assert sample.scores["ccpt"].metadata["judge"] == identity
        inspect_values = score_values(sample.scores["ccpt"])
        for name, value in judged_metrics(record).items():
            assert math.isclose(inspect_values[name], value), name
    # The key is in no log and no cache.
    assert SECRET not in next(tmp_path.glob("*.json")).read_text()
    cache = JudgeCache(default_cache_path())
    try:
        assert len(cache) == asked
        assert SECRET not in default_cache_path().read_bytes().decode("utf-8", "replace")
    finally:
        cache.close()


def test_the_judge_options_build_the_grader(tmp_path: Path, fresh_cache: Path) -> None:
    """Without --model-role, -T judge_base_url builds an openai-api Inspect model there:
    Inspect's events, --max-connections, and the same identity as lm-eval's judge."""
    replies = [gold_reply(SPEC.kind, item) for item in load_items(SPEC)[:4]]
    with LoopbackServer(latency=0.05) as server:
        log = run(replies, tmp_path, max_connections=1, judge_base_url=server.base_url)
        assert log.status == "success", log.error
        assert server.stats.peak_in_flight == 1
        events = grader_events(log)
        assert len(events) == server.stats.requests + server.stats.checks
        assert {event.model for event in events} == {"openai-api/judge/gpt-4o"}
        assert "openai-api/judge/gpt-4o" in log.stats.model_usage
    judges = {sample.scores["ccpt"].metadata["judge"] for sample in log.samples or []}
    settings = JudgeSettings.resolve({"judge_base_url": server.base_url})
    assert judges == {OpenAIJudge(settings).identity}


def test_the_grader_records_the_snapshot_its_answers_name(
    tmp_path: Path, fresh_cache: Path
) -> None:
    """An API answering ``gpt-4o`` as a dated snapshot (issue 45): Inspect's grader keeps it
    in each item's record and in the cache, as lm-eval's judge does; an echo records none."""
    items = load_items(SPEC)[:3]
    replies = [gold_reply(SPEC.kind, item) for item in items]
    dated = "gpt-4o-2024-08-06"
    with LoopbackServer(snapshots={"gpt-4o": dated}) as server:
        log = run(replies, tmp_path / "dated", judge_base_url=server.base_url)
        assert log.status == "success", log.error
    metadata = [sample.scores["ccpt"].metadata for sample in log.samples or []]
    assert len(metadata) == len(items)
    assert {m["judge_snapshot"] for m in metadata} == {dated}
    with sqlite3.connect(default_cache_path()) as conn:  # every rating, with its snapshot
        rated = conn.execute("SELECT COUNT(*) FROM ratings").fetchone()[0]
        named = conn.execute("SELECT snapshot, COUNT(*) FROM snapshots GROUP BY 1").fetchall()
    assert rated > 0 and named == [(dated, rated)]

    with LoopbackServer() as server:  # answers name the model asked
        log = run(replies, tmp_path / "echo", judge_base_url=server.base_url)
        assert log.status == "success", log.error
    assert all("judge_snapshot" not in s.scores["ccpt"].metadata for s in log.samples or [])


def test_the_grader_role_and_judge_options_conflict(tmp_path: Path, fresh_cache: Path) -> None:
    replies = [gold_reply(SPEC.kind, item) for item in load_items(SPEC)[:1]]
    with LoopbackServer() as server:
        grader = get_model("openai-api/loopback/gpt-4o", base_url=server.base_url, api_key="x")
        log = run(replies, tmp_path, roles={"grader": grader}, judge_base_url=server.base_url)
        assert server.stats.requests == server.stats.checks == 0
    assert log.status == "error"
    assert "both choose the judge: pass only one of them" in log.error.message
    assert "-T judge_base_url" in log.error.message


def test_the_identity_names_the_judge_not_the_client(monkeypatch) -> None:
    """OpenAI's gpt-4o is the same judge to lm-eval and to Inspect; so is an endpoint."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    paper = JudgeSettings.resolve({})
    expected = "openai-chat|https://api.openai.com/v1|gpt-4o|temperature=0|max_tokens=1024"
    assert OpenAIJudge(paper).identity == expected
    assert grader_identity([get_model("openai/gpt-4o")], paper) == expected
    assert grader_identity(default_grader(paper), paper) == expected

    urls = "http://b.example:8000/v1/, http://a.example:8000/v1"
    replicas = JudgeSettings.resolve({"judge_base_url": urls, "judge_model": "m/x"})
    models = default_grader(replicas)
    assert [str(m) for m in models] == ["openai-api/judge/m/x", "openai-api/judge-2/m/x"]
    assert grader_identity(models, replicas) == OpenAIJudge(replicas).identity
    formatted = JudgeSettings.resolve({"judge_response_format": "json_schema"})
    assert grader_identity([get_model("openai/gpt-4o")], formatted) == (
        OpenAIJudge(formatted).identity
    )

    other = grader_identity([get_model("mockllm/model")], paper)
    assert other == "inspect|mockllm/model||temperature=0|max_tokens=1024"
    assert parse_identity(other)["model"] == "mockllm/model"
    assert parse_identity(expected)["endpoint"] == "https://api.openai.com/v1"  # public


@pytest.mark.slow
def test_the_offline_judge_stays_ours(tmp_path: Path, fresh_cache: Path) -> None:
    """-T judge=local (the demo's judge): our expected-rating judge, no Inspect model."""
    replies = [gold_reply(SPEC.kind, item) for item in load_items(SPEC)[:1]]
    log = run(replies, tmp_path, judge="local")
    assert log.status == "success", log.error
    assert not grader_events(log)
    judges = {sample.scores["ccpt"].metadata["judge"] for sample in log.samples or []}
    assert len(judges) == 1 and judges.pop().startswith("local-expected-rating|")
