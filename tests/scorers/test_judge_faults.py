"""The judge under bad conditions (issue 13), against loopback judges misbehaving that way:
broken HTTP 200 bodies, refused keys, unknown models, refused ports, bad URLs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conceptcomb.common.errors import ConfigError, JudgeError
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import preflight_judge, rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.testing.judge_server import BAD_BODIES, Faults, LoopbackServer
from tests.scorers.test_judges import settings_for

PAIRS = [(f"concept {i}", f"property {i % 5}") for i in range(12)]
PROMPTS = [relevance_prompt(c, p) for c, p in PAIRS]


def ratings(server: LoopbackServer, **options) -> tuple[dict[str, float | None], object]:
    replies, usage, _ = rate_prompts(settings_for(server, judge_cache="off", **options), PROMPTS)
    return {prompt: reply.rating for prompt, reply in replies.items()}, usage


@pytest.fixture(scope="module")
def clean_ratings() -> dict[str, float | None]:
    with LoopbackServer() as server:
        return ratings(server)[0]


# --- 1. a malformed HTTP 200 body is a failed attempt, retried like a 5xx ---------------
@pytest.mark.parametrize("kind", sorted(BAD_BODIES))
def test_broken_bodies_are_retried_to_the_clean_ratings(kind: str, clean_ratings) -> None:
    with LoopbackServer(faults=Faults(bad_body=0.5, bad_body_kind=kind)) as server:
        got, usage = ratings(server)
        assert server.stats.faults >= 3  # several first attempts were broken
    assert got == clean_ratings
    assert usage.failures == 0
    assert usage.http_requests > usage.requests  # the broken bodies were asked again


@pytest.mark.parametrize("kind", ["truncated", "non_utf8", "no_choices", "empty_content"])
def test_a_body_broken_every_time_is_a_counted_failure(kind: str, clean_ratings) -> None:
    faults = Faults(bad_body_pairs=frozenset({"concept 3"}), bad_body_kind=kind)
    with LoopbackServer(faults=faults) as server:
        got, usage = ratings(server, judge_max_retries="2")
        broken = relevance_prompt("Concept 3", "property 3")
        assert server.stats.attempts[broken] == 3  # the first try and two retries
    assert got[broken] is None and usage.failures == 1
    assert "malformed response body" in usage.last_error
    assert {p: r for p, r in got.items() if p != broken} == {
        p: r for p, r in clean_ratings.items() if p != broken
    }
    warning = usage.failure_warning()
    assert warning and "1 of 12 judge questions failed (8.3%)" in warning


# --- 2. a judge that cannot work stops before the run; auth errors are never retried ---
def test_refused_key_stops_asking_after_the_first_answer(monkeypatch) -> None:
    monkeypatch.setenv("LOOPBACK_KEY", "sk-wrong")
    with LoopbackServer(api_key="sk-right") as server:
        got, usage = ratings(server, judge_api_key_env="LOOPBACK_KEY", judge_concurrency="1")
        assert server.stats.refused == 1  # not one request per question, not retried
    assert all(rating is None for rating in got.values())
    assert usage.all_failed and "refused the API key" in usage.last_error
    assert "every judge question failed" in usage.failure_warning()


@pytest.mark.parametrize(
    ("server_options", "key", "message"),
    [
        ({"api_key": "sk-right"}, "sk-wrong", r"refused the API key \(AuthenticationError"),
        ({"models": frozenset({"other"})}, None, "does not know the model or the route"),
    ],
)
def test_preflight_stops_a_judge_that_refuses(server_options, key, message, monkeypatch):
    if key:
        monkeypatch.setenv("LOOPBACK_KEY", key)
    with LoopbackServer(**server_options) as server:
        settings = settings_for(server, judge_api_key_env="LOOPBACK_KEY")
        with pytest.raises(JudgeError, match=message) as raised:
            preflight_judge(settings)
        assert server.stats.refused == 1 and server.stats.requests == 0
    text = str(raised.value)
    assert server.base_url in text and "(model gpt-4o)" in text and "\n" not in text
    assert "sk-wrong" not in text


def test_preflight_stops_at_once_on_a_refused_port() -> None:
    settings = JudgeSettings.resolve({"judge_base_url": "http://127.0.0.1:9/v1"})
    assert settings.judge_max_retries == 5  # the default retries: 15 s of backoff if used
    start = time.monotonic()
    with pytest.raises(JudgeError, match=r"127\.0\.0\.1:9/v1 \(model gpt-4o\) cannot be reached"):
        preflight_judge(settings)
    assert time.monotonic() - start < 3


@pytest.mark.parametrize(
    "faults",
    [
        Faults(server_error=1.0),  # 500 on the first try: retried as in the run
        Faults(bad_body=1.0, bad_body_kind="truncated"),
        Faults(rate_limited=1.0),
    ],
)
def test_preflight_rides_out_a_transient_fault(faults: Faults) -> None:
    with LoopbackServer(faults=faults) as server:
        preflight_judge(settings_for(server))
        assert server.stats.checks >= 1 and server.stats.faults == 1
        assert server.stats.requests == 0  # the check is not a judge question


def test_preflight_is_skipped_without_a_remote_judge(monkeypatch) -> None:
    monkeypatch.setenv("CONCEPTCOMB_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    for judge in ("off", "local"):
        preflight_judge(JudgeSettings.resolve({"judge": judge}))  # nothing sent, no error


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("127.0.0.1:8000/v1", r"not an http:// or https:// URL .* as http://127\.0\.0\.1:8000/v1"),
        ("localhost:8000/v1", r"write it as http://localhost:8000/v1"),
        ("http://127.0.0.1:port/v1", "is not a URL"),
    ],
)
def test_malformed_urls_are_refused_up_front(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        JudgeSettings.resolve({"judge_base_url": url})


# --- 3. credentials in the URL: refused with a one-line error naming judge_api_key_env ---
@pytest.mark.parametrize(
    "url", ["http://user:s3cret-pw@127.0.0.1:8000/v1", "user:s3cret-pw@127.0.0.1:8000/v1"]
)
def test_credentials_in_the_url_are_refused_without_showing_them(url: str) -> None:
    with pytest.raises(ConfigError) as raised:
        JudgeSettings.resolve({"judge_base_url": url})
    text = str(raised.value)
    assert "s3cret-pw" not in text and "***@127.0.0.1:8000/v1" in text and "\n" not in text
    if "://" in url:
        assert "put the key in an environment variable" in text and "judge_api_key_env" in text


def test_credentials_in_openai_base_url_are_refused_too(monkeypatch, fresh_cache: Path):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:s3cret-pw@127.0.0.1:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ConfigError, match=r"OPENAI_BASE_URL=.*judge_api_key_env") as raised:
        preflight_judge(JudgeSettings.resolve({}))
    assert "s3cret-pw" not in str(raised.value)


def test_the_key_is_scrubbed_from_an_echoed_error(monkeypatch) -> None:
    """Some proxies echo the request's key in their error: it must not reach our message."""
    secret = "sk-echoed-" + "7" * 30
    monkeypatch.setenv("LOOPBACK_KEY", secret)
    server = LoopbackServer(api_key="sk-right")  # it echoes the key it was sent
    with server, pytest.raises(JudgeError) as raised:
        preflight_judge(settings_for(server, judge_api_key_env="LOOPBACK_KEY"))
    assert secret not in str(raised.value) and "Incorrect API key provided: ***" in str(
        raised.value
    )
