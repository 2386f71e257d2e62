"""The API judge: `OpenAIJudge`, any OpenAI-compatible chat endpoint (OpenAI, vLLM, ...).

It may be several replicas of one endpoint sharing the load
(`conceptcomb.scorers.chat_client`), temperature 0, the prompt as a single user message,
as the authors' script does. Transport faults (timeouts, 429 with Retry-After, 5xx) are
retried with the openai SDK's policy and backoff, and an HTTP 200 whose body is no chat
completion (bad JSON, no ``choices``, empty content, not UTF-8) is retried the same way;
an answer without a rating is asked again up to ``judge_format_retries`` times; what still
fails comes back as a failure, never as a rating. A refused key (401/403) or an unknown
model (404) is never retried: the judge answers every later question with that failure,
unasked. `OpenAIJudge.preflight` sends one small request to each endpoint before a run and
raises `JudgeError` when the judge cannot work (unreachable, refused key, unknown model).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from conceptcomb.common.errors import JudgeError
from conceptcomb.scorers.chat_client import (
    APIConnectionError,
    APIError,
    ChatClient,
    Endpoint,
    retry_delay,
)
from conceptcomb.scorers.judge_base import (
    ChatJudge,
    JudgeReply,
    chat_identity,
    record_relevance,
    redact_url,
    shorten,
)
from conceptcomb.scorers.judge_errors import (
    UNUSABLE_STATUSES,
    http_status,
    is_transient,
    unreachable_cause,
)
from conceptcomb.scorers.judge_settings import JudgeSettings, check_base_url

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
# The preflight's question: any chat model answers it in a token or two.
PREFLIGHT_PROMPT = "This is a connection check. Reply with the single word OK."


class MalformedResponse(Exception):
    """An HTTP 200 whose body is no chat completion with text in it."""


RELEVANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"relevance": {"type": "integer", "enum": list(range(1, 11))}},
    "required": ["relevance"],
    "additionalProperties": False,
}


def response_format(kind: str, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The request's ``response_format`` for ``judge_response_format`` (None: free text)."""
    if kind == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": True},
        }
    if kind == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class OpenAIJudge(ChatJudge):
    # How an answer is read and the JSON it must have; the yes/no verifier swaps both.
    record = staticmethod(record_relevance)
    answer_name, answer_schema = "relevance", RELEVANCE_SCHEMA
    failures = (APIError, MalformedResponse)

    def __init__(self, settings: JudgeSettings) -> None:
        self.settings = settings
        self.model = settings.model_name
        base_urls = settings.base_urls
        origin = "judge_base_url"
        if not base_urls and os.environ.get("OPENAI_BASE_URL"):
            base_urls, origin = (os.environ["OPENAI_BASE_URL"],), "OPENAI_BASE_URL"
        for url in base_urls:
            check_base_url(url, origin)
        base_urls = base_urls or (DEFAULT_OPENAI_BASE_URL,)
        # A self-hosted endpoint usually needs no key; OpenAI's does (checked up front).
        api_key = os.environ.get(settings.judge_api_key_env) or "EMPTY"
        # Only to scrub it from error messages an endpoint might echo.
        self._secret = api_key if api_key != "EMPTY" else None
        endpoints: dict[str, str] = {}  # as shown -> as given (one per endpoint)
        for url in base_urls:
            endpoints.setdefault(redact_url(url), url)
        # Replicas serve one judge: the identity (the cache key) names the set of endpoints,
        # sorted, so neither the order given nor the replica that answered changes it.
        self.endpoint = ",".join(sorted(endpoints))
        self.replicas = len(endpoints)
        self.identity = chat_identity(
            self.endpoint, self.model, settings.judge_max_tokens, settings.judge_response_format
        )
        self.unusable = None
        self.served_model: str | None = None  # as the endpoint's answers name it
        self._client = ChatClient(
            [(url, shown) for shown, url in endpoints.items()],
            api_key=api_key,
            timeout=settings.judge_timeout,
            max_retries=settings.judge_max_retries,
            per_endpoint=settings.judge_concurrency,
        )
        # Everything in a request but the prompt, built once.
        self._request: dict[str, Any] = {
            "model": self.model,
            "temperature": 0.0,
            "max_tokens": settings.judge_max_tokens,
        }
        shape = response_format(
            settings.judge_response_format, self.answer_name, self.answer_schema
        )
        if shape is not None:
            self._request["response_format"] = shape

    @property
    def http_requests(self) -> int:
        """Every HTTP request sent for judge questions, the client's own retries included."""
        return self._client.http_requests

    def _body(self, prompt: str) -> bytes:
        messages = [{"role": "user", "content": prompt}]
        return json.dumps({**self._request, "messages": messages}).encode()

    async def _completion(self, prompt: str, reply: JudgeReply) -> str:
        return await self._complete(prompt, reply)

    def _failure(self, err: Exception) -> str:
        if isinstance(err, MalformedResponse):
            return self._scrub(f"malformed response body: {err}")
        if http_status(err) in UNUSABLE_STATUSES:  # never retried, never asked again
            self.unusable = self._unusable_message(err)
            return self.unusable
        return self._describe(err)

    async def _complete(
        self,
        prompt: str,
        reply: JudgeReply,
        retries: int | None = None,
        endpoint: Endpoint | None = None,
    ) -> str:
        """The text of one chat completion; a body that is none is retried like a 5xx.

        Raises `APIError` (after the client's own retries) or `MalformedResponse`.
        ``retries`` overrides the client's retries (the preflight's first try has none);
        ``endpoint`` pins the request to one endpoint (the preflight checks each).
        """
        reply.requests += 1
        body = self._body(prompt)
        attempt = 0
        while True:
            try:
                data = await self._client.post(body, endpoint=endpoint, retries=retries)
                text, prompt_tokens, completion_tokens = _completion_parts(data)
            # JSONDecodeError and UnicodeDecodeError are ValueErrors.
            except (ValueError, MalformedResponse) as err:
                if attempt >= self.settings.judge_max_retries:
                    raise MalformedResponse(f"{type(err).__name__}: {shorten(str(err))}") from None
                await asyncio.sleep(retry_delay(attempt, None))
                attempt += 1
                continue
            reply.input_tokens += prompt_tokens
            reply.output_tokens += completion_tokens
            if isinstance(data.get("model"), str):  # the snapshot, where the API names one
                self.served_model = data["model"]
                if data["model"] != self.model:  # an echo of the model asked says nothing
                    reply.snapshot = data["model"]
            return text

    async def preflight(self) -> None:
        """One minimal request to each endpoint before the run: `JudgeError` at once when one
        cannot be reached, refuses the key, does not know the model or refuses the request;
        a transient fault is retried as during the run."""
        counted = self._client.http_requests
        try:
            checks = [self._check(endpoint) for endpoint in self._client.endpoints]
            errors = await asyncio.gather(*checks, return_exceptions=True)
        finally:
            # The check is no judge question: it runs alone, and stays out of the usage.
            self._client.http_requests = counted
        for error in errors:  # the first endpoint, in the order given, that cannot work
            if isinstance(error, BaseException):
                raise error

    async def _check(self, endpoint: Endpoint) -> None:
        reply = JudgeReply(rating=None)
        try:
            try:
                # No client retries: a refused port or unknown host fails now, not in 15 s.
                await self._complete(PREFLIGHT_PROMPT, reply, retries=0, endpoint=endpoint)
            except (APIError, MalformedResponse) as err:
                if not is_transient(err):
                    raise
                await self._complete(PREFLIGHT_PROMPT, reply, endpoint=endpoint)
        except (APIError, MalformedResponse) as err:
            raise JudgeError(self._unusable_message(err, endpoint.shown)) from None

    def _unusable_message(self, err: Exception, endpoint: str | None = None) -> str:
        """One line: the endpoint, the model, what went wrong and what to do."""
        status = http_status(err)
        endpoint = endpoint or getattr(err, "endpoint", "") or self.endpoint
        where = f"The judge at {endpoint} (model {self.model})"
        key = f"${self.settings.judge_api_key_env}"
        if status in (401, 403):
            what = "refused the API key"
            fix = f"check the key in {key} (judge_api_key_env names the variable holding it)"
        elif status == 404:
            what = "does not know the model or the route"
            fix = "check judge_model and that judge_base_url ends in /v1"
        elif unreachable := unreachable_cause(err):
            what = "cannot be reached"
            fix = "check judge_base_url and that the server is running"
            err = unreachable  # the refusal itself says more than the client's wrapper
        elif not is_transient(err):
            what = "refused the request"
            fix = "check judge_model and judge_max_tokens"
        else:
            what = "did not answer usably"
            fix = "try again later, or raise judge_timeout / judge_max_retries"
        detail = (
            self._describe(err)
            if isinstance(err, APIError)
            else f"{type(err).__name__}: {shorten(str(err))}"
        )
        return self._scrub(f"{where} {what} ({detail}): {fix}; judge=off runs without a judge.")

    def _describe(self, err: Exception) -> str:
        cause = ""
        if isinstance(err, APIConnectionError) and err.__cause__:
            cause = f" ({err.__cause__})"
        return self._scrub(f"{type(err).__name__}: {shorten(str(err) + cause)}")

    def _scrub(self, text: str) -> str:
        """An endpoint may echo the key in an error: never pass it on."""
        return text.replace(self._secret, "***") if self._secret else text

    async def aclose(self) -> None:
        await self._client.close()


def _completion_parts(data: Any) -> tuple[str, int, int]:
    """(text, prompt tokens, completion tokens) of a chat completion JSON body.

    Raises `MalformedResponse` when the body has no choice with text content.
    """
    try:
        message = data["choices"][0]["message"]
        text = message["content"]
    except (TypeError, KeyError, IndexError):
        raise MalformedResponse(f"no choices[0].message.content in {shorten(repr(data))}") from None
    if not isinstance(text, str) or not text.strip():
        raise MalformedResponse(f"empty content in {shorten(repr(data))}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return text, _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0
