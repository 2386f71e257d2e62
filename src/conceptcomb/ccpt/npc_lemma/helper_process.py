"""The NPC lemma rule's spaCy in a helper process, loaded while the framework works.

Loading spaCy and ``en_core_web_sm`` costs about 0.7 s of CPU, and about 2 s in a process
that has not imported torch yet: thinc imports torch whenever it is installed (an Inspect
run imports it for nothing else). Loaded in the framework's process when a task is built
(to fail before generation when it is missing) it delayed the first model request by as
much. A helper process started there loads it on another core while the framework indexes
tasks and asks the model, and hides torch from thinc (the small pipeline runs on numpy).

The analyses are those of `analysis.analyse_here`, run in the helper: one JSON line per
batch of texts each way. spaCy's warnings while loading come back with the ready line and
are logged. Where no helper can be started, the analyses run in this process.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import subprocess
import sys
import threading
import warnings
from typing import Any

from conceptcomb.ccpt.npc_lemma.analysis import (
    Analysis,
    Text,
    analyse_here,
    missing_spacy,
    spacy_pipeline,
)
from conceptcomb.common.errors import ConfigError

log = logging.getLogger("conceptcomb")

_CLOSE_SECONDS = 5.0


class SpacyHelper:
    """One helper process per process that asks (a fork starts its own)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._owner = 0  # the pid that started the helper
        self._ready = False
        self._in_process = False  # no helper could be started: analyse here
        self._lock = threading.Lock()
        self._exit_hook = False

    def start(self) -> None:
        """Start loading spaCy in the helper, without waiting for it."""
        with self._lock:
            self._start()

    def analyse(self, texts: list[Text]) -> list[Analysis]:
        """Each (text, keep_hyphenated)'s analysis, in one batch."""
        with self._lock:
            self._start()
            if self._in_process:
                return analyse_here(texts)
            self._wait_ready()
            reply = self._ask([[text, keep] for text, keep in texts])
        if "analyses" not in reply:
            raise ConfigError(f"spaCy could not analyse {texts[0][0]!r}...: {reply.get('error')}")
        return [
            tuple((str(t), str(pos), str(lemma)) for t, pos, lemma in analysis)
            for analysis in reply["analyses"]
        ]

    def close(self) -> None:
        """End the helper (its input closes; it exits) and wait for it."""
        process, self._process = self._process, None
        if process is None or self._owner != os.getpid():
            return
        try:
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=_CLOSE_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    def _start(self) -> None:
        running = self._process is not None and self._process.poll() is None
        if self._in_process or (running and self._owner == os.getpid()):
            return
        command = [sys.executable, "-m", __name__]
        try:
            # Its own session: a Ctrl-C in the terminal stops the run, which then closes it.
            self._process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, encoding="utf-8", start_new_session=True,
            )  # fmt: skip
        except OSError as err:
            log.debug("no spaCy helper process (%s): analysing in this process", err)
            self._in_process = True
            return
        self._owner, self._ready = os.getpid(), False
        if not self._exit_hook:
            atexit.register(self.close)
            self._exit_hook = True

    def _wait_ready(self) -> None:
        if self._ready:
            return
        message = self._read()
        if "ready" not in message:
            self.close()
            raise ConfigError(str(message.get("error")))
        for warning in message.get("warnings") or []:
            log.warning("spaCy: %s", warning)
        self._ready = True

    def _ask(self, request: list[Any]) -> dict[str, Any]:
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except OSError:
            pass  # it stopped: _read says how
        return self._read()

    def _read(self) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            code = self._process.wait()
            self._process = None
            raise ConfigError(
                f"the spaCy helper process of npc_modifier=lemma stopped (exit code {code}): "
                "run again, or judge the modifier as written with npc_modifier=surface."
            )
        return json.loads(line)


HELPER = SpacyHelper()


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve() -> None:
    """The helper's side: load the pipeline, say so, then analyse each text it is sent."""
    # thinc imports torch when it can, for models that need it; en_core_web_sm does not.
    sys.modules["torch"] = None  # type: ignore[assignment]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            spacy_pipeline()
        except Exception as err:  # the caller raises it as a one-line error
            reason = f"{missing_spacy()} ({type(err).__name__}: {err})."
            _send({"error": str(err) if isinstance(err, ConfigError) else reason})
            return
    _send({"ready": True, "warnings": [str(warning.message) for warning in caught]})
    for line in sys.stdin:
        try:
            texts = [(str(text), bool(keep)) for text, keep in json.loads(line)]
            _send({"analyses": analyse_here(texts)})
        except Exception as err:  # one batch's failure is reported, the helper goes on
            _send({"error": f"{type(err).__name__}: {err}"})


if __name__ == "__main__":
    serve()
