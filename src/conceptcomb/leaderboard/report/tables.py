"""Leaderboard tables of every benchmark the runs touch, in the papers' layouts.

Each benchmark builds its own (``<benchmark>/tables.py``, through the contract's
``tables``); here they are collected, the tables without a run of ours left out, and
marked when a row ran on a subset.
"""

from __future__ import annotations

from conceptcomb.benchmarks import benchmarks
from conceptcomb.common.runs import Run
from conceptcomb.common.tables import Table

PARTIAL_NOTE = "Rows with items a/b ran on a subset (--limit): not comparable to the papers' rows."


def benchmark_tables(runs: list[Run], with_published: bool = True) -> dict[str, list[Table]]:
    """The tables of every benchmark the runs touch (tables without a run of ours left out)."""
    found: dict[str, list[Table]] = {}
    for benchmark in benchmarks():
        key = benchmark.key
        relevant = [r for r in runs if any(t.benchmark == key for t in r.tasks.values())]
        if not relevant:
            continue
        tables = [table for table in benchmark.tables(relevant) if table.ours()]
        for table in tables:
            if not with_published:
                table.rows = table.ours()
            if any(row.partial for row in table.ours()):
                table.notes.append(PARTIAL_NOTE)
        if tables:
            found[key] = tables
    return found
