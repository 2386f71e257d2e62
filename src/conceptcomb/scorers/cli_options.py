"""Command-line pieces every command that judges shares: the ``--judge-*`` options, the
judge settings they give, the judge-failure warning, and early checks of output paths."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from conceptcomb.common.errors import ConfigError, JudgeError
from conceptcomb.scorers.judge_settings import JudgeSettings

if TYPE_CHECKING:  # rating imports the judges' HTTP client (aiohttp): not to build a parser
    from conceptcomb.scorers.rating import JudgeUsage


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """``--judge-*`` flags; unset ones fall back to CONCEPTCOMB_JUDGE* and the defaults."""
    group = parser.add_argument_group("judge (default: the paper's gpt-4o at OpenAI)")
    group.add_argument(
        "--judge",
        choices=["openai", "local", "off"],
        help="openai: any OpenAI-compatible endpoint (default); local: the offline "
        "transformers judge (the packaged SmolLM2 unless --judge-model); off: no judge",
    )
    group.add_argument("--judge-model", help="model name, or a local model path for --judge local")
    group.add_argument(
        "--judge-base-url",
        help="OpenAI-compatible endpoint, e.g. a vLLM server; several, comma-separated, share "
        "the load (replicas serving the same model)",
    )
    group.add_argument("--judge-api-key-env", help="NAME of the variable holding the API key")
    group.add_argument("--judge-concurrency", type=int, help="requests in flight per endpoint (16)")
    group.add_argument("--judge-max-retries", type=int, help="retries of 429/5xx/timeouts (5)")
    group.add_argument("--judge-format-retries", type=int, help="re-asks of malformed answers (3)")
    group.add_argument("--judge-timeout", type=float, help="seconds per request (60)")
    group.add_argument("--judge-cache", help="cache file, or 'off'")
    group.add_argument(
        "--judge-response-format",
        choices=["text", "json_schema", "json_object"],
        help="text (the paper's); json_schema (OpenAI, vLLM) or json_object (llama.cpp) "
        "constrain the answer to the JSON the prompt asks for",
    )
    group.add_argument(
        "--judge-device",
        help="--judge local: auto (the GPU when there is one, else the CPU), cpu, cuda, cuda:N",
    )
    group.add_argument(
        "--judge-dtype", help="--judge local: auto (bfloat16 on a GPU that has it, else float32)"
    )
    group.add_argument(
        "--judge-batch-size", type=int, help="--judge local: questions per forward pass (16)"
    )


def judge_settings(args: argparse.Namespace) -> JudgeSettings:
    options = {name: getattr(args, name, None) for name in JudgeSettings.option_names()}
    return JudgeSettings.resolve(options)


def prepare_output(value: str | Path | None, option: str) -> Path | None:
    """Create an output file's folder and check that it can be written, before any
    expensive work (judging), so that no finished run is lost to a typo in a path."""
    if not value:
        return None
    path = Path(value)
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a folder: name a file in it, e.g. {path}/out.json.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.open("a", encoding="utf-8").close()
        else:
            tempfile.TemporaryFile(dir=path.parent).close()
    except OSError as err:
        raise ConfigError(
            f"{option} {path} cannot be written ({err.strerror or err}): choose another path."
        ) from err
    return path


def judge_failure_warning(usage: JudgeUsage | None) -> str | None:
    """`JudgeError` when every judge question failed (nothing is printed or written); the
    warning line to print when some did; None when none did."""
    if usage is None:
        return None
    if usage.all_failed:
        raise JudgeError(
            f"every one of the {usage.questions} judge questions failed, so no judged metric "
            f"could be computed and no results were written; last error: {usage.last_error}"
        )
    warning = usage.failure_warning()
    return f"conceptcomb: {warning}" if warning else None
