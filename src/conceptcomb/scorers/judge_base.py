"""The judge interface: one rating (`JudgeReply`) and a judge that gives it (`Judge`).

The API judge is in `conceptcomb.scorers.api_judge`, the local (torch) judge in
`conceptcomb.scorers.local_judge`; `conceptcomb.scorers.judges.build_judge` picks one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from conceptcomb.scorers.relevance import parse_relevance


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

    def request_slots(self, concurrency: int) -> int:
        """Questions a rating session keeps in flight: ``concurrency`` per endpoint."""
        return concurrency * self.replicas

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


def chat_identity(endpoint: str, model: str, max_tokens: int, response_format: str = "text") -> str:
    """The identity (cache key) of a judge behind an OpenAI-compatible chat endpoint.

    It names what can change a rating, not the client that asked: lm-eval's HTTP client
    (`conceptcomb.scorers.api_judge.OpenAIJudge`) and an Inspect model speaking the same
    protocol to the same endpoint (`conceptcomb.scorers.inspect_judge`) compute the same
    identity, so they share cached ratings. ``endpoint`` is the base URL without
    credentials or trailing slash (several replicas: sorted, comma-separated).
    """
    identity = f"openai-chat|{endpoint}|{model}|temperature=0|max_tokens={max_tokens}"
    if response_format != "text":  # it can change the ratings
        identity += f"|response_format={response_format}"
    return identity


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
