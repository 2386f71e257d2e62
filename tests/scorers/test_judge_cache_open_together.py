"""Processes that open one new judge cache at the same moment (the ranks of a data-parallel
run) all get it: SQLite's journal-mode switch reports "database is locked" at once, without
waiting, and the cache retries it."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from conceptcomb.scorers.judge_cache import JudgeCache

PROCESSES = 6
TRIALS = 12


def _open_and_write(path: str, barrier, results) -> None:
    barrier.wait()
    try:
        cache = JudgeCache(path)
        cache.put("judge", f"prompt from {os.getpid()}", 1.0, "reply")
        results.put("ok")
    except Exception as err:  # reported to the test, which names it
        results.put(repr(err))


def test_processes_opening_a_new_cache_together_all_write_to_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for trial in range(TRIALS):
        path = str(tmp_path / f"cache-{trial}.sqlite")
        barrier, results = context.Barrier(PROCESSES), context.Queue()
        workers = [
            context.Process(target=_open_and_write, args=(path, barrier, results))
            for _ in range(PROCESSES)
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=120) for _ in workers]
        for worker in workers:
            worker.join(timeout=120)
        assert outcomes == ["ok"] * PROCESSES, f"trial {trial}: {outcomes}"
        assert (
            len(JudgeCache(path).get_many("judge", [f"prompt from {w.pid}" for w in workers]))
            == PROCESSES
        )
