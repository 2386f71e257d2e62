"""Judges over a real loopback HTTP server: retries, failures, dedup, cache, no key leaks."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.api_judge import OpenAIJudge
from conceptcomb.scorers.judge_cache import JudgeCache
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.testing.judge_server import Faults, LoopbackServer, deterministic_rating

PAIRS = [(f"concept {i}", f"property {i % 7}") for i in range(60)]
PROMPTS = [relevance_prompt(c, p) for c, p in PAIRS]


def settings_for(server: LoopbackServer, **extra) -> JudgeSettings:
    return JudgeSettings.resolve(
        {"judge": "openai", "judge_base_url": server.base_url, "judge_model": "gpt-4o", **extra}
    )


def test_ratings_come_from_the_server(judge_server: LoopbackServer, fresh_cache: Path) -> None:
    replies, usage, _ = rate_prompts(settings_for(judge_server), PROMPTS)
    for (concept, prop), prompt in zip(PAIRS, PROMPTS, strict=True):
        assert replies[prompt].rating == deterministic_rating(concept.capitalize(), prop)
    assert usage.requests == judge_server.stats.requests == len(PROMPTS)
    assert usage.input_tokens > 0 and usage.output_tokens > 0


def test_duplicates_are_asked_once(judge_server: LoopbackServer, fresh_cache: Path) -> None:
    _, usage, _ = rate_prompts(settings_for(judge_server), PROMPTS * 3)
    assert judge_server.stats.requests == len(PROMPTS)
    assert usage.deduplicated == 2 * len(PROMPTS)


def test_second_run_is_served_by_the_cache(judge_server: LoopbackServer, fresh_cache: Path):
    settings = settings_for(judge_server)
    first, _, _ = rate_prompts(settings, PROMPTS)
    again, usage, _ = rate_prompts(settings, PROMPTS)
    assert judge_server.stats.requests == len(PROMPTS)
    assert usage.cache_hits == len(PROMPTS) and usage.requests == 0
    assert {p: r.rating for p, r in again.items()} == {p: r.rating for p, r in first.items()}


def test_transient_faults_are_retried_to_the_same_ratings(fresh_cache: Path) -> None:
    faults = Faults(rate_limited=0.04, server_error=0.04, stalled=0.02, stall_seconds=3.0)
    with LoopbackServer() as clean:
        expected, _, _ = rate_prompts(settings_for(clean, judge_cache="off"), PROMPTS)
    with LoopbackServer(faults=faults) as faulty:
        settings = settings_for(faulty, judge_cache="off", judge_timeout="1")
        replies, usage, _ = rate_prompts(settings, PROMPTS)
        assert faulty.stats.faults > 0
    assert usage.failures == 0
    assert {p: r.rating for p, r in replies.items()} == {p: r.rating for p, r in expected.items()}


def test_a_connection_idle_past_the_timeout_is_reused_cleanly() -> None:
    """A keep-alive connection left idle longer than judge_timeout (a retry's backoff, a pause
    between tasks) answers the next request. aiohttp 3.14.0-3.14.1 armed the read timeout on
    the idle pooled connection (aio-libs/aiohttp#12953): that request, and each retry drawing
    another such connection, failed at once ("Timeout on reading data from socket")."""
    from conceptcomb.scorers.chat_client import ChatClient

    def body(prompt: str) -> bytes:
        message = {"role": "user", "content": prompt}
        return json.dumps({"model": "gpt-4o", "messages": [message]}).encode()

    async def ask_twice(server: LoopbackServer) -> int:
        url = server.base_url
        client = ChatClient([(url, url)], "key", timeout=1.0, max_retries=0, per_endpoint=1)
        try:
            await client.post(body(PROMPTS[0]))
            await asyncio.sleep(1.5)
            await client.post(body(PROMPTS[1]))  # no retry to hide a failed first attempt
            return len(server._connections)
        finally:
            await client.close()

    with LoopbackServer() as server:
        connections = asyncio.run(ask_twice(server))
        assert server.stats.requests == 2
    assert connections == 1  # the second request went out on the first one's connection


def test_garbage_answers_are_failures_not_ratings(fresh_cache: Path) -> None:
    faults = Faults(garbage_pairs=frozenset({"concept 3"}))
    with LoopbackServer(faults=faults) as server:
        replies, usage, _ = rate_prompts(settings_for(server, judge_format_retries="2"), PROMPTS)
        garbage = replies[relevance_prompt("concept 3", "property 3")]
        assert garbage.rating is None and "malformed judge answer" in (garbage.error or "")
        assert server.stats.attempts[relevance_prompt("concept 3", "property 3")] == 3
        identity = OpenAIJudge(settings_for(server)).identity
    assert usage.failures == 1
    # Failures are not cached, so the next run asks again; successes are.
    cache = JudgeCache()
    assert cache.get(identity, relevance_prompt("concept 3", "property 3")) is None
    assert cache.get(identity, PROMPTS[4]) is not None


def test_unreachable_server_is_a_counted_failure(fresh_cache: Path) -> None:
    settings = JudgeSettings.resolve(
        {"judge_base_url": "http://127.0.0.1:9/v1", "judge_max_retries": "1", "judge_timeout": "2"}
    )
    replies, usage, _ = rate_prompts(settings, PROMPTS[:2])
    assert usage.failures == 2
    for reply in replies.values():
        assert not reply.ok and "connect" in (reply.error or "").lower()


def test_api_key_is_read_from_the_named_variable_and_never_stored(
    judge_server: LoopbackServer, fresh_cache: Path, monkeypatch, caplog
) -> None:
    secret = "sk-test-" + "9" * 40
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    settings = settings_for(judge_server, judge_api_key_env="MY_JUDGE_KEY")
    with caplog.at_level("DEBUG"):
        _, usage, identity = rate_prompts(settings, PROMPTS[:5])
    assert secret not in identity and secret not in repr(settings) and secret not in caplog.text
    assert secret not in usage.summary()
    database = fresh_cache / "judge_cache.sqlite"
    dump = "\n".join(sqlite3.connect(database).iterdump())
    assert secret not in dump


def test_missing_key_for_openai_fails_before_running(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = JudgeSettings.resolve({})
    with pytest.raises(ConfigError, match=r"\$OPENAI_API_KEY is not set.*judge=local"):
        settings.check_credentials()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"judge": "gpt4"}, "is not a judge we know"),
        ({"judge_api_key_env": "sk-abc-123"}, "NAME of an environment variable"),
        ({"judge_concurrency": "zero"}, "judge_concurrency='zero' is not a number"),
        ({"judge_concurrency": "0"}, "at least 1"),
    ],
)
def test_bad_options_are_named(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        JudgeSettings.resolve(options)


def test_environment_supplies_defaults(monkeypatch) -> None:
    monkeypatch.setenv("CONCEPTCOMB_JUDGE", "LOCAL")
    monkeypatch.setenv("CONCEPTCOMB_JUDGE_CONCURRENCY", "4")
    settings = JudgeSettings.resolve({"judge_concurrency": 2})
    assert (settings.judge, settings.judge_concurrency) == ("local", 2)


def test_inspect_yaml_false_turns_the_judge_off() -> None:
    """`inspect eval ... -T judge=off` arrives as False (Inspect parses -T values as YAML)."""
    assert JudgeSettings.resolve({"judge": False}).judge == "off"
    assert not JudgeSettings.resolve({"judge": "false"}).enabled


def _hammer(path: str, worker: int) -> None:
    cache = JudgeCache(path)
    for i in range(200):
        cache.put("judge", f"prompt {i}", float(1 + (i + worker) % 10), f"w{worker}")
        cache.get("judge", f"prompt {(i * 7) % 200}")
    cache.close()


def test_cache_survives_concurrent_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_hammer, args=(path, w)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    cache = JudgeCache(path)
    assert len(cache) == 200
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_concurrency_is_bounded(fresh_cache: Path) -> None:
    with LoopbackServer(latency=0.05) as server:
        settings = settings_for(server, judge_concurrency="4", judge_cache="off")
        in_flight = {"now": 0, "max": 0}
        original = OpenAIJudge.ask

        async def counting(self, prompt):
            in_flight["now"] += 1
            in_flight["max"] = max(in_flight["max"], in_flight["now"])
            try:
                return await original(self, prompt)
            finally:
                in_flight["now"] -= 1

        OpenAIJudge.ask = counting  # type: ignore[method-assign]
        try:
            rate_prompts(settings, PROMPTS[:20])
        finally:
            OpenAIJudge.ask = original  # type: ignore[method-assign]
    assert in_flight["max"] == 4


def test_running_inside_an_event_loop() -> None:
    """lm-eval filters are sync but may be called under a running loop (notebooks)."""

    async def inside(server: LoopbackServer) -> int:
        replies, _, _ = rate_prompts(settings_for(server, judge_cache="off"), PROMPTS[:3])
        return len(replies)

    with LoopbackServer() as server:
        assert asyncio.run(inside(server)) == 3


def test_the_judge_runs_on_uvloop_and_on_asyncio_without_it(monkeypatch) -> None:
    """The rating loop runs on uvloop's event loop where installed (a dependency everywhere
    but Windows), called from sync code or under a running loop, with the same ratings as on
    asyncio's, which it falls back to where uvloop cannot be imported."""
    import sys

    import uvloop

    seen: list[type] = []
    original = OpenAIJudge.ask

    async def noting(self, prompt):
        seen.append(type(asyncio.get_running_loop()))
        return await original(self, prompt)

    async def inside(settings: JudgeSettings) -> dict:
        return rate_prompts(settings, PROMPTS[:3])[0]

    monkeypatch.setattr(OpenAIJudge, "ask", noting)
    with LoopbackServer() as server:
        settings = settings_for(server, judge_cache="off")
        on_uvloop = rate_prompts(settings, PROMPTS[:3])[0]
        assert set(seen) == {uvloop.Loop}
        assert asyncio.run(inside(settings)).keys() == on_uvloop.keys()
        assert set(seen) == {uvloop.Loop}
        seen.clear()
        monkeypatch.setitem(sys.modules, "uvloop", None)  # what an import that fails gives
        on_asyncio = rate_prompts(settings, PROMPTS[:3])[0]
    assert seen and uvloop.Loop not in set(seen)
    assert {p: r.rating for p, r in on_asyncio.items()} == {
        p: r.rating for p, r in on_uvloop.items()
    }


def test_the_environment_proxy_is_used(monkeypatch, fresh_cache: Path) -> None:
    """HTTP_PROXY is honoured (as by the openai SDK): the judge's host need not resolve."""
    with LoopbackServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        url, retries = "http://judge.invalid:8000/v1", "0"  # no retries: the failure is at once
        settings = JudgeSettings.resolve({"judge_base_url": url, "judge_max_retries": retries})
        replies, usage, _ = rate_prompts(settings, PROMPTS[:3])
        assert proxy.stats.requests == 3 and usage.failures == 0
        monkeypatch.setenv("NO_PROXY", "judge.invalid")
        _, bypassed, _ = rate_prompts(settings, PROMPTS[3:4])
        assert proxy.stats.requests == 3 and bypassed.failures == 1  # no proxy: unresolvable
    for (concept, prop), prompt in zip(PAIRS, PROMPTS[:3], strict=False):
        assert replies[prompt].rating == deterministic_rating(concept.capitalize(), prop)


def test_a_locked_cache_is_written_off_the_event_loop(tmp_path: Path) -> None:
    """While another process holds SQLite's write lock, a rating waits for it in a thread
    (the event loop keeps running) and is on disk when `write` returns."""
    from conceptcomb.scorers.rating import CacheWriter

    path = tmp_path / "cache.sqlite"
    cache = JudgeCache(path)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock
    assert cache.try_put_many("judge", [("prompt 0", 5.0, "r")]) is False

    async def write_while_locked() -> int:
        ticks = 0
        writing = asyncio.ensure_future(CacheWriter(cache, "judge").write("prompt 1", 7.0, "r"))
        for _ in range(20):  # the loop runs on while the write waits for the lock
            await asyncio.sleep(0.01)
            ticks += 1
        assert not writing.done()
        other.execute("COMMIT")
        await writing
        return ticks

    assert asyncio.run(write_while_locked()) == 20
    assert cache.get("judge", "prompt 1") == (7.0, "r") and cache.get("judge", "prompt 0") is None
    cache.close()
