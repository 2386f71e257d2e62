"""The ``lm_eval`` and ``inspect eval`` command lines of the tests, built in one place each.

They read like docs/running.md: ``lm_eval --model M --model_args A --tasks T --limit N ...``
and ``inspect eval conceptcomb/T --model M -M k=v -T k=v --limit N ...``, so that a change to
how the docs run a task changes these two functions, not every test.

Options are keyword arguments: ``log_samples=True`` is the flag ``--log_samples`` (``False``
or ``None`` leaves it out), a mapping or list (``metadata={...}``) is written as JSON, any other
value as text. lm-eval spells its options with underscores (``--output_path``), Inspect with
dashes (``log_dir=`` is ``--log-dir``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conceptcomb.common.lm_eval_paths import include_path_args

# The include path of this package's YAML tasks, where lm-eval has no copy (editable install).
OUR_TASKS = "our tasks"

# `lm_eval` with a task index of this package's tasks only (conceptcomb.frameworks.
# lm_eval_our_tasks): the same parser, runner and outputs, without first indexing lm-eval's
# ~14,000 task files (about 16 s per process on 2 cores). For the tests' real runs whose point
# is the run, not the `lm_eval` command a user types.
OUR_LM_EVAL = (sys.executable, "-m", "conceptcomb.frameworks.lm_eval_our_tasks")


def lm_eval_command(
    tasks: str | Sequence[str],
    *,
    model: str,
    model_args: str | Mapping[str, Any] | None = None,
    limit: int | None = None,
    program: str | Path | Sequence[str] = "lm_eval",
    include_path: str | Path | None = OUR_TASKS,
    **options: Any,
) -> list[str]:
    """``lm_eval --model MODEL [--model_args A] --tasks T[,T...] [--limit N] [options]``.

    ``include_path``: this package's tasks where lm-eval needs them (the default), a folder
    of other tasks, or None for none. ``program``: a program, or the words that start one
    (`OUR_LM_EVAL`).
    """
    words = [str(program)] if isinstance(program, str | Path) else list(program)
    command = [*words, "--model", model]
    if model_args is not None:
        command += ["--model_args", _pairs(model_args, ",")]
    command += ["--tasks", tasks if isinstance(tasks, str) else ",".join(tasks)]
    if limit is not None:
        command += ["--limit", str(limit)]
    command += _options(options, dashes=False)
    if include_path == OUR_TASKS:
        command += include_path_args()
    elif include_path is not None:
        command += ["--include_path", str(include_path)]
    return command


def model_run_env() -> dict[str, str]:
    """This process's environment for a model run in a subprocess, with OpenMP's threads
    waiting passively (``OMP_WAIT_POLICY=PASSIVE``, as `conceptcomb demo` sets it) unless
    the environment says otherwise. torch's threads spin while they wait: on a machine busy
    with other work (CI's two test workers on 2 cores) that made an lm_eval run of SmolLM2
    2.6 times slower (77 s against 30 s at load 7.5, 2026-12-06); the replies are the same."""
    return {"OMP_WAIT_POLICY": "PASSIVE", **os.environ}


def inspect_eval_command(
    tasks: str | Sequence[str],
    *,
    model: str | Sequence[str],
    model_args: Mapping[str, Any] | None = None,
    task_args: Mapping[str, Any] | None = None,
    limit: int | None = None,
    program: str | Path = "inspect",
    subcommand: str = "eval",
    **options: Any,
) -> list[str]:
    """``inspect eval TASK... --model MODEL [-M k=v...] [-T k=v...] [--limit N] [options]``.

    ``model`` is a model name, or the model options already made (``--model ... -M ...``, as
    `conceptcomb.smollm2.inspect_model_args` gives them). Task names are as Inspect takes them
    (``conceptcomb/ccpt_tp``, ``file.py@task``).
    """
    names = [tasks] if isinstance(tasks, str) else list(tasks)
    if isinstance(model, str):
        model_options = ["--model", model]
    else:
        model_options = list(model)
        assert model_options[:1] == ["--model"], f"model options start with --model: {model}"
    command = [str(program), subcommand, *names, *model_options]
    for flag, pairs in (("-M", model_args), ("-T", task_args)):
        for key, value in (pairs or {}).items():
            command += [flag, f"{key}={_text(value)}"]
    if limit is not None:
        command += ["--limit", str(limit)]
    return command + _options(options, dashes=True)


def _options(options: Mapping[str, Any], *, dashes: bool) -> list[str]:
    words: list[str] = []
    for key, value in options.items():
        flag = "--" + (key.replace("_", "-") if dashes else key)
        if value is True:
            words.append(flag)
        elif value is not None and value is not False:
            words += [flag, _text(value)]
    return words


def _pairs(pairs: str | Mapping[str, Any], separator: str) -> str:
    if isinstance(pairs, str):
        return pairs
    return separator.join(f"{key}={_text(value)}" for key, value in pairs.items())


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value)
    return str(value)
