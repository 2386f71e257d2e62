"""The loopback judge's HTTP layer (`conceptcomb.testing.judge_server`), over raw sockets:
what tests and benchmarks rely on when they use it as a stand-in for a real endpoint."""

from __future__ import annotations

import asyncio
import json
import selectors
import socket
import time

import pytest

from conceptcomb.testing import judge_server
from conceptcomb.testing.judge_server import LoopbackServer


def chat(concept: str, prop: str, close: bool = False) -> bytes:
    prompt = f"Concept: {concept}\nProperty: {prop}\nRelevance: "
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}]}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    if close:
        head += "Connection: close\r\n"
    return (head + "\r\n").encode() + body


def read_response(sock: socket.socket, buffer: bytearray) -> tuple[int, dict]:
    """One response off ``sock`` (``buffer`` keeps what came after it)."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        buffer += chunk
    end = buffer.index(b"\r\n\r\n")
    head = buffer[:end].decode()
    length = int(next(line for line in head.split("\r\n") if line.lower().startswith(
        "content-length")).split(":")[1])  # fmt: skip
    while len(buffer) < end + 4 + length:
        buffer += sock.recv(65536)
    body = bytes(buffer[end + 4 : end + 4 + length])
    del buffer[: end + 4 + length]
    return int(head.split()[1]), json.loads(body)


def content(response: dict) -> str:
    return response["choices"][0]["message"]["content"]


def test_pipelined_requests_are_answered_in_order() -> None:
    with LoopbackServer() as server, socket.create_connection(("127.0.0.1", server.port)) as s:
        # Both in one write: the second waits in the buffer until the first is answered.
        s.sendall(chat("Apple", "red") + chat("Sky", "blue"))
        buffer = bytearray()
        first, second = read_response(s, buffer), read_response(s, buffer)
    assert first[0] == second[0] == 200
    assert content(first[1]) == json.dumps({"relevance": server.rating("apple", "red")})
    assert content(second[1]) == json.dumps({"relevance": server.rating("sky", "blue")})
    assert server.stats.answered == 2


def test_latency_counts_from_arrival_and_is_never_short() -> None:
    """No answer comes before its latency, however many are in flight, and /stats reports
    the mean hold (the latency as clients get it: timers step by milliseconds)."""
    latency = 0.05
    took = []
    with LoopbackServer(latency=latency) as server:
        sockets = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(32)]
        with selectors.DefaultSelector() as selector:
            for round_ in range(20):
                sent = {}
                for i, s in enumerate(sockets):
                    sent[s] = time.perf_counter()
                    s.sendall(chat(f"Apple {round_} {i}", "red"))
                    selector.register(s, selectors.EVENT_READ)
                while sent:
                    for key, _ in selector.select(timeout=5):
                        s = key.fileobj
                        took.append(time.perf_counter() - sent.pop(s))  # type: ignore[arg-type]
                        selector.unregister(s)
                        assert read_response(s, bytearray())[0] == 200  # type: ignore[arg-type]
        sockets[0].sendall(b"GET /v1/stats HTTP/1.1\r\n\r\n")
        _, stats = read_response(sockets[0], bytearray())
        for s in sockets:
            s.close()
    assert len(took) == server.stats.held_count == 640
    assert min(took) >= latency, min(took)
    assert latency <= stats["mean_hold_seconds"] <= sum(took) / len(took)
    assert max(took) < latency + 0.15  # late only by timer steps and a loopback round trip


def test_spread_varies_each_answers_latency_around_the_mean() -> None:
    """With ``spread`` each answer gets its own hold, reproducible from prompt and attempt,
    within +-spread of the latency and with the latency as mean; requests sent together no
    longer come back together."""
    latency, spread = 0.05, 0.2
    server = LoopbackServer(latency=latency, spread=spread)
    holds = [server.hold(f"Concept: c{i}\nProperty: p\nRelevance: ", 0) for i in range(4000)]
    assert all(latency * (1 - spread) <= hold < latency * (1 + spread) for hold in holds)
    assert abs(sum(holds) / len(holds) - latency) < 0.01 * latency  # 5 standard errors
    assert len(set(holds)) == len(holds)
    assert server.hold("x", 0) == server.hold("x", 0) != server.hold("x", 1)  # a retry's own
    assert LoopbackServer(latency=latency).hold("x", 3) == latency
    with pytest.raises(ValueError, match="spread"):
        LoopbackServer(latency=latency, spread=1.0)

    took: dict[str, float] = {}
    with server, selectors.DefaultSelector() as selector:
        sockets = {}
        for i in range(32):
            s = socket.create_connection(("127.0.0.1", server.port))
            sockets[s] = f"Apple {i}"
        sent = time.perf_counter()
        for s, concept in sockets.items():
            s.sendall(chat(concept, "red"))
            selector.register(s, selectors.EVENT_READ)
        while len(took) < len(sockets):
            for key, _ in selector.select(timeout=5):
                s = key.fileobj
                took[sockets[s]] = time.perf_counter() - sent  # type: ignore[index]
                selector.unregister(s)
                assert read_response(s, bytearray())[0] == 200  # type: ignore[arg-type]
        for s in sockets:
            s.close()
    for concept, seconds in took.items():
        assert seconds >= server.hold(f"Concept: {concept}\nProperty: red\nRelevance: ", 0)
    assert max(took.values()) - min(took.values()) > latency * spread  # not in lockstep


def test_a_timer_that_fires_early_is_waited_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvloop's timers (a process may install its policy) count whole milliseconds from a
    clock cached per loop turn, and under load fire up to 1 ms early."""
    real_sleep = asyncio.sleep

    async def early(delay: float) -> None:
        await real_sleep(max(0.0, delay - 0.001))

    monkeypatch.setattr(judge_server.asyncio, "sleep", early)
    deadline = time.monotonic() + 0.02
    asyncio.run(judge_server._sleep_until(deadline))
    assert time.monotonic() >= deadline


def test_connection_close_is_honoured_and_bad_requests_hang_up() -> None:
    with LoopbackServer() as server:
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(chat("Apple", "red", close=True))
            assert read_response(s, bytearray())[0] == 200
            assert s.recv(1) == b""  # closed after the answer
        post = b"POST /v1/chat/completions HTTP/1.1\r\n"
        for bad in (
            post + b"Content-Length: many\r\n\r\n",
            post + b"Content-Length: -3\r\n\r\n",
            post + b"Content-Length: 5\r\n\r\n{oops",
        ):
            with socket.create_connection(("127.0.0.1", server.port)) as s:
                s.sendall(bad)
                s.settimeout(5)
                assert s.recv(1) == b""  # hung up, no answer
        # ... and it still serves the next client.
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(chat("Sky", "blue"))
            assert read_response(s, bytearray())[0] == 200


def test_stops_at_once_with_connections_open() -> None:
    """An idle keep-alive connection and a request held for 30 s do not hold up `stop`
    (since Python 3.12 a server's `wait_closed` waits for its open connections)."""
    server = LoopbackServer(latency=30).start()
    idle = socket.create_connection(("127.0.0.1", server.port))
    busy = socket.create_connection(("127.0.0.1", server.port))
    busy.sendall(chat("Apple", "red"))
    deadline = time.monotonic() + 5
    while server.stats.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.stats.in_flight == 1
    started = time.perf_counter()
    server.stop()
    assert time.perf_counter() - started < 2
    assert server._thread is not None and not server._thread.is_alive()
    for s in (idle, busy):
        s.settimeout(5)
        assert s.recv(1) == b""  # closed by the server, unanswered
        s.close()
