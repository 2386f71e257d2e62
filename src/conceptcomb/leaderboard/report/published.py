"""The papers' published rows of every benchmark (each benchmark keeps its own in
``<benchmark>/published.py``, transcribed from its paper with the source table)."""

from __future__ import annotations

from functools import lru_cache

from conceptcomb.benchmarks import benchmarks
from conceptcomb.common.tables import PublishedRow


@lru_cache(maxsize=1)
def all_published() -> tuple[PublishedRow, ...]:
    return tuple(row for benchmark in benchmarks() for row in benchmark.published())


def published_rows(table: str) -> list[PublishedRow]:
    return [row for row in all_published() if row.table == table]
