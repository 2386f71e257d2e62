"""One METEOR JVM shared by many CGGC runs on one machine.

Each process that scores CGGC starts METEOR 1.5's jar, which loads its paraphrase tables
before it answers: ~10 s of CPU per process on 2 cores (2026-12-06). A shell loop over the
20 CGGC tasks, or a test session, pays that once per run. A METEOR server keeps one JVM
(pycocoevalcap's ``Meteor``, the same jar and arguments) and scores for every process that
names it in ``CONCEPTCOMB_METEOR_SERVER``:

    python -m conceptcomb.cggc.meteor_server          # prints the variable to export
    export CONCEPTCOMB_METEOR_SERVER=127.0.0.1:PORT   # then lm_eval / inspect eval as usual

It listens on loopback only. A request is one JSON line, pycocoevalcap's ``compute_score``
arguments (``{"gts": ..., "res": ...}``) or ``{"ping": true}``; the answer is one JSON line
(``{"score": ..., "scores": [...]}``, ``{"ok": true}``, or ``{"error": "..."}``). Requests
are scored one at a time, as pycocoevalcap's own lock scores them in one process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import socket
import socketserver
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from conceptcomb.common.errors import ConfigError

ENV = "CONCEPTCOMB_METEOR_SERVER"
_TIMEOUT_S = 600.0  # a corpus of 16k sentences takes METEOR minutes


@lru_cache(maxsize=1)
def local_meteor() -> Any:
    """This process's METEOR JVM (pycocoevalcap's ``Meteor``), started when first asked
    (it loads its paraphrase tables: seconds) and stopped when the process exits: started
    with the task, it must not outlive a run that ends before its replies are scored (an
    error, a predict-only run)."""
    try:
        from pycocoevalcap.meteor.meteor import Meteor
    except ImportError as err:
        raise ConfigError(
            "CGGC metrics use pycocoevalcap: pip install 'conceptcomb[cggc]'."
        ) from err
    scorer = Meteor()
    atexit.register(_stop_at_exit, scorer.meteor_p)
    return scorer


def _stop_at_exit(process: Any) -> None:
    with contextlib.suppress(OSError):
        process.kill()
        process.wait()


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        scorer: Callable[[], Any] = self.server.scorer  # type: ignore[attr-defined]
        for line in self.rfile:
            try:
                request = json.loads(line)
                if request.get("ping"):
                    answer: dict[str, Any] = {"ok": True}
                else:
                    score, scores = scorer().compute_score(request["gts"], request["res"])
                    answer = {"score": float(score), "scores": [float(s) for s in scores]}
            except Exception as err:  # the client raises it, naming the server
                answer = {"error": f"{type(err).__name__}: {err}"}
            try:
                self.wfile.write((json.dumps(answer) + "\n").encode())
                self.wfile.flush()
            except OSError:  # the run asking has ended (stopped, killed): nobody to answer
                return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class MeteorServer:
    """A METEOR server on loopback, run by a thread of this process; ``address`` is what
    ``CONCEPTCOMB_METEOR_SERVER`` takes. ``scorer`` gives the ``Meteor`` to score with
    (default: this process's own, `local_meteor`)."""

    def __init__(self, scorer: Callable[[], Any] = local_meteor, port: int = 0) -> None:
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.scorer = scorer  # type: ignore[attr-defined]
        host, port = self._server.server_address[:2]
        self.address = f"{host}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="meteor-server", daemon=True
        )

    def __enter__(self) -> MeteorServer:
        self._thread.start()
        _HOSTED[self.address] = self._server.scorer  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        _HOSTED.pop(self.address, None)
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


# Servers this process runs, and what each scores with: their own process scores with its
# JVM directly.
_HOSTED: dict[str, Callable[[], Any]] = {}


def runs_here(address: str) -> bool:
    """Whether this process runs the METEOR server at ``address`` (`MeteorServer`)."""
    return address in _HOSTED


def serves_local_meteor() -> bool:
    """Whether a METEOR server of this process scores with its own JVM (`local_meteor`),
    which other runs then use: not the process's alone to stop."""
    return local_meteor in _HOSTED.values()


class RemoteMeteor:
    """pycocoevalcap's ``Meteor.compute_score``, asked of a METEOR server."""

    def __init__(self, address: str) -> None:
        self.address = address
        host, _, port = address.rpartition(":")
        try:
            self._socket = socket.create_connection((host, int(port)), timeout=10)
        except (OSError, ValueError) as err:
            raise ConfigError(
                f"{ENV}={address}: no METEOR server answers there ({err}): start one "
                "(python -m conceptcomb.cggc.meteor_server) or unset the variable."
            ) from None
        self._socket.settimeout(_TIMEOUT_S)
        self._lines = self._socket.makefile("rb")
        self._lock = threading.Lock()
        self._ask({"ping": True})

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            try:
                self._socket.sendall((json.dumps(request) + "\n").encode())
                line = self._lines.readline()
            except OSError as err:
                raise RuntimeError(f"METEOR server {self.address}: {err}") from err
        if not line:
            raise RuntimeError(f"METEOR server {self.address} closed the connection")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"METEOR server {self.address}: {answer['error']}")
        return answer

    def compute_score(self, gts: dict, res: dict) -> tuple[float, list[float]]:
        answer = self._ask({"gts": gts, "res": res})
        return answer["score"], answer["scores"]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._lines.close()
            self._socket.close()


def main() -> None:
    """Serve until interrupted, printing the variable that points runs at this server."""
    with MeteorServer() as server:
        local_meteor()  # the JVM loads its tables now, not at the first request
        print(f"export {ENV}={server.address}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
