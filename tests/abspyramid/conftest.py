"""AbsPyramid test data: the hand-made fixture files plus the 30 real detection records.

The real records (``../shared/data/abspyramid/sample_detection.jsonl``, 10 per relation,
from the authors' exemplar lists) are not committed: each session copies the fixture
folder and puts them first in the detection test files, in the hub's record schema.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conceptcomb.testing import commands
from conceptcomb.testing.commands import model_run_env
from scripts import abspyramid_sample_folder as sample_folder
from tests.conftest import SHARED_DATA, read_jsonl, require_shared_data

# Outside the collected test packages (tests/fixtures/: data, not a test package).
FIXTURES = sample_folder.FIXTURES
REAL_SAMPLE = SHARED_DATA / "abspyramid" / "sample_detection.jsonl"


def real_records() -> list[dict]:
    """The 30 real detection records, as the hub stores them (no 'instance' field)."""
    return sample_folder.real_records(REAL_SAMPLE)


@pytest.fixture(scope="session")
def abspyramid_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder in the hub layout: detection test = 10 real + 10 hand-made per relation."""
    require_shared_data()
    return data_folder(tmp_path_factory.mktemp("abspyramid-data") / "abspyramid")


def data_folder(folder: Path) -> Path:
    """``folder``: the hand-made fixture files, the 30 real detection records (from
    ../shared) first in each detection test file (scripts/abspyramid_sample_folder.py, which
    makes the same folder for a README's runs)."""
    return sample_folder.data_folder(folder, REAL_SAMPLE)


LM_EVAL_TASKS = ("abspyramid_det_noun", "abspyramid_det_noun_icl", "abspyramid_gen_noun")
LM_EVAL_LIMIT = 3


def lm_eval_command(model: Path, tasks: str, limit: int, data_dir: Path, out: Path) -> list[str]:
    """lm-eval's command line indexing our tasks only (`commands.OUR_LM_EVAL`): the same run
    without first indexing lm-eval's ~14,000 task files."""
    return commands.lm_eval_command(
        tasks, model="hf", model_args=f"pretrained={model}", limit=limit,
        metadata={"data_dir": str(data_dir)}, log_samples=True, output_path=out,
        program=commands.OUR_LM_EVAL,
    )  # fmt: skip


@pytest.fixture(scope="session")
def lm_eval_run(smollm2_folder: Path, abspyramid_dir: Path, tmp_path_factory) -> dict:
    """One real lm-eval run of SmolLM2 on three tasks (shared by the lm-eval and Inspect
    tests): the printed table, the results per task, and the logged samples per task. Made
    once per worker, by its first user: one lm_eval process (`lm_eval_command`: indexing our
    tasks only; its threads waiting passively) loading SmolLM2 (hf runner, one item at a
    time), 3 items each of log-likelihood detection, ICL detection and generation. 201 s of
    setup (before those two changes) in test_inspect.py's
    test_same_outputs_same_numbers_in_both_frameworks, 81 s in test_lm_eval.py's
    test_smollm2_run_prints_the_papers_metrics on the other worker (on 2 cores at load 4-7,
    2026-12-06)."""
    out = tmp_path_factory.mktemp("lm-eval-run")
    command = lm_eval_command(
        smollm2_folder, ",".join(LM_EVAL_TASKS), LM_EVAL_LIMIT, abspyramid_dir, out
    )
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=1500, env=model_run_env()
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    samples = {
        task: sorted(read_jsonl(next(out.rglob(f"samples_{task}_2*.jsonl"))),
                     key=lambda s: s["doc_id"])
        for task in LM_EVAL_TASKS
    }  # fmt: skip
    return {"table": done.stdout, "results": results, "samples": samples}
