"""`conceptcomb cggc report`: Table 4 rows and the id - ood gap from lm-eval results."""

from __future__ import annotations

import json
from pathlib import Path

from conceptcomb.cggc.analysis.report import collect, table4
from conceptcomb.cggc.metrics import METRIC_NAMES
from conceptcomb.cli import main


def results_file(folder: Path, values: dict[str, dict[str, float]]) -> Path:
    results = {
        task: {f"{k},none": v for k, v in metrics.items()} for task, metrics in values.items()
    }
    path = folder / "model" / "results_2026.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"results": {**results, "ccpt_tp": {"accuracy,none": 1.0}}}))
    return path


def test_gap_is_id_minus_ood(tmp_path: Path, capsys) -> None:
    id_values = {name: 10.0 + i for i, name in enumerate(METRIC_NAMES)}
    ood_values = {name: 8.0 + i / 2 for i, name in enumerate(METRIC_NAMES)}
    results_file(tmp_path, {"cggc_id": id_values, "cggc_ood": ood_values})
    found = collect([tmp_path])
    assert set(found) == {"cggc_id", "cggc_ood"}
    gap_row = table4(found).splitlines()[-1].split()
    assert gap_row[:2] == ["gap", "(id"]
    assert [float(x) for x in gap_row[-8:]] == [2.0 + i / 2 for i in range(8)]
    assert main(["cggc", "report", str(tmp_path)]) == 0
    assert "ROUGE-2" in capsys.readouterr().out


def test_bundles_name_the_cggc_dataset(built_dir: Path) -> None:
    """A bundle's dataset records carry the CGGC dataset's identity (its manifest sha256)."""
    from conceptcomb.cggc.data import PACKAGED_SHA256, load_dataset
    from conceptcomb.leaderboard.bundles.datasets import dataset_records

    shipped = [r for r in dataset_records("cggc", {}) if r["kind"] == "built"]
    assert shipped[0]["dataset_sha256"] == PACKAGED_SHA256
    assert shipped[0]["title"] == "CGGC as shipped with conceptcomb"
    own = [r for r in dataset_records("cggc", {"data_dir": str(built_dir)}) if r["kind"] == "built"]
    assert own[0]["dataset_sha256"] == load_dataset(built_dir).sha256 != PACKAGED_SHA256
