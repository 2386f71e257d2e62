"""Table 6 (the gap per structure type, t-tests) and Fig. 4 (packaging) as tasks in both
frameworks, and the report placing every run by its options, never as a Table 4 row."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conceptcomb.cggc.analysis.per_item import item_gaps, welch_p
from conceptcomb.cggc.docs import task_pairs
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from conceptcomb.cli import main
from conceptcomb.common.errors import ConfigError
from conceptcomb.leaderboard.report.build import write_report
from conceptcomb.leaderboard.report.runs import read_runs
from conceptcomb.testing.commands import OUR_LM_EVAL, inspect_eval_command, lm_eval_command

TABLE6_TASKS = [f"cggc_{s}_test_type{k}" for k in "ABC" for s in ("id", "ood")]


def report_rows(results: Path, out: Path) -> dict[str, list[dict[str, str]]]:
    """`conceptcomb report`'s CSV rows of ours, per table (runs of lm-eval's dummy and
    Inspect's mockllm included: `conceptcomb report` leaves them out)."""
    write_report(read_runs([results], include_mock=True), out, with_plots=False)
    rows: dict[str, list[dict[str, str]]] = {}
    for path in out.glob("cggc_*.csv"):
        with path.open(encoding="utf-8") as handle:
            rows[path.stem] = [r for r in csv.DictReader(handle) if r["origin"] == "ours"]
    return rows


def report_notes(out: Path) -> str:
    return (out / "cggc.md").read_text(encoding="utf-8")


def lm_eval(out: Path, tasks: str, **options: Any) -> None:
    command = lm_eval_command(
        tasks, log_samples=True, output_path=out, program=OUR_LM_EVAL, **options
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def test_named_tasks_fix_their_options() -> None:
    spec = spec_by_name("cggc_ood_test_typeB")
    assert (spec.setting, spec.test_type) == ("ood", "B")
    assert spec_by_name("cggc_ood_d22").packaging == "2&2"
    pairs = task_pairs(spec, TaskOptions())
    assert pairs and {item.structure for item, _ in pairs} == {"B"}
    same = [i.item_id for i, _ in task_pairs(spec_by_name("cggc_id_test_typeB"), TaskOptions())]
    assert same == [i.item_id for i, _ in pairs]  # id and ood: the same items of type B
    with pytest.raises(ConfigError, match="cggc_ood_test_typeB fixes test_type=B"):
        task_pairs(spec, TaskOptions(test_type="A"))


def test_welch_p() -> None:
    assert welch_p([0.0, 0.1, 0.0, 0.1], [5.0, 5.1, 5.0, 5.2]) < 0.001
    assert welch_p([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(1.0)
    ids = {"a": {"rougeL": 3.0}, "b": {"rougeL": 1.0}}
    assert item_gaps(ids, {"a": {"rougeL": 1.0}, "c": {"rougeL": 0.0}}, "rougeL") == [2.0]


@pytest.mark.slow
def test_table6_and_fig4_on_smollm2_in_lm_eval(smollm2_folder: Path, tmp_path: Path) -> None:
    """Table 6 and Fig. 4 from one lm_eval process on SmolLM2 (hf runner, one item at a
    time): the 8 tasks of both groups, each built with every test item's demonstrations,
    3 items each generated and scored (METEOR's JVM). 166 s on 2 cores at load 4-7
    (2026-12-06)."""
    lm_eval(tmp_path / "out", "cggc_table6,cggc_fig4", model="hf",
            model_args=f"pretrained={smollm2_folder}", limit=3)  # fmt: skip
    rows = report_rows(tmp_path / "out", tmp_path / "report")
    assert "cggc_table4" not in rows and "cggc_table7" not in rows
    settings = [r["setting"] for r in rows["cggc_table6"]]
    for kind in "ABC":
        assert {f"id (type {kind})", f"ood (type {kind})", f"gap (type {kind})"} <= set(settings)
    assert [r["setting"] for r in rows["cggc_fig4"]] == ["D1&3", "D2&2"]
    notes = report_notes(tmp_path / "report")
    assert "t-tests of the per-item gaps (A n=3, B n=3, C n=3): rouge2: A-B p=" in notes
    assert "CGGC dataset sha256 6f82341ff8d7 (shipped)" in notes  # the dataset is named
    samples = next((tmp_path / "out").rglob("samples_cggc_ood_d13_*.jsonl"))
    for line in samples.read_text().splitlines():
        assert json.loads(line)["doc"]["packaging"] == "1&3"


@pytest.mark.slow
def test_options_move_a_run_out_of_table_4(tmp_path: Path) -> None:
    """cggc_id / cggc_ood run with test_type (lm-eval --metadata, Inspect -T) are Table 6 rows."""
    lm_eval(tmp_path / "lm", "cggc_id,cggc_ood", model="dummy", limit=2,
            metadata={"test_type": "B"})  # fmt: skip
    command = inspect_eval_command(
        "conceptcomb/cggc", model="mockllm/model",
        task_args={"setting": "ood", "packaging": "2&2"}, limit=2, log_dir=tmp_path / "in",
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = report_rows(tmp_path, tmp_path / "report")
    assert "cggc_table4" not in rows
    assert {r["setting"] for r in rows["cggc_table6"]} == {
        "id (type B)",
        "ood (type B)",
        "gap (type B)",
    }
    assert [r["setting"] for r in rows["cggc_fig4"]] == ["D2&2"]
    assert main(["cggc", "report", str(tmp_path / "lm")]) == 0


@pytest.mark.slow
def test_table6_and_fig4_on_smollm2_in_inspect(
    smollm2_inspect_model: list[str], tmp_path: Path
) -> None:
    """The same in one inspect eval process on SmolLM2 (hf provider): 5 tasks, each built
    with every test item's demonstrations, 2 items each generated and scored (METEOR's
    JVM). 82 s on 2 cores at load 4-7 (2026-12-06)."""
    tasks = ["conceptcomb/cggc_id_test_typeA", "conceptcomb/cggc_ood_test_typeA",
             "conceptcomb/cggc_id_test_typeC", "conceptcomb/cggc_ood_test_typeC",
             "conceptcomb/cggc_ood_d13"]  # fmt: skip
    command = inspect_eval_command(
        tasks, model=smollm2_inspect_model, limit=2, log_dir=tmp_path / "logs"
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = report_rows(tmp_path / "logs", tmp_path / "report")
    assert "cggc_table4" not in rows
    settings = {r["setting"] for r in rows["cggc_table6"]}
    assert {"gap (type A)", "gap (type C)"} <= settings
    assert [r["setting"] for r in rows["cggc_fig4"]] == ["D1&3"]
    notes = report_notes(tmp_path / "report")
    assert "t-tests of the per-item gaps (A n=2, C n=2)" in notes
    assert "CGGC dataset sha256 6f82341ff8d7 (shipped)" in notes
