"""AbsPyramid test data: the hand-made fixture files plus the 30 real detection records.

The real records (``../shared/data/abspyramid/sample_detection.jsonl``, 10 per relation,
from the authors' exemplar lists) are not committed: each session copies the fixture
folder and puts them first in the detection test files, in the hub's record schema.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA, read_jsonl, require_shared_data

# Outside the collected test packages (tests/fixtures/: data, not a test package).
FIXTURES = Path(__file__).parents[1] / "fixtures" / "abspyramid"
REAL_SAMPLE = SHARED_DATA / "abspyramid" / "sample_detection.jsonl"
DETECTION = "AbsPyramid_Detection"


def real_records() -> list[dict]:
    """The 30 real detection records, as the hub stores them (no 'instance' field)."""
    return [
        {key: record[key] for key in ("event", "concept", "label", "type")}
        for record in read_jsonl(REAL_SAMPLE)
    ]


def _prepend(path: Path, records: list[dict]) -> None:
    lines = "".join(json.dumps(record) + "\n" for record in records)
    path.write_text(lines + path.read_text(encoding="utf-8"), encoding="utf-8")


@pytest.fixture(scope="session")
def abspyramid_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder in the hub layout: detection test = 10 real + 10 hand-made per relation."""
    require_shared_data()
    return data_folder(tmp_path_factory.mktemp("abspyramid-data") / "abspyramid")


def data_folder(folder: Path) -> Path:
    """``folder``: the hand-made fixture files, the 30 real detection records (from
    ../shared) first in each detection test file."""
    shutil.copytree(FIXTURES, folder)
    real = real_records()
    for kind in ("noun", "verb", "event"):
        _prepend(folder / DETECTION / f"{kind}_dataset" / "test.json",
                 [r for r in real if r["type"] == kind])  # fmt: skip
    _prepend(folder / DETECTION / "merged_dataset" / "test.json", real)
    return folder


LM_EVAL_TASKS = ("abspyramid_det_noun", "abspyramid_det_noun_icl", "abspyramid_gen_noun")
LM_EVAL_LIMIT = 3


def lm_eval_command(model: Path, tasks: str, limit: int, data_dir: Path, out: Path) -> list[str]:
    from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path

    include = [] if lm_eval_has_our_tasks() else ["--include_path", str(tasks_path())]
    return [
        "lm_eval", "--model", "hf",
        "--model_args", f"pretrained={model}",
        "--tasks", tasks, "--limit", str(limit),
        "--metadata", json.dumps({"data_dir": str(data_dir)}),
        "--log_samples", "--output_path", str(out), *include,
    ]  # fmt: skip


@pytest.fixture(scope="session")
def lm_eval_run(smollm2_folder: Path, abspyramid_dir: Path, tmp_path_factory) -> dict:
    """One real lm-eval run of SmolLM2 on three tasks (shared by the lm-eval and Inspect tests):
    the printed table, the results per task, and the logged samples per task."""
    out = tmp_path_factory.mktemp("lm-eval-run")
    command = lm_eval_command(
        smollm2_folder, ",".join(LM_EVAL_TASKS), LM_EVAL_LIMIT, abspyramid_dir, out
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    samples = {
        task: sorted(read_jsonl(next(out.rglob(f"samples_{task}_2*.jsonl"))),
                     key=lambda s: s["doc_id"])
        for task in LM_EVAL_TASKS
    }  # fmt: skip
    return {"table": done.stdout, "results": results, "samples": samples}
