"""A loopback OpenAI-compatible judge server, for tests, benchmarks and offline dry runs.

It answers ``POST /v1/chat/completions`` for the CCPT relevance prompt with a rating that
is a deterministic function of the (concept, property) pair, so scores are reproducible
and independent of request order; or, given a table of ratings, it replays those (the CCPT
files record GPT-4o's ratings of their own items, so tests can replay the paper's judge).
It can add latency and inject faults (429 with Retry-After, 500, a stalled response, or a
malformed answer) to exercise the client's retries. It is a real HTTP server: everything
between our client and a real endpoint runs.

    python -m conceptcomb.testing.judge_server --port 8000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PAIR = re.compile(r"Concept: (?P<concept>.*)\nProperty: (?P<prop>.*)\nRelevance:\s*$")


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


@dataclass
class ServerStats:
    requests: int = 0
    answered: int = 0
    faults: int = 0
    attempts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, prompt: str) -> int:
        with self.lock:
            self.requests += 1
            attempt = self.attempts.get(prompt, 0)
            self.attempts[prompt] = attempt + 1
            return attempt


def _fraction(prompt: str, salt: str) -> float:
    digest = hashlib.sha256(f"{salt}|{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "loopback", "object": "model"}]})
        elif self.path.rstrip("/").endswith("/stats"):
            stats = self.server.stats
            self._send(200, {"requests": stats.requests, "answered": stats.answered})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        messages = request.get("messages") or []
        prompt = str(messages[-1].get("content", "")) if messages else ""
        if isinstance(messages[-1].get("content") if messages else None, list):
            prompt = "".join(part.get("text", "") for part in messages[-1]["content"])
        server = self.server
        attempt = server.stats.count(prompt)
        if server.latency:
            time.sleep(server.latency)
        if attempt == 0 and self._inject_fault(prompt):
            return
        match = _PAIR.search(prompt)
        if match is None:
            text = "I can only rate concept/property prompts."
        elif match["concept"].strip().lower() in server.faults.garbage_pairs:
            text = "The relevance is high, I think."
        else:
            text = json.dumps({"relevance": server.rating(match["concept"], match["prop"])})
        with server.stats.lock:
            server.stats.answered += 1
        self._send(200, _completion(request.get("model", "loopback"), prompt, text))

    def _inject_fault(self, prompt: str) -> bool:
        faults = self.server.faults
        draw = _fraction(prompt, "fault")
        edges = (faults.rate_limited, faults.server_error, faults.stalled)
        if draw < edges[0]:
            kind = "rate_limited"
        elif draw < edges[0] + edges[1]:
            kind = "server_error"
        elif draw < sum(edges):
            kind = "stalled"
        else:
            return False
        with self.server.stats.lock:
            self.server.stats.faults += 1
        if kind == "rate_limited":
            headers = {"Retry-After": f"{faults.retry_after}"}
            self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}}, headers)
        elif kind == "server_error":
            self._send(500, {"error": {"message": "internal error", "type": "server_error"}})
        else:
            time.sleep(faults.stall_seconds)
            self._send(504, {"error": {"message": "stalled", "type": "timeout"}})
        return True


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


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(
        self,
        port: int = 0,
        latency: float = 0.0,
        faults: Faults | None = None,
        ratings: dict[tuple[str, str], int] | None = None,
    ):
        super().__init__(("127.0.0.1", port), _Handler)
        self.latency = latency
        self.faults = faults or Faults()
        self.ratings = ratings or {}  # (concept, property), lower-cased -> rating
        self.stats = ServerStats()
        self._thread: threading.Thread | None = None

    def rating(self, concept: str, prop: str) -> int:
        key = (concept.strip().lower(), prop.strip().lower())
        return self.ratings.get(key) or deterministic_rating(*key)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    args = parser.parse_args(argv)
    server = LoopbackServer(args.port, args.latency)
    print(f"loopback judge at {server.base_url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


if __name__ == "__main__":
    main()
