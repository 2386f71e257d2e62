"""A loopback OpenAI-compatible *model* server with fixed replies, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` at once with the reply fixed for the last user
message (a table prompt -> reply), so a framework's API runner (lm-eval's
``local-chat-completions``, Inspect's ``openai-api``) runs end to end without a model. It
notes when the first and last requests came, to time what a framework does before its
first model call.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from conceptcomb.testing.judge_server import (
    LoopbackServer,
    Request,
    _completion,
    _prompt_of,
    _response,
)


class ModelServer(LoopbackServer):
    """Chat completions with the reply fixed for each prompt; ``default`` for others."""

    def __init__(self, replies: Mapping[str, str], default: str | None = None) -> None:
        super().__init__()
        self.replies = replies
        self.default = default
        self.first: float | None = None  # time.time() of the first request since reset()
        self.last: float | None = None
        self.asked = 0
        self.unknown = 0  # prompts with no fixed reply

    def reset(self) -> None:
        self.first = self.last = None
        self.asked = self.unknown = 0

    async def _route(self, request: Request) -> bytes:
        if request.method != "POST" or not request.path.rstrip("/").endswith("/chat/completions"):
            return await super()._route(request)
        now = time.time()
        self.first = self.first or now
        self.last, self.asked = now, self.asked + 1
        chat = json.loads(request.body or b"{}")
        prompt = _prompt_of(chat)
        reply = self.replies.get(prompt)
        if reply is None:
            self.unknown += 1
            reply = self.default or ""
        return _response(200, _completion(chat.get("model", "loopback"), prompt, reply))
