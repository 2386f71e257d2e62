"""The registry: every benchmark of the package, one line each.

The ``conceptcomb`` command, the Inspect entry point, the report, leaderboard bundles and
packaging iterate it; each entry is a benchmark folder's ``benchmark.py``, which declares
the folder through `conceptcomb.common.contract.Benchmark`. Adding a benchmark is adding its
folder and one line here.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from conceptcomb.common.contract import Benchmark
from conceptcomb.common.evidence import EvidenceAdapter

# In display order (the report's sections follow it).
REGISTRY: tuple[str, ...] = (
    "conceptcomb.ccpt.benchmark",
    "conceptcomb.cggc.benchmark",
    "conceptcomb.abspyramid.benchmark",
    "conceptcomb.mcrae.benchmark",
)


@lru_cache(maxsize=1)
def benchmarks() -> tuple[Benchmark, ...]:
    return tuple(importlib.import_module(module).BENCHMARK for module in REGISTRY)


def get(key: str) -> Benchmark:
    for benchmark in benchmarks():
        if benchmark.key == key:
            return benchmark
    known = ", ".join(b.key for b in benchmarks())
    raise KeyError(f"{key}: not a benchmark of this package (known: {known})")


@lru_cache(maxsize=1)
def known_tasks() -> dict[str, str]:
    """Every task name of this package -> its benchmark's key."""
    return {task: b.key for b in benchmarks() for task in b.tasks()}


def evidence_adapter(key: str) -> EvidenceAdapter | None:
    """The benchmark's per-item evidence checker for bundles (None: rows stay unverified)."""
    make = get(key).evidence
    return make() if make is not None else None
