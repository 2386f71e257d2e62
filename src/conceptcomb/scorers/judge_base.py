"""The judge interface: one rating (`JudgeReply`) and a judge that gives it (`Judge`); the
ask loop of the judges that put each question to a chat model (`ChatJudge`).

The API judge is in `conceptcomb.scorers.api_judge`, the local (torch) judge in
`conceptcomb.scorers.local_judge`; `conceptcomb.scorers.judges.build_judge` picks one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from conceptcomb.scorers.relevance import parse_relevance

if TYPE_CHECKING:
    from conceptcomb.scorers.judge_settings import JudgeSettings


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
    # The model the API's answer named (``gpt-4o-2024-08-06`` for ``gpt-4o``), where it
    # names one: the judge's snapshot, kept in the cache and in each item's record.
    snapshot: str | None = None

    @property
    def ok(self) -> bool:
        return self.rating is not None


def snapshot_of(replies: Iterable[JudgeReply]) -> str | None:
    """The snapshot(s) answers named, comma-joined where they differ (the API changed the
    model behind its name mid-run); None where none named one."""
    return ", ".join(sorted({r.snapshot for r in replies if r.snapshot})) or None


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


class ChatJudge(Judge):
    """A judge that puts each question to a chat model, one request per try: the ask loop
    of lm-eval's HTTP judge (`conceptcomb.scorers.api_judge.OpenAIJudge`) and Inspect's
    (`conceptcomb.scorers.inspect_judge.InspectModelJudge`), and their verifiers.

    An answer without one is asked again up to ``judge_format_retries`` times; a failed
    request ends the question with the line `_failure` gives (never a rating), and a judge
    that `_failure` marked ``unusable`` (refused key, unknown model) answers every later
    question with that line, unasked. Subclasses send the request (`_completion`) and say
    which errors are failures (``failures``; anything else is a bug and propagates)."""

    settings: JudgeSettings
    # How an answer is read into the reply; the yes/no verifiers swap it.
    record: Callable[[JudgeReply, str], bool]
    failures: tuple[type[Exception], ...] = (Exception,)
    # Why no question can succeed (refused key, unknown model), once the endpoint said so.
    unusable: str | None = None

    async def ask(self, prompt: str) -> JudgeReply:
        reply = JudgeReply(rating=None)
        for _ in range(1 + self.settings.judge_format_retries):
            if self.unusable:
                reply.error = self.unusable
                return reply
            try:
                text = await self._completion(prompt, reply)
            except self.failures as err:
                reply.error = self._failure(err)
                return reply
            if self.record(reply, text):
                return reply
        return reply

    @abstractmethod
    async def _completion(self, prompt: str, reply: JudgeReply) -> str:
        """The text of one answer to ``prompt``, its requests and tokens added to ``reply``;
        raises one of ``failures`` when there is none."""

    @abstractmethod
    def _failure(self, err: Exception) -> str:
        """The one line a failed request records (no secret in it); sets ``unusable`` when
        no later question can succeed either."""


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
