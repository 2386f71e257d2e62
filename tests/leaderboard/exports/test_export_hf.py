"""``conceptcomb export --to hf``: the Hugging Face Hub's ``.eval_results`` entries, read back
with ``huggingface_hub``'s own parser: the full CCPT group (the authors' recorded answers and
GPT-4o ratings, through ``conceptcomb score``) and a CGGC bundle, whose benchmark has no
dataset on the Hub until one is named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conceptcomb.benchmarks import get
from conceptcomb.testing.cggc_references import cggc_bundle
from tests.leaderboard.eee_support import eee_files, parse_eval_result_entries, run_cli

MODEL = ("--model-id", "conceptcomb/ccpt-recorded-answers")


def parsed(folder: Path) -> dict[str, list[Any]]:
    files = sorted((folder / ".eval_results").glob("*.yaml"))
    assert files
    return {
        path.name: parse_eval_result_entries(yaml.safe_load(path.read_text())) for path in files
    }


@pytest.mark.shared_data
def test_one_entry_per_task_for_its_headline_metric(group_bundle: Path, tmp_path: Path) -> None:
    bundle_path = group_bundle  # the session's (tests/leaderboard/conftest.py), read only
    bundle = json.loads(bundle_path.read_text())
    code, printed = run_cli(
        "export", "--to", "hf", str(bundle_path), "--out", str(tmp_path / "hf"), *MODEL
    )
    assert code == 0, printed
    assert "--create-pr" in printed  # says where to send them
    ((name, entries),) = parsed(tmp_path / "hf").items()
    assert name == "ccpt_conceptcomb-score_ccpt-recorded-answers.yaml"
    card = get("ccpt").card
    tasks = {task["task"]: task for task in bundle["tasks"]}
    assert sorted(entry.task_id for entry in entries) == sorted(tasks)
    assert (
        run_cli("export", "--to", "eee", str(bundle_path), "--out", str(tmp_path / "eee"), *MODEL)[
            0
        ]
        == 0
    )
    records = {path.name for path in eee_files(tmp_path / "eee")[0]}
    for entry in entries:
        task = tasks[entry.task_id]
        headline = card.tasks[entry.task_id].headline_metric
        assert entry.dataset_id == card.hub_dataset == "seokwon99/CCPT_12.3K"
        assert entry.dataset_revision is None  # the run read the GitHub release, not the Hub's
        assert entry.value == pytest.approx(task["metrics"][headline]["value"], abs=1e-9)
        assert entry.date == task["created"]
        assert entry.source_url.split("/")[-1] in records  # its Every Eval Ever record
        assert bundle["content_sha256"] in entry.notes and "task version 1.0" in entry.notes
        assert (
            "github.com/seokwon99/CCPT at dbd6c08b413b939c3f3878ffb0bd5f048f71dc50" in entry.notes
        )


@pytest.mark.slow  # CGGC's metrics (spaCy)
def test_a_benchmark_without_a_hub_dataset_needs_one_named(tmp_path: Path) -> None:
    bundle = cggc_bundle(tmp_path / "refs", tasks=("cggc_ood",), limit=6)
    out = str(tmp_path / "hf")
    code, printed = run_cli("export", "--to", "hf", str(bundle), "--out", out, *MODEL)
    assert code == 2 and len(printed.strip().splitlines()) == 1
    assert "CGGC has no benchmark dataset on the Hugging Face Hub" in printed
    assert "--dataset-id cggc=OWNER/NAME" in printed
    code, printed = run_cli("export", "--to", "hf", str(bundle), "--out", out, *MODEL,
                            "--dataset-id", "cggc=someone/cggc@abc123")  # fmt: skip
    assert code == 0, printed
    ((_, (entry,)),) = parsed(tmp_path / "hf").items()
    assert (entry.dataset_id, entry.dataset_revision, entry.task_id) == (
        "someone/cggc",
        "abc123",
        "cggc_ood",
    )
    assert "PARTIAL: 6 of 15985 test items" in entry.notes
    for wrong, message in {
        "cggc:someone/cggc": "--dataset-id 'cggc:someone/cggc': give BENCHMARK=OWNER/NAME",
        "nobench=a/b": "nobench: not a benchmark of this package",
    }.items():
        code, printed = run_cli(
            "export", "--to", "hf", str(bundle), "--out", out, *MODEL, "--dataset-id", wrong
        )
        assert code == 2 and message in printed, printed
