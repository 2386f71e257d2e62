"""A loopback OpenAI-compatible *model* server with fixed replies, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` at once with the reply fixed for the last user
message (a table prompt -> reply), so a framework's API runner (lm-eval's
``local-chat-completions``, Inspect's ``openai-api``) runs end to end without a model. It
notes when the first and last requests came, to time what a framework does before its
first model call, and with ``record=True`` keeps every request body (``bodies``, as the
judge server does): what a framework sent, for tests that compare the frameworks' prompts.
``reply_for`` answers from the whole chat instead (its demonstrations, its system message):
two variants of a task whose questions are the same get different replies.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conceptcomb.testing.judge_server import (
    LoopbackServer,
    Request,
    _completion,
    _prompt_of,
    _response,
)


class ModelServer(LoopbackServer):
    """Chat completions with the reply fixed for each prompt; ``default`` for others. A
    prompt given a list of replies gets them in turn, one per time it is asked, then again
    from the first (epochs or repeats that disagree). A request asking for ``logprobs``
    gets ``top_logprobs`` (token -> log probability) as its first token's alternatives,
    when given."""

    def __init__(
        self,
        replies: Mapping[str, str | Sequence[str]],
        default: str | None = None,
        top_logprobs: Mapping[str, float] | None = None,
        record: bool = False,
        reply_for: Callable[[dict[str, Any]], str | None] | None = None,
    ) -> None:
        super().__init__(record=record)
        self.replies = replies
        self.reply_for = reply_for  # the request's body -> its reply (None: ``replies``)
        self.default = default
        self.top_logprobs = top_logprobs
        self.first: float | None = None  # time.time() of the first request since reset()
        self.last: float | None = None
        self.asked = 0
        self.unknown = 0  # prompts with no fixed reply
        self._turns: dict[str, int] = {}  # times each prompt with several replies was asked

    def reset(self) -> None:
        self.first = self.last = None
        self.asked = self.unknown = 0
        self.bodies = []
        self._turns.clear()

    async def _route(self, request: Request) -> bytes:
        if request.method != "POST" or not request.path.rstrip("/").endswith("/chat/completions"):
            return await super()._route(request)
        now = time.time()
        self.first = self.first or now
        self.last, self.asked = now, self.asked + 1
        chat = json.loads(request.body or b"{}")
        if self.record:
            self.bodies.append(chat)
        prompt = _prompt_of(chat)
        reply = self.reply_for(chat) if self.reply_for is not None else None
        reply = self._reply(prompt) if reply is None else reply
        if reply is None:
            self.unknown += 1
            reply = self.default or ""
        completion = _completion(chat.get("model", "loopback"), prompt, reply)
        if chat.get("logprobs") and self.top_logprobs:
            completion["choices"][0]["logprobs"] = {"content": [self._first_token()]}
        return _response(200, completion)

    def _reply(self, prompt: str) -> str | None:
        fixed = self.replies.get(prompt)
        if fixed is None or isinstance(fixed, str):
            return fixed
        turn = self._turns.get(prompt, 0)
        self._turns[prompt] = turn + 1
        return fixed[turn % len(fixed)]

    def _first_token(self) -> dict[str, Any]:
        """The first token's log probability and alternatives (OpenAI's layout)."""
        assert self.top_logprobs
        alternatives = [{"token": t, "logprob": p, "bytes": None} for t, p in
                        sorted(self.top_logprobs.items(), key=lambda item: -item[1])]  # fmt: skip
        return {**alternatives[0], "top_logprobs": alternatives}
