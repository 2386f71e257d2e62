"""A loopback OpenAI-compatible judge server, for tests, benchmarks and offline dry runs.

It answers ``POST /v1/chat/completions`` for the CCPT relevance prompt with a rating that
is a deterministic function of the (concept, property) pair, so scores are reproducible
and independent of request order; or, given a table of ratings, it replays those (the CCPT
files record GPT-4o's ratings of their own items, so tests can replay the paper's judge).
With ``strict=True`` it answers only the pairs of that table: any other pair gets a reply
that is no rating (the client counts a judge failure) and is listed in ``stats.unknown``.
It can add latency (fixed, or spread evenly around its mean, as a real server's varies),
inject faults (429 with Retry-After, 500, a stalled response, a malformed answer, an HTTP
200 whose body is broken: truncated or invalid JSON, no ``choices``, empty content, bytes
that are not UTF-8) to exercise the client's retries, and behave like a misconfigured
endpoint: a key it refuses (401) or a model it does not serve (404 ``model_not_found``). It
is a real HTTP server (asyncio, keep-alive): everything between our client and a real
endpoint runs.

``stats.requests`` counts judge questions (every attempt); the judge's preflight request
(`conceptcomb.scorers.api_judge.PREFLIGHT_PROMPT`) is counted apart in ``stats.checks``.
With ``record=True`` it keeps each chat request's JSON body as it arrived (``bodies``,
`take_bodies`): what a client sent, for tests and `scripts/snapshot_prompts.py`.

It also answers the yes/no relation-verification prompt (`conceptcomb.scorers.verification`):
``{"answer": "yes"}`` when the sentence contains both the head and the tail (case
ignored), else no; or the verdict given for the (sentence, head, relation, tail) in a table.

    python -m conceptcomb.testing.judge_server --port 8000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from conceptcomb.scorers.api_judge import PREFLIGHT_PROMPT

_PAIR = re.compile(r"Concept: (?P<concept>.*)\nProperty: (?P<prop>.*)\nRelevance:\s*$")
_TRIPLE = re.compile(
    r"Relation: (?P<head>.*) --(?P<relation>\S+)--> (?P<tail>.*)\n(?:.*\n)*?"
    r"Sentence: (?P<sentence>.*)\n"
)


def deterministic_verdict(sentence: str, head: str, tail: str) -> bool:
    """Yes when the sentence mentions both concepts (case ignored)."""
    text = sentence.lower()
    return head.strip().lower() in text and tail.strip().lower() in text


def deterministic_rating(concept: str, prop: str) -> int:
    digest = hashlib.sha256(f"{concept.lower()}|{prop.lower()}".encode()).digest()
    return 1 + digest[0] % 10


@dataclass
class Faults:
    """Fault injection: each fraction applies to a prompt's FIRST attempt only."""

    rate_limited: float = 0.0  # answered 429 with Retry-After
    server_error: float = 0.0  # answered 500
    stalled: float = 0.0  # held longer than the client's timeout
    stall_seconds: float = 5.0
    garbage_pairs: frozenset[str] = frozenset()  # concepts always answered with garbage
    retry_after: float = 0.05
    bad_body: float = 0.0  # answered HTTP 200 with a broken body (bad_body_kind)
    bad_body_kind: str = "truncated"  # one of BAD_BODIES
    bad_body_pairs: frozenset[str] = frozenset()  # concepts whose every answer is broken


# HTTP 200 bodies that are not a usable chat completion (what proxies and overloaded
# servers really send): name -> the body, made from a good completion's JSON text.
BAD_BODIES = {
    "truncated": lambda good: good[: len(good) // 2],
    "not_json": lambda good: b"<html><body>502 Bad Gateway</body></html>",
    "not_object": lambda good: b'["not", "a", "completion"]',
    "no_choices": lambda good: b'{"id": "chatcmpl-loopback", "object": "chat.completion"}',
    "bad_choices": lambda good: b'{"choices": "none"}',
    "empty_content": lambda good: json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}}]}
    ).encode(),
    "non_utf8": lambda good: b'{"choices": [{"message": {"content": "\xff\xfe\xfa"}}]}',
}


@dataclass
class ServerStats:
    requests: int = 0  # judge questions, every attempt
    checks: int = 0  # preflight requests
    refused: int = 0  # answered 401 (bad key) or 404 (unknown model)
    answered: int = 0
    faults: int = 0
    held: float = 0.0  # seconds the latency held chat completions (arrival to answer), summed
    held_count: int = 0  # chat completions held for the latency
    in_flight: int = 0  # chat completions being answered now
    peak_in_flight: int = 0  # the most at once (how a client's concurrency limit is seen)
    attempts: dict[str, int] = field(default_factory=dict)  # judge questions only
    check_attempts: dict[str, int] = field(default_factory=dict)  # preflight requests
    unknown: set[tuple[str, str]] = field(default_factory=set)  # strict: pairs not in the table
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, prompt: str, question: bool = True) -> int:
        """Count one request for ``prompt``; its attempt number (0 for the first)."""
        with self.lock:
            if question:
                self.requests += 1
            else:
                self.checks += 1
            seen = self.attempts if question else self.check_attempts
            attempt = seen.get(prompt, 0)
            seen[prompt] = attempt + 1
            return attempt


def _fraction(prompt: str, salt: str) -> float:
    digest = hashlib.sha256(f"{salt}|{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def check_spread(spread: float) -> float:
    if not 0.0 <= spread < 1.0:
        raise ValueError(f"--spread must be in [0, 1) (a share of --latency), not {spread}")
    return spread


def held_for(latency: float, spread: float, prompt: str, attempt: int) -> float:
    """Seconds an answer is held: latency * (1 + spread * u), u uniform in [-1, 1) and drawn
    from the prompt and attempt (reproducible), so the mean stays ``latency``. With no spread
    the answers of requests sent together all come back in the same millisecond, every
    round: lockstep no real server keeps."""
    if not spread:
        return latency
    return latency * (1.0 + spread * (2.0 * _fraction(f"{attempt}|{prompt}", "latency") - 1.0))


_REASONS = {200: "OK", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 504: "Gateway Timeout"}  # fmt: skip


def _response(
    status: int, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None
) -> bytes:
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        *(f"{key}: {value}" for key, value in (headers or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


def _prompt_of(request: dict[str, Any]) -> str:
    messages = request.get("messages") or []
    content = messages[-1].get("content", "") if messages else ""
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content)
    return str(content)


def _completion(model: str, prompt: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len(text.split()),
            "total_tokens": len(prompt.split()) + len(text.split()),
        },
    }


class LoopbackServer:
    """An asyncio HTTP/1.1 server (keep-alive, no thread per request) on 127.0.0.1.

    Used as a context manager it runs in a background thread; `serve_forever` runs it in
    the calling thread.
    """

    def __init__(
        self,
        port: int = 0,
        latency: float = 0.0,
        faults: Faults | None = None,
        ratings: dict[tuple[str, str], int] | None = None,
        verdicts: dict[tuple[str, str, str, str], bool] | None = None,
        api_key: str | None = None,
        models: frozenset[str] | None = None,
        strict: bool = False,
        spread: float = 0.0,
        record: bool = False,
        snapshots: dict[str, str] | None = None,
    ):
        self.port = port
        self.latency = latency
        self.spread = check_spread(spread)  # see `held_for`
        self.faults = faults or Faults()
        self.ratings = ratings or {}  # (concept, property), lower-cased -> rating
        self.strict = strict  # only the pairs of `ratings` get a rating
        # (sentence, head, relation, tail), lower-cased -> verdict
        self.verdicts = verdicts or {}
        self.api_key = api_key  # when set, other keys are answered 401, as OpenAI does
        self.models = models  # when set, other models are answered 404 model_not_found
        # The model an answer names for the model asked (as OpenAI answers ``gpt-4o`` with
        # ``gpt-4o-2024-08-06``); by default the model asked.
        self.snapshots = snapshots or {}
        self.stats = ServerStats()
        self.record = record
        self.bodies: list[dict[str, Any]] = []  # with record: each chat request's body
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._handlers: set[asyncio.Task[bytes]] = set()
        self._connections: set[asyncio.Transport] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def rating(self, concept: str, prop: str) -> int:
        key = (concept.strip().lower(), prop.strip().lower())
        return self.ratings.get(key) or deterministic_rating(*key)

    def hold(self, prompt: str, attempt: int) -> float:
        """Seconds the answer to this attempt at ``prompt`` is held."""
        return held_for(self.latency, self.spread, prompt, attempt)

    def _unknown(self, concept: str, prop: str) -> bool:
        key = (concept.strip().lower(), prop.strip().lower())
        if key in self.ratings:
            return False
        with self.stats.lock:
            self.stats.unknown.add(key)
        return True

    def take_bodies(self) -> list[dict[str, Any]]:
        """The chat requests' bodies received since the last call, in arrival order."""
        taken, self.bodies = self.bodies, []
        return taken

    def verdict(self, sentence: str, head: str, relation: str, tail: str) -> bool:
        key = tuple(part.strip().lower() for part in (sentence, head, relation, tail))
        found = self.verdicts.get(key)  # type: ignore[arg-type]
        return deterministic_verdict(sentence, head, tail) if found is None else found

    # --- running -------------------------------------------------------------------------
    async def _serve(self, announce: bool = False) -> None:
        self._stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: _Connection(self), "127.0.0.1", self.port, backlog=512
        )
        self.port = server.sockets[0].getsockname()[1]
        if announce:
            print(f"loopback judge at {self.base_url} (Ctrl-C to stop)", flush=True)
        self._ready.set()
        await self._stop.wait()
        server.close()
        # Idle keep-alive connections too: since Python 3.12 `wait_closed` waits for them.
        for connection in list(self._connections):
            connection.close()
        # Requests still being answered (a stalled one, say): end them cleanly.
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await server.wait_closed()

    def start(self) -> LoopbackServer:
        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._serve())
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True, name="loopback-judge")
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the loopback judge did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    def serve_forever(self) -> None:
        asyncio.run(self._serve(announce=True))

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP ----------------------------------------------------------------------------
    async def _route(self, request: Request) -> bytes:
        method, path, headers = request.method, request.path.rstrip("/"), request.headers
        sent = headers.get("authorization", "").removeprefix("Bearer ")
        if self.api_key is not None and sent != self.api_key:
            with self.stats.lock:
                self.stats.refused += 1
            # Echoes the key, as some proxies do: a client must not pass it on.
            message = f"Incorrect API key provided: {sent}."
            return _response(401, _error(message, "invalid_api_key"))
        if method == "GET" and path.endswith("/models"):
            served = sorted(self.models) if self.models is not None else ["loopback"]
            return _response(200, {"object": "list", "data": [{"id": m} for m in served]})
        if method == "GET" and path.endswith("/stats"):
            stats = self.stats
            with stats.lock:
                mean_hold = stats.held / stats.held_count if stats.held_count else None
            # The latency as clients get it: timers have millisecond steps, never early here.
            return _response(200, {"requests": stats.requests, "answered": stats.answered,
                                   "mean_hold_seconds": mean_hold})  # fmt: skip
        if method == "POST" and path.endswith("/chat/completions"):
            with self.stats.lock:
                self.stats.in_flight += 1
                self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
            body = json.loads(request.body or b"{}")
            if self.record:
                self.bodies.append(body)
            try:
                return await self._complete(body, request.arrived)
            finally:
                with self.stats.lock:
                    self.stats.in_flight -= 1
        return _response(404, {"error": {"message": "not found"}})

    async def _complete(self, request: dict[str, Any], arrived: float) -> bytes:
        model = str(request.get("model", "loopback"))
        if self.models is not None and model not in self.models:
            with self.stats.lock:
                self.stats.refused += 1
            message = f"The model `{model}` does not exist or you do not have access to it."
            return _response(404, _error(message, "model_not_found"))
        prompt = _prompt_of(request)
        model = self.snapshots.get(model, model)  # as the answers name it
        preflight = prompt == PREFLIGHT_PROMPT
        attempt = self.stats.count(prompt, question=not preflight)
        if self.latency:  # counted from the request's arrival: our own work is part of it
            await _sleep_until(arrived + self.hold(prompt, attempt))
            with self.stats.lock:
                self.stats.held += time.monotonic() - arrived
                self.stats.held_count += 1
        if attempt == 0:
            fault = await self._fault(prompt)
            if fault is not None:
                return fault
        if preflight:
            return _response(200, _completion(model, prompt, "OK"))
        match = _PAIR.search(prompt)
        triple = _TRIPLE.search(prompt) if match is None else None
        if triple is not None:
            verdict = self.verdict(
                triple["sentence"], triple["head"], triple["relation"], triple["tail"]
            )
            text = json.dumps({"answer": "yes" if verdict else "no"})
        elif match is None:
            text = "I can only rate concept/property prompts."
        elif match["concept"].strip().lower() in self.faults.bad_body_pairs:
            with self.stats.lock:
                self.stats.faults += 1
            return self._bad_body(model, prompt)
        elif match["concept"].strip().lower() in self.faults.garbage_pairs:
            text = "The relevance is high, I think."
        elif self.strict and self._unknown(match["concept"], match["prop"]):
            text = "I have no recorded rating for this pair."
        else:
            text = json.dumps({"relevance": self.rating(match["concept"], match["prop"])})
        with self.stats.lock:
            self.stats.answered += 1
        return _response(200, _completion(model, prompt, text))

    async def _fault(self, prompt: str) -> bytes | None:
        faults = self.faults
        draw = _fraction(prompt, "fault")
        edges = (faults.rate_limited, faults.server_error, faults.stalled, faults.bad_body)
        if draw >= sum(edges):
            return None
        with self.stats.lock:
            self.stats.faults += 1
        if draw < edges[0]:
            headers = {"Retry-After": f"{faults.retry_after}"}
            return _response(429, {"error": {"message": "rate limited"}}, headers)
        if draw < edges[0] + edges[1]:
            return _response(500, {"error": {"message": "internal error"}})
        if draw < edges[0] + edges[1] + edges[2]:
            await asyncio.sleep(faults.stall_seconds)
            return _response(504, {"error": {"message": "stalled"}})
        return self._bad_body("loopback", prompt)

    def _bad_body(self, model: str, prompt: str) -> bytes:
        """HTTP 200, ``Content-Type: application/json``, and a body no client can use."""
        good = json.dumps(_completion(model, prompt, '{"relevance": 5}')).encode()
        return _response(200, BAD_BODIES[self.faults.bad_body_kind](good))


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


async def _sleep_until(deadline: float) -> None:
    """Until ``time.monotonic()`` reaches ``deadline``, never less. asyncio's own loop never
    wakes early; uvloop's (when a process installs its policy) counts whole milliseconds from
    a clock cached per loop turn, and under load a fifth of its timers fire up to 1 ms early."""
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(max(left, 0.001))  # a shorter sleep would spin


@dataclass
class Request:
    """One HTTP request, as `LoopbackServer._route` (and subclasses' routes) see it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    arrived: float  # time.monotonic() when it was read whole


class _Connection(asyncio.Protocol):
    """One keep-alive connection. Requests are parsed as their bytes arrive and answered one
    at a time, in order (HTTP/1.1 clients do not pipeline; one that does is still answered in
    order). A protocol rather than streams: fewer loop turns per request."""

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.answering: asyncio.Task[bytes] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server._connections.add(self.transport)  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._answer_next()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server._connections.discard(self.transport)  # type: ignore[arg-type]
        self.transport = None
        if self.answering is not None:  # the client went away (e.g. it timed out on a stall)
            self.answering.cancel()

    def _answer_next(self) -> None:
        if self.answering is not None or self.transport is None:
            return
        try:
            request = self._take_request()
        except ValueError:  # a Content-Length that is no number, or below 0
            self.transport.close()
            return
        if request is not None:
            task = asyncio.get_running_loop().create_task(self.server._route(request))
            self.server._handlers.add(task)  # cancelled if the server stops first
            task.add_done_callback(lambda done: self._answered(request, done))
            self.answering = task

    def _take_request(self) -> Request | None:
        """The next whole request in the buffer (removed from it), else None."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        method, path, headers = _parse_head(bytes(self.buffer[:end]))
        length = int(headers.get("content-length") or 0)
        if length < 0:
            raise ValueError(f"Content-Length {length}")
        size = end + 4 + length
        if len(self.buffer) < size:
            return None
        body = bytes(self.buffer[end + 4 : size])
        del self.buffer[:size]
        return Request(method, path, headers, body, time.monotonic())

    def _answered(self, request: Request, task: asyncio.Task[bytes]) -> None:
        self.server._handlers.discard(task)
        self.answering = None
        if task.cancelled() or self.transport is None:
            return
        if task.exception() is not None:  # e.g. a body that is not JSON: hang up
            self.transport.close()
            return
        self.transport.write(task.result())
        if request.headers.get("connection", "").lower() == "close":
            self.transport.close()
            return
        self._answer_next()


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, path, *_ = [*lines[0].split(" ", 2), "", ""]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    return method, path, headers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    parser.add_argument(
        "--spread", type=float, default=0.0, help="latency varies by +-this share, mean kept"
    )
    parser.add_argument("--rate-limited", type=float, default=0.0, help="share answered 429")
    parser.add_argument("--server-error", type=float, default=0.0, help="share answered 500")
    parser.add_argument("--stalled", type=float, default=0.0, help="share held --stall-seconds")
    parser.add_argument("--stall-seconds", type=float, default=5.0)
    parser.add_argument("--bad-body", type=float, default=0.0, help="share answered 200 + junk")
    parser.add_argument("--bad-body-kind", default="truncated", choices=sorted(BAD_BODIES))
    parser.add_argument("--api-key", help="refuse (401) requests without this Bearer key")
    parser.add_argument("--models", nargs="+", help="serve only these models (else 404)")
    args = parser.parse_args(argv)
    faults = Faults(
        args.rate_limited,
        args.server_error,
        args.stalled,
        args.stall_seconds,
        bad_body=args.bad_body,
        bad_body_kind=args.bad_body_kind,
    )
    models = frozenset(args.models) if args.models else None
    try:
        server = LoopbackServer(
            args.port, args.latency, faults, api_key=args.api_key, models=models, spread=args.spread
        )
    except ValueError as err:
        parser.error(str(err))
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
