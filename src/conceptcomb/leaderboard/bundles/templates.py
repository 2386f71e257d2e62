"""Every prompt template of a benchmark, rendered, and the hashes a bundle records.

A template is found by what sends it, not by how it is named: each benchmark's
``templates.py`` calls the functions that build its prompts (the model's prompts of every
task and method, the spreading-activation prompts, the judge's and the verifier's prompts)
on placeholder items. The rendered texts cover every constant, f-string and join those
functions use, so changing any of them changes the hash; a test checks that every string
constant of the prompt modules shows up in some rendered text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from conceptcomb.benchmarks import benchmarks, get
from conceptcomb.common.contract import Benchmark
from conceptcomb.scorers import judge_identity


def _rendered(benchmark: Benchmark) -> Callable[[], dict[str, str]]:
    """The benchmark's templates and its judge's (what a bundle's hash covers)."""

    def render() -> dict[str, str]:
        return {**benchmark.templates(), **(benchmark.judge_templates() or {})}

    return render


# Benchmark -> the function rendering every template its tasks and judges use.
RENDERERS: dict[str, Callable[[], dict[str, str]]] = {
    benchmark.key: _rendered(benchmark) for benchmark in benchmarks()
}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def rendered_templates(benchmark: str) -> dict[str, str]:
    """Name -> rendered text of every template a benchmark's tasks and judges use."""
    return RENDERERS[benchmark]()


def templates_sha256(benchmark: str) -> str:
    return _digest(rendered_templates(benchmark))


def judge_prompt_sha256(benchmark: str) -> str | None:
    """sha256 of the judge's own template(s) for the benchmark (None: no judge)."""
    templates = get(benchmark).judge_templates()
    return None if templates is None else judge_identity.templates_sha256(templates)
