"""Several judge endpoints (replicas of one judge) sharing the load, over real loopback
servers: both answer, each within its own limit, with the ratings one endpoint gives; the
cache key ignores the order and the replica; the preflight checks every endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from conceptcomb.common.errors import ConfigError, JudgeError
from conceptcomb.scorers.api_judge import OpenAIJudge
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import preflight_judge, rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.testing.judge_server import Faults, LoopbackServer

PAIRS = [(f"concept {i}", f"property {i % 7}") for i in range(60)]
PROMPTS = [relevance_prompt(c, p) for c, p in PAIRS]


def settings(urls: object, **extra: object) -> JudgeSettings:
    return JudgeSettings.resolve({"judge_base_url": urls, "judge_model": "gpt-4o", **extra})


def ratings(urls: object, **extra: object) -> tuple[dict[str, float | None], object]:
    replies, usage, _ = rate_prompts(settings(urls, **extra), PROMPTS)
    return {prompt: reply.rating for prompt, reply in replies.items()}, usage


def test_two_endpoints_share_the_load_and_rate_as_one(fresh_cache: Path) -> None:
    with LoopbackServer(latency=0.02) as alone:
        expected, _ = ratings(alone.base_url, judge_cache="off")
    with LoopbackServer(latency=0.02) as first, LoopbackServer(latency=0.02) as second:
        got, usage = ratings([first.base_url, second.base_url], judge_concurrency="3")
        served = (first.stats.requests, second.stats.requests)
        peaks = (first.stats.peak_in_flight, second.stats.peak_in_flight)
    assert got == expected and usage.failures == 0
    assert min(served) > 0 and sum(served) == len(PROMPTS) == usage.requests
    assert peaks == (3, 3)  # judge_concurrency per endpoint: both full, neither above it


def test_a_comma_separated_list_is_the_same_judge_in_any_order(fresh_cache: Path) -> None:
    with LoopbackServer() as first, LoopbackServer() as second:
        a, b = first.base_url, second.base_url
        forms = ([a, b], [b, a], f"{b}, {a}", f"{a},{b}/")
        assert len({OpenAIJudge(settings(urls)).identity for urls in forms}) == 1
        got, usage = ratings([a, b])
        again, reversed_usage = ratings(f"{b},{a}")  # the cache answers, whoever rated
        asked = first.stats.requests + second.stats.requests
    assert usage.requests == asked == len(PROMPTS)
    assert reversed_usage.cache_hits == len(PROMPTS) and reversed_usage.requests == 0
    assert again == got


def test_a_retry_goes_to_the_other_replica(fresh_cache: Path) -> None:
    """Every first attempt at one replica fails (500): the retries go to the other one."""
    with LoopbackServer() as clean:
        expected, _ = ratings(clean.base_url, judge_cache="off")
    faults = Faults(server_error=1.0)
    with LoopbackServer(faults=faults) as failing, LoopbackServer() as healthy:
        got, usage = ratings([failing.base_url, healthy.base_url], judge_cache="off")
        assert failing.stats.faults > 0 and failing.stats.answered == 0
        assert healthy.stats.answered == len(PROMPTS)
    assert got == expected and usage.failures == 0
    assert usage.http_requests == len(PROMPTS) + failing.stats.faults


def test_the_preflight_checks_every_endpoint() -> None:
    with LoopbackServer() as first, LoopbackServer() as second:
        preflight_judge(settings([first.base_url, second.base_url]))
        assert (first.stats.checks, second.stats.checks) == (1, 1)
        dead = "http://127.0.0.1:9/v1"
        with pytest.raises(JudgeError, match=r"127\.0\.0\.1:9/v1 \(model gpt-4o\) cannot be"):
            preflight_judge(settings([first.base_url, dead, second.base_url]))


@pytest.mark.parametrize(
    ("urls", "message"),
    [
        (",", "names no endpoint"),
        (["http://127.0.0.1:8000/v1", "127.0.0.1:8001/v1"], r"'127\.0\.0\.1:8001/v1' is not an"),
        ("http://127.0.0.1:8000/v1,http://u:pw@127.0.0.1:8001/v1", "user name or password"),
    ],
)
def test_a_bad_endpoint_in_the_list_is_named(urls: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings(urls)
