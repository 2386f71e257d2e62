"""`submit-bundle` and `report` with nothing to show (issue 35): exit 1 with one line saying
what they looked for; runs of a framework's mock model are never rows of ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.cli import main
from conceptcomb.common.runs import INSPECT, LM_EVAL, ModelInfo, Run
from conceptcomb.leaderboard.report.runs import read_runs


def lm_eval_results(folder: Path, model: str) -> Path:
    """An lm-eval results file of cggc_ood as lm-eval writes it (the fields we read)."""
    folder.mkdir(parents=True)
    path = folder / "results_2026-11-25T10-00-00.json"
    data = {
        "results": {"cggc_ood": {"alias": "cggc_ood", "rouge2,none": 1.5}},
        "configs": {"cggc_ood": {"metadata": {"version": 1.1}}},
        "versions": {"cggc_ood": 1.1},
        "n-samples": {"cggc_ood": {"original": 15985, "effective": 2}},
        "config": {"model": model, "model_args": "", "limit": 2.0},
        "model_name": model,
        "date": 1764064800.0,
        "lm_eval_version": "0.4.13",
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["submit-bundle", "report"])
def test_an_empty_folder_is_exit_1_saying_what_was_looked_for(
    command: str, tmp_path: Path, capsys
) -> None:
    empty, out = tmp_path / "empty", tmp_path / "out"
    empty.mkdir()
    assert main([command, str(empty), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("conceptcomb: error: ")
    assert f"no results of a conceptcomb task in {empty}" in err
    assert "results_*.json" in err and "*.eval" in err and "*.bundle.json" in err
    assert not out.exists()  # nothing written


@pytest.mark.parametrize("command", ["submit-bundle", "report"])
def test_a_dummy_model_run_is_left_out_with_a_note(command: str, tmp_path: Path, capsys) -> None:
    lm_eval_results(tmp_path / "results" / "dummy", "dummy")
    out = tmp_path / "out"
    assert main([command, str(tmp_path / "results"), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "a run of lm-eval's dummy model (dummy), left out" in captured.out
    assert "(1 left out: see the notes above)" in captured.err
    assert not out.exists()


def test_a_real_run_beside_a_mock_run_is_bundled_alone(tmp_path: Path, capsys) -> None:
    lm_eval_results(tmp_path / "results" / "dummy", "dummy")
    lm_eval_results(tmp_path / "results" / "hf", "hf")
    out = tmp_path / "out"
    assert main(["submit-bundle", str(tmp_path / "results"), "--out", str(out)]) == 0
    assert [p.name for p in out.iterdir()] == ["hf_lm-eval.bundle.json"]
    assert "lm-eval's dummy model (dummy), left out" in capsys.readouterr().out


def test_mock_runs_stay_for_those_who_ask(tmp_path: Path) -> None:
    """Tests of the tables place mock runs (cheap) with ``include_mock``."""
    lm_eval_results(tmp_path / "results", "dummy")
    (run,) = read_runs([tmp_path / "results"], include_mock=True)
    assert list(run.tasks) == ["cggc_ood"] and not run.notes


@pytest.mark.parametrize(
    ("framework", "provider", "mock"),
    [
        (INSPECT, "mockllm", True),
        (LM_EVAL, "dummy", True),
        (INSPECT, "openai", False),
        (LM_EVAL, "hf", False),
        (INSPECT, "dummy", False),  # only lm-eval's dummy is a mock
    ],
)
def test_mock_models(framework: str, provider: str, mock: bool) -> None:
    run = Run(framework, None, ModelInfo("m", f"{provider}/m", provider))
    assert (run.mock_model is not None) == mock
