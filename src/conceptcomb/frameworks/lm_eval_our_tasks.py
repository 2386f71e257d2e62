"""``lm_eval``'s own command line, with a task index of this package's tasks only.

Every ``lm_eval`` run first indexes all the task YAML files it can see: lm-eval's ~14,000
built-in ones (about 16 s on 2 cores) before ours. ``python -m
conceptcomb.frameworks.lm_eval_our_tasks ARGS`` runs ``lm_eval ARGS`` (same parser, runner,
outputs and log lines) with lm-eval's own ``TaskManager(include_defaults=False)`` reading
our task folder alone: ``conceptcomb demo`` uses it to reach its first result sooner, and
prints the plain ``lm_eval`` command for users to copy, which gives the same results.

lm-eval's command builds its ``TaskManager`` inside (``EvaluatorConfig.process_tasks``,
``lm_eval ls``/``validate``), importing the name from ``lm_eval.tasks`` when it runs: the
name is replaced there for this process only. tests/frameworks/test_lm_eval_our_tasks.py
fails if a later lm-eval stops reading it from there (the index would hold its own tasks).
lm-eval also asks ``git describe`` for the commit of the folder it runs in, whose "fatal:
not a git repository" outside one is noise: `quiet_git_hash` asks the same, quietly.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from conceptcomb.common.lm_eval_paths import tasks_path


def our_task_manager(task_manager: type) -> type:
    """``task_manager`` that indexes the include paths it is given plus our task folder,
    never lm-eval's built-in tasks."""

    class OurTaskManager(task_manager):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["include_defaults"] = False
            kwargs["include_path"] = _with_ours(kwargs.get("include_path"))
            super().__init__(*args, **kwargs)

    return OurTaskManager


def _with_ours(include_path: Any) -> list[str | Path]:
    given = include_path if isinstance(include_path, (list, tuple)) else [include_path]
    paths = [path for path in given if path]
    ours = tasks_path()
    return paths if any(Path(p).resolve() == ours for p in paths) else [*paths, ours]


def quiet_git_hash() -> str | None:
    """lm-eval's ``get_git_commit_hash`` (the results' ``git_hash``) without git's "fatal:
    not a git repository" on stderr outside a repository: the same answer."""
    import subprocess

    from lm_eval.loggers.utils import get_commit_from_path

    try:
        found = subprocess.run(
            ["git", "describe", "--always"], capture_output=True, check=True, text=True
        )
        return found.stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return get_commit_from_path(os.getcwd())


def main(argv: list[str] | None = None) -> int:
    """Run ``lm_eval *argv`` (default: this process's arguments); its exit status."""
    import lm_eval.evaluator
    import lm_eval.tasks
    from lm_eval.__main__ import cli_evaluate

    given = lm_eval.tasks.TaskManager
    given_hash = getattr(lm_eval.evaluator, "get_git_commit_hash", None)
    saved_argv = sys.argv
    lm_eval.tasks.TaskManager = our_task_manager(given)
    if given_hash is not None:
        lm_eval.evaluator.get_git_commit_hash = quiet_git_hash
    sys.argv = ["lm_eval", *(saved_argv[1:] if argv is None else argv)]
    try:
        cli_evaluate()
    except SystemExit as stop:  # argparse and `lm_eval validate` end this way
        if isinstance(stop.code, str):  # what Python would print had it ended the process
            print(stop.code, file=sys.stderr, flush=True)
        return stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    finally:
        lm_eval.tasks.TaskManager, sys.argv = given, saved_argv
        if given_hash is not None:
            lm_eval.evaluator.get_git_commit_hash = given_hash
    return 0


if __name__ == "__main__":
    sys.exit(main())
