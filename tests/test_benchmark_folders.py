"""Each benchmark folder holds the contract modules at its top and its extras in named
subfolders, every module named in its README's Files section (docs/layout.md, issue 34)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import conceptcomb
from conceptcomb.benchmarks import REGISTRY

PACKAGE = Path(conceptcomb.__file__).parent
BENCHMARKS = [module.split(".")[1] for module in REGISTRY]
# The modules every benchmark folder may hold at its top (docs/layout.md).
CONTRACT = {
    "__init__",
    "benchmark",
    "tasks",
    "data",
    "prompts",
    "answers",
    "docs",
    "scoring",
    "metrics",
    "evidence",
    "tables",
    "published",
    "templates",
    "rescore",
    "cli",
    "lm_eval_hooks",
    "lm_eval_yaml",
    "inspect_adapter",
    "inspect_tasks",
}
# A benchmark's own core beside them, each read by both frameworks' tasks (its README says
# why); anything else belongs in a subfolder named for what it holds.
CORE = {
    "ccpt": {"modifiers"},  # the NPC modifier rule every NPC answer is read and judged with
    # The demonstrations every task shows, the relations and graphs its items are made of,
    # the _verified tasks' judge and its lm-eval hooks (a !function target of their YAML),
    # and the METEOR JVM both frameworks' scoring starts or shares (metrics.py's).
    "cggc": {"demos", "relations", "graphs", "verification", "verify_hooks", "meteor_server"},
}


def _files_section(benchmark: str) -> str:
    readme = (PACKAGE / benchmark / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^## Files\n(.*?)(?=^## )", readme, re.S | re.M)
    assert found, f"{benchmark}/README.md: no '## Files' section"
    return found.group(1)


def _rooms(benchmark: str) -> list[Path]:
    return sorted(p.parent for p in (PACKAGE / benchmark).glob("*/__init__.py"))


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_no_extra_at_the_top(benchmark: str) -> None:
    top = {path.stem for path in (PACKAGE / benchmark).glob("*.py")}
    extras = top - CONTRACT - CORE.get(benchmark, set())
    assert not extras, f"{benchmark}/: {sorted(extras)} belong in a named subfolder"


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_the_readme_names_every_module(benchmark: str) -> None:
    files = _files_section(benchmark)
    modules = [p for p in (PACKAGE / benchmark).glob("*.py") if p.stem != "__init__"]
    for room in _rooms(benchmark):
        assert f"`{room.name}/`" in files, f"{benchmark}/README.md: room {room.name}/ unnamed"
        modules += [p for p in room.glob("*.py") if p.stem != "__init__"]
    unnamed = sorted(str(p.relative_to(PACKAGE)) for p in modules if f"`{p.name}`" not in files)
    assert not unnamed, f"{benchmark}/README.md's Files section names none of {unnamed}"


def test_the_rooms_are_found() -> None:
    """The checks above see the subfolders (they would pass on none)."""
    assert [room.name for room in _rooms("cggc")] == ["analysis", "dataset_build"]
    assert {p.stem for p in (PACKAGE / "ccpt" / "methods").glob("*.py")} >= {"oracle"}


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_the_readme_has_inspect_evals_sections(benchmark: str) -> None:
    """inspect_evals' READMEs have Dataset, Scoring and Evaluation Report sections; a report
    gives, for each figure, the command that printed it, its date and the task version (or
    says why nothing could be reproduced)."""
    readme = (PACKAGE / benchmark / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", readme, re.M)
    assert {"Dataset", "Scoring", "Evaluation Report"} <= set(headings), headings
    report = re.search(r"^## Evaluation Report\n(.*?)(?=^## )", readme, re.S | re.M)
    assert report is not None
    text = report.group(1)
    assert "```bash" in text, f"{benchmark}: the report names no command"
    figures = re.findall(r"^\|.*\d+\.\d.*\|$", text, re.M)
    if figures:  # figures: dated, versioned
        assert re.search(r"\b20\d\d-\d\d-\d\d\b", text), f"{benchmark}: undated figures"
        assert re.search(r"version\s+\d+\.\d+", text), f"{benchmark}: no task version"
    else:
        assert "No figure" in text, f"{benchmark}: an empty report must say why"
