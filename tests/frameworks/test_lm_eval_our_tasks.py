"""`python -m conceptcomb.frameworks.lm_eval_our_tasks`: lm-eval's own command line with a
task index of our tasks only (what `conceptcomb demo` runs to skip indexing lm-eval's
~14,000 built-in task files)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lm_eval.tasks

from conceptcomb.common.lm_eval_paths import tasks_path
from conceptcomb.frameworks.lm_eval_our_tasks import main, our_task_manager

SOME_OF_OURS = ("ccpt_pi_emergent", "cggc_ood_easy2hard_verified", "mcrae_all")


def test_the_command_lists_our_tasks_and_none_of_lm_evals() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "conceptcomb.frameworks.lm_eval_our_tasks", "ls", "tasks"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    names = {cell.strip() for line in listed.stdout.splitlines() for cell in line.split("|")[1:2]}
    assert set(SOME_OF_OURS) <= names
    # If a later lm-eval stops reading TaskManager from lm_eval.tasks, its tasks come back.
    assert not {"hellaswag", "arc_easy", "mmlu"} & names


def test_our_index_gives_our_tasks_as_lm_evals_full_index_does() -> None:
    ours = our_task_manager(lm_eval.tasks.TaskManager)().task_index
    full = lm_eval.tasks.TaskManager(include_path=str(tasks_path())).task_index
    assert len(ours) < len(full) / 10
    for name, entry in ours.items():
        assert full[name].yaml_path == entry.yaml_path and full[name].kind == entry.kind, name


def test_in_process_run_returns_lm_evals_exit_status_and_restores_what_it_replaced(
    tmp_path: Path,
) -> None:
    argv, manager = list(sys.argv), lm_eval.tasks.TaskManager
    assert main(["validate", "--tasks", "no_such_conceptcomb_task"]) == 1
    assert main(["validate", "--tasks", SOME_OF_OURS[0]]) == 0
    assert sys.argv == argv and lm_eval.tasks.TaskManager is manager
