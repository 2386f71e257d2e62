"""Which judge to use, from task options or the environment, validated up front.

The same option names work everywhere:

========================  ===================================  =============================
option                    environment variable                 meaning
========================  ===================================  =============================
``judge``                 ``CONCEPTCOMB_JUDGE``                ``openai`` (any OpenAI-compatible
                                                               endpoint, default), ``local``
                                                               (transformers, offline) or ``off``
``judge_model``           ``CONCEPTCOMB_JUDGE_MODEL``          model name (default ``gpt-4o``, the
                                                               paper's) or local model path
``judge_base_url``        ``CONCEPTCOMB_JUDGE_BASE_URL``       endpoint, e.g. a vLLM server; or
                                                               several (comma-separated or a
                                                               list): replicas sharing the load
``judge_api_key_env``     ``CONCEPTCOMB_JUDGE_API_KEY_ENV``    NAME of the variable with the key
``judge_concurrency``     ``CONCEPTCOMB_JUDGE_CONCURRENCY``    requests in flight per endpoint
                                                               (default 16)
``judge_max_retries``     ``CONCEPTCOMB_JUDGE_MAX_RETRIES``    retries of 429/5xx/timeouts (5)
``judge_format_retries``  ``CONCEPTCOMB_JUDGE_FORMAT_RETRIES`` re-asks of a malformed answer (3)
``judge_timeout``         ``CONCEPTCOMB_JUDGE_TIMEOUT``        seconds per request (60)
``judge_cache``           ``CONCEPTCOMB_JUDGE_CACHE``          cache file, or ``off``
``judge_response_format`` ``CONCEPTCOMB_JUDGE_RESPONSE_FORMAT`` ``text`` (default, the paper's),
                                                               ``json_schema`` or
                                                               ``json_object``: constrain the
                                                               answer to the asked format
``judge_device``          ``CONCEPTCOMB_JUDGE_DEVICE``         ``judge=local``: ``auto`` (the
                                                               GPU when torch sees one, else
                                                               the CPU), ``cpu``, ``cuda``,
                                                               ``cuda:N``, ``mps``
``judge_dtype``           ``CONCEPTCOMB_JUDGE_DTYPE``          ``judge=local``: ``auto``
                                                               (bfloat16 on a GPU that has it,
                                                               else float32), ``float32``,
                                                               ``bfloat16``, ``float16``
``judge_batch_size``      ``CONCEPTCOMB_JUDGE_BATCH_SIZE``     ``judge=local``: questions per
                                                               forward pass (16)
========================  ===================================  =============================

In lm-eval pass them with ``--metadata '{"judge": "local"}'``; in Inspect with
``-T judge=local``. The key itself is only ever read from the named variable, when the
client is built: it is not part of the settings, the cache key or any log.

In Inspect the judge is an Inspect model in the ``grader`` role
(`conceptcomb.scorers.inspect_judge`): these options describe it (``openai/MODEL``, or
``openai-api/judge/MODEL`` at ``judge_base_url``; ``judge_concurrency`` becomes its
``max_connections``, ``judge_max_retries`` its ``max_retries``, ``judge_timeout`` its
``attempt_timeout``, Inspect's ``--max-connections`` / ``--max-retries`` winning), unless
``--model-role grader=MODEL`` names one, which conflicts with ``-T judge``, ``judge_model``,
``judge_base_url`` and ``judge_api_key_env`` (the environment variables give way to it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import urlsplit

from conceptcomb.common.errors import ConfigError

JUDGE_KINDS = ("openai", "local", "off")
# How an OpenAI-compatible judge is asked to shape its answer: free text (the papers' way),
# or constrained to the JSON the prompt asks for, in OpenAI's structured-output dialect
# (OpenAI, vLLM, SGLang) or in the json_object-with-schema dialect (llama.cpp's server).
RESPONSE_FORMATS = ("text", "json_schema", "json_object")
# Where the local judge runs and in which precision (torch names; "auto": see LocalJudge).
DEVICE_PATTERN = re.compile(r"^(auto|cpu|mps|(cuda|xpu|npu)(:\d+)?)$")
DTYPE_ALIASES = {
    "auto": "auto",
    "float32": "float32", "fp32": "float32", "float": "float32",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16",
}  # fmt: skip
PAPER_JUDGE_MODEL = "gpt-4o"
_ENV_PREFIX = "CONCEPTCOMB_"


def environment_value(option: str) -> str | None:
    """The variable that sets a judge option (``judge_model``: CONCEPTCOMB_JUDGE_MODEL)."""
    return os.environ.get(_ENV_PREFIX + option.upper())


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CREDENTIALS = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/?#]*@")


@dataclass(frozen=True)
class JudgeSettings:
    judge: str = "openai"
    judge_model: str | None = None
    judge_base_url: str | None = None
    judge_api_key_env: str = "OPENAI_API_KEY"
    judge_concurrency: int = 16
    judge_max_retries: int = 5
    judge_format_retries: int = 3
    judge_timeout: float = 60.0
    judge_max_tokens: int = 1024
    judge_cache: str | None = None
    judge_response_format: str = "text"
    judge_device: str = "auto"
    judge_dtype: str = "auto"
    judge_batch_size: int = 16

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in fields(cls))

    @classmethod
    def resolve(cls, options: Mapping[str, Any] | None = None) -> JudgeSettings:
        """Explicit options win over ``CONCEPTCOMB_JUDGE*`` variables, which win over defaults."""
        options = dict(options or {})
        values: dict[str, Any] = {}
        for field in fields(cls):
            env_value = environment_value(field.name)
            raw = options.get(field.name)
            if raw is None or raw == "":
                raw = env_value
            if raw is None or raw == "":
                continue
            values[field.name] = _coerce(field.name, field.type, raw)
        settings = replace(cls(), **values)
        settings.check()
        return settings

    def check(self) -> None:
        if self.judge not in JUDGE_KINDS:
            raise ConfigError(
                f"judge={self.judge!r} is not a judge we know: use one of {', '.join(JUDGE_KINDS)} "
                "(option 'judge' or CONCEPTCOMB_JUDGE)."
            )
        if not _ENV_NAME.match(self.judge_api_key_env):
            raise ConfigError(
                "judge_api_key_env must be the NAME of an environment variable that holds the "
                "key (for example OPENAI_API_KEY), not the key itself."
            )
        if self.judge_response_format not in RESPONSE_FORMATS:
            raise ConfigError(
                f"judge_response_format={self.judge_response_format!r}: use one of "
                f"{', '.join(RESPONSE_FORMATS)}."
            )
        if self.judge_concurrency < 1:
            raise ConfigError("judge_concurrency must be at least 1.")
        if self.judge_batch_size < 1:
            raise ConfigError("judge_batch_size must be at least 1 (questions per forward pass).")
        if not DEVICE_PATTERN.match(self.judge_device):
            raise ConfigError(
                f"judge_device={self.judge_device!r} is not a device: use auto (the GPU when "
                "there is one), cpu, cuda, cuda:N or mps."
            )
        if self.judge_dtype not in DTYPE_ALIASES.values():
            raise ConfigError(
                f"judge_dtype={self.judge_dtype!r}: use auto (bfloat16 on a GPU that has it, "
                "else float32), float32, bfloat16 or float16."
            )
        if min(self.judge_max_retries, self.judge_format_retries) < 0:
            raise ConfigError("judge_max_retries and judge_format_retries cannot be negative.")
        if self.judge == "openai" and self.judge_base_url:
            if not self.base_urls:
                raise ConfigError(
                    f"judge_base_url={self.judge_base_url!r} names no endpoint: give one URL, "
                    "or several separated by commas (e.g. http://a:8000/v1,http://b:8000/v1)."
                )
            for url in self.base_urls:
                check_base_url(url, "judge_base_url")

    def check_credentials(self) -> None:
        """Fail before any generation if the judge cannot be reached for lack of a key."""
        if self.judge != "openai" or self.judge_base_url:
            return
        if not os.environ.get(self.judge_api_key_env):
            raise ConfigError(
                f"The judge is OpenAI's {self.model_name} (the paper's judge) but "
                f"${self.judge_api_key_env} is not set. Set it, or choose another judge: "
                "an OpenAI-compatible server with judge_base_url=http://host:port/v1 "
                "(and judge_model=NAME), the offline judge with judge=local, or no judging "
                'with judge=off. lm-eval: --metadata \'{"judge": "local"}\'; '
                "Inspect: -T judge=local or --model-role grader=MODEL."
            )

    @property
    def base_urls(self) -> tuple[str, ...]:
        """The endpoints of ``judge_base_url``: one, or several replicas of one judge."""
        return split_base_urls(self.judge_base_url)

    @property
    def model_name(self) -> str:
        if self.judge_model:
            return self.judge_model
        return PAPER_JUDGE_MODEL if self.judge == "openai" else "packaged SmolLM2-135M-Instruct"

    @property
    def enabled(self) -> bool:
        return self.judge != "off"


def split_base_urls(value: str | None) -> tuple[str, ...]:
    """``"http://a/v1, http://b/v1"`` -> both URLs, in the order given, without repeats."""
    urls = (url.strip() for url in (value or "").split(","))
    return tuple(dict.fromkeys(url for url in urls if url))


def check_base_url(url: str, origin: str) -> None:
    """An endpoint URL must be http(s)://host[:port]/path and carry no credentials."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as err:
        raise ConfigError(f"{origin}={_shown(url)!r} is not a URL ({err}).") from err
    if parts.scheme not in ("http", "https") or not parts.hostname:
        example = f"http://{_shown(url)}" if "://" not in url else "http://localhost:8000/v1"
        raise ConfigError(
            f"{origin}={_shown(url)!r} is not an http:// or https:// URL with a host: write "
            f"it as {example}."
        )
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"{origin}={_shown(url)!r} holds a user name or password, which we do not "
            "send: remove them from the URL and put the key in an environment variable whose "
            "NAME you pass as judge_api_key_env (sent as a Bearer token)."
        )


def _shown(url: str) -> str:
    """The URL for an error message: any user:password@ masked, with or without a scheme."""
    return _CREDENTIALS.sub(lambda m: (m.group(1) or "") + "***@", url)


def _coerce(name: str, annotation: Any, raw: Any) -> Any:
    if name == "judge_base_url" and isinstance(raw, list | tuple):
        # A JSON list in lm-eval's --metadata, a YAML list in Inspect's -T: kept as the
        # comma-separated form (endpoint base URLs hold no commas).
        raw = ",".join(str(url).strip() for url in raw)
    text = str(raw).strip()
    kind = str(annotation)
    try:
        if kind.startswith("int"):
            return int(text)
        if kind.startswith("float"):
            return float(text)
    except ValueError as err:
        raise ConfigError(f"{name}={text!r} is not a number.") from err
    if name == "judge":
        # Inspect reads `-T judge=off` as YAML, which makes it False.
        return "off" if raw is False or text.lower() in ("false", "no") else text.lower()
    if name == "judge_device":
        return text.lower()
    if name == "judge_dtype":  # bf16, torch.bfloat16 ... -> bfloat16; anything else is checked
        name = text.lower().removeprefix("torch.")
        return DTYPE_ALIASES.get(name, name)
    return text
