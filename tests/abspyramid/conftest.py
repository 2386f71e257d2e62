"""AbsPyramid test data: the hand-made fixture files plus the 30 real detection records.

The real records (``../shared/data/abspyramid/sample_detection.jsonl``, 10 per relation,
from the authors' exemplar lists) are not committed: each session copies the fixture
folder and puts them first in the detection test files, in the hub's record schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.testing import commands
from scripts import abspyramid_sample_folder as sample_folder
from tests.conftest import (
    ABSPYRAMID_LM_EVAL_TASKS,
    SHARED_DATA,
    LmEvalOutput,
    read_jsonl,
)

# Outside the collected test packages (tests/fixtures/: data, not a test package).
FIXTURES = sample_folder.FIXTURES
REAL_SAMPLE = SHARED_DATA / "abspyramid" / "sample_detection.jsonl"


def real_records() -> list[dict]:
    """The 30 real detection records, as the hub stores them (no 'instance' field)."""
    return sample_folder.real_records(REAL_SAMPLE)


def data_folder(folder: Path) -> Path:
    """``folder``: the hand-made fixture files, the 30 real detection records (from
    ../shared) first in each detection test file (scripts/abspyramid_sample_folder.py, which
    makes the same folder for a README's runs)."""
    return sample_folder.data_folder(folder, REAL_SAMPLE)


def lm_eval_command(model: Path, tasks: str, limit: int, data_dir: Path, out: Path) -> list[str]:
    """lm-eval's command line indexing our tasks only (`commands.OUR_LM_EVAL`): the same run
    without first indexing lm-eval's ~14,000 task files."""
    return commands.lm_eval_command(
        tasks, model="hf", model_args=f"pretrained={model}", limit=limit,
        metadata={"data_dir": str(data_dir)}, log_samples=True, output_path=out,
        program=commands.OUR_LM_EVAL,
    )  # fmt: skip


@pytest.fixture(scope="session")
def lm_eval_run(abspyramid_lm_eval: LmEvalOutput) -> dict:
    """The session's real lm-eval run of SmolLM2 (`abspyramid_lm_eval`, tests/conftest.py:
    3 items each of log-likelihood, in-context and zero-shot detection and of generation,
    also bundled by the evidence tests), as the lm-eval and Inspect tests read it: the
    printed table, the results per task, and the logged samples per task. Before it was
    shared, this module's own run of three of those tasks took 201 s of setup in
    test_inspect.py's test_same_outputs_same_numbers_in_both_frameworks (on 2 cores at load
    4-7, 2026-12-06)."""
    out = abspyramid_lm_eval.out
    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    samples = {
        task: sorted(read_jsonl(next(out.rglob(f"samples_{task}_2*.jsonl"))),
                     key=lambda s: s["doc_id"])
        for task in ABSPYRAMID_LM_EVAL_TASKS
    }  # fmt: skip
    return {"table": abspyramid_lm_eval.table, "results": results, "samples": samples}
