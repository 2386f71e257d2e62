"""A judged Inspect task run with no judge option nor grader role (issue 52): the paper's
judge at a loopback OPENAI_BASE_URL, and the one line that names it. Shared by CCPT's and
CGGC's `inspect score` tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import _model as inspect_model

from conceptcomb.testing.judge_server import LoopbackServer


@contextmanager
def default_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    """A loopback server as the default judge's endpoint, for the block's runs."""
    with LoopbackServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        # Inspect memoizes the default grader by its arguments, not by OPENAI_BASE_URL: one
        # made by an earlier test of this process would ask that test's (stopped) server.
        monkeypatch.setattr(inspect_model, "_models", {})
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        yield server


def run_without_judge(
    task: str, model: Any, limit: int, log_dir: Path, capfd: Any, judge_off: bool
) -> tuple[EvalLog, list[str]]:
    """``inspect eval conceptcomb/TASK`` (``-T judge=off`` with ``judge_off``): its log and
    the "no judge chosen" lines it printed."""
    capfd.readouterr()
    [log] = inspect_eval(
        f"conceptcomb/{task}",  # built by the eval, as `inspect eval` does
        task_args={"judge": "off"} if judge_off else {},
        model=model,
        limit=limit,
        max_samples=1,
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    return log, [line for line in capfd.readouterr().err.splitlines() if "no judge chosen" in line]


def no_judge_line(server: LoopbackServer) -> str:
    return (
        f"[conceptcomb] no judge chosen: the judge is openai/gpt-4o (the paper's) at "
        f"{server.base_url}; --model-role grader=MODEL or -T judge_base_url=... "
        "chooses another, -T judge=off runs without one."
    )
