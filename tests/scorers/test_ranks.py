"""The judge questions of a data-parallel lm-eval run's processes, pooled: two real
processes joined by torch.distributed (gloo, as ``accelerate launch --cpu`` sets it up),
each judging its questions inside a judge filter's `shared_questions`, against one loopback
judge that counts what it is asked.

The whole lm-eval run on two processes is in tests/scorers/test_data_parallel_lm_eval.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conceptcomb.testing.judge_server import LoopbackServer, deterministic_rating

WORKER = Path(__file__).with_name("ranks_worker.py")


def run_ranks(scenario: str, tmp_path: Path, server: LoopbackServer) -> list[dict]:
    """Both ranks' JSON results (each process is given two minutes at most)."""
    init = tmp_path / "init"
    processes = [
        subprocess.Popen([sys.executable, str(WORKER), str(rank), "2", str(init),
                          server.base_url, scenario], stdout=subprocess.PIPE, text=True)
        for rank in range(2)
    ]  # fmt: skip
    outputs = [process.communicate(timeout=120)[0] for process in processes]
    assert all(process.returncode == 0 for process in processes), outputs
    return [json.loads(output.strip().splitlines()[-1]) for output in outputs]


def test_each_distinct_question_is_asked_once_across_ranks(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        first, second = run_ranks("overlap", tmp_path, server)
        attempts = dict(server.stats.attempts)
    assert len(attempts) == 4 and set(attempts.values()) == {1}  # ice, fire, moth, boat: once
    assert first["ratings"] == {c: deterministic_rating(c, p) for c, p in
                                [("Ice", "cold"), ("Fire", "hot"), ("Moth", "small")]}  # fmt: skip
    assert second["ratings"] == {c: deterministic_rating(c, p) for c, p in
                                 [("Moth", "small"), ("Boat", "wet")]}  # fmt: skip
    # Both hold the run's total: 6 asked, 4 distinct, 2 repeats; each rank asked 2.
    expected = ("4 distinct questions (asked by 2 processes), 4 requests sent, 0 cache hits, "
                "2 duplicates asked once, 0 failures")  # fmt: skip
    assert expected in first["usage"] and first["usage"] == second["usage"]


def test_a_rank_without_questions_takes_part(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        first, second = run_ranks("one rank has none", tmp_path, server)
        assert server.stats.requests == 2
    assert second == {"asked": 0}
    assert "2 distinct questions (asked by 2 processes), 2 requests sent" in first["usage"]


@pytest.mark.parametrize(
    ("scenario", "error"),
    [
        ("a rank fails before asking", "ValueError: parsing the replies failed"),
        ("a rank fails while asking", "ConfigError: this rank's judge is broken"),
    ],
)
def test_a_failing_rank_stops_the_others(scenario: str, error: str, tmp_path: Path) -> None:
    """No process waits for one that failed: each stops, the others naming it."""
    with LoopbackServer() as server:
        first, second = run_ranks(scenario, tmp_path, server)
    assert second == {"error": error}
    assert first == {
        "error": f"JudgeError: process 1 of the 2 in this run stopped while judging: {error}"
    }
