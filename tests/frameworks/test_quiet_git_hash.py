"""lm-eval asks git for the commit of the folder it runs in; outside a repository git
prints "fatal: not a git repository" on every run (issue 54). The demo's in-process
lm_eval (`conceptcomb.frameworks.lm_eval_our_tasks`) asks the same, quietly."""

from __future__ import annotations

from pathlib import Path

import lm_eval.evaluator
import pytest

from conceptcomb.frameworks.lm_eval_our_tasks import quiet_git_hash


def test_lm_eval_asks_git_outside_a_repository_and_git_complains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    lm_eval.evaluator.get_git_commit_hash()
    assert "not a git repository" in capfd.readouterr().err


def test_the_demo_asks_it_quietly_with_the_same_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    expected = lm_eval.evaluator.get_git_commit_hash()
    capfd.readouterr()
    assert quiet_git_hash() == expected
    assert capfd.readouterr().err == ""
