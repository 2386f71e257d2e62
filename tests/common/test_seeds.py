"""Mean ± SEM over seeded runs (Table 3, Appendix B.1), on fixed judged replies.

Three Inspect runs of ccpt_pi_emergent on two items stand for three seeds; a loopback judge
answers from the rating table of `tests.ccpt.test_oracle` (R = (r - 1) / 9):

  run 1: wet (A: R_NP 100, E 66.67),   wilted (B: R_NP 66.67, E 33.33) -> E 50,    R_NP 83.33
  run 2: stuck (A: R_NP 66.67, E 33.33), green (B: R_NP 33.33, E 0)    -> E 16.67, R_NP 50
  run 3: hollow (A: R_NP 0, E 0),      wilted (B)                      -> E 16.67, R_NP 33.33

E: mean 250/9 = 27.78; deviations 200/9, -100/9, -100/9; sample variance 30000/81;
SEM = sqrt(30000/81 / 3) = 100/9 = 11.11. R_NP: mean 500/9 = 55.56; deviations 250/9,
-50/9, -200/9; sample variance 52500/81; SEM = sqrt(17500)/9 = 14.70. The population SD
of E (the authors' print_stat) is sqrt(60000/81 / 3) = 15.71.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from conceptcomb.cli import main
from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.seeds import SeedStat, seed_report
from conceptcomb.testing.judge_server import LoopbackServer
from tests.ccpt.test_inspect import run_task
from tests.ccpt.test_oracle import RATINGS, prop

RUNS = [["wet", "wilted"], ["stuck", "green"], ["hollow", "wilted"]]
E_MEAN, E_SEM = 250 / 9, 100 / 9
R_NP_MEAN, R_NP_SEM = 500 / 9, math.sqrt(17500) / 9


def test_sem_is_the_sample_sd_over_root_n() -> None:
    stat = SeedStat((1.0, 2.0, 6.0))  # mean 3, deviations -2 -1 3, sample variance 7
    assert stat.mean == 3.0
    assert stat.sem == pytest.approx(math.sqrt(7 / 3))
    assert stat.sd_population == pytest.approx(math.sqrt(14 / 3))
    assert SeedStat((5.0,)).sem is None


@pytest.fixture
def inspect_runs(tmp_path: Path, fresh_cache: Path) -> list[Path]:
    logs = []
    with LoopbackServer(ratings=RATINGS) as server:
        for number, properties in enumerate(RUNS):
            log_dir = tmp_path / f"seed{number}"
            replies = [prop(p) for p in properties]
            run_task("ccpt_pi_emergent", replies, log_dir, judge_base_url=server.base_url)
            logs += sorted(log_dir.glob("*.eval"))
    assert len(logs) == 3
    return logs


@pytest.mark.shared_data
def test_inspect_runs_mean_and_sem(inspect_runs: list[Path]) -> None:
    report = seed_report(inspect_runs)
    stats = report.stats["ccpt_pi_emergent"]
    assert stats["E"].values == pytest.approx((50.0, 50 / 3, 50 / 3))
    assert stats["E"].mean == pytest.approx(E_MEAN)
    assert stats["E"].sem == pytest.approx(E_SEM)
    assert stats["E"].sd_population == pytest.approx(math.sqrt(60000 / 81 / 3))
    assert stats["R_NP"].mean == pytest.approx(R_NP_MEAN)
    assert stats["R_NP"].sem == pytest.approx(R_NP_SEM)
    assert re.search(r"^  E +27\.8 ± 11\.1  \(n=3\)$", report.table(), re.M)


def lm_eval_results(path: Path, e: float, r_np: float) -> Path:
    """A results file shaped as lm-eval 0.4 writes it ("metric,filter" keys)."""
    data = {
        "results": {
            "ccpt_pi_emergent": {
                "alias": "ccpt_pi_emergent",
                "E,judged": e,
                "E_stderr,judged": 3.0,
                "R_NP,judged": r_np,
                "R_NP_stderr,judged": "N/A",
            }
        },
        "config": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_cli_reads_lm_eval_folders_and_writes_json(tmp_path: Path, capsys) -> None:
    values = [(50.0, 250 / 3), (50 / 3, 50.0), (50 / 3, 100 / 3)]
    for number, (e, r_np) in enumerate(values):
        lm_eval_results(tmp_path / f"seed{number}" / "model" / "results_2025.json", e, r_np)
    output = tmp_path / "seeds.json"
    assert main(["seeds", str(tmp_path), "--output", str(output), "--digits", "2"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"^  E +27\.78 ± 11\.11  \(n=3\)$", printed, re.M)
    written = json.loads(output.read_text())["results"]["ccpt_pi_emergent"]
    assert written["R_NP"]["sem"] == pytest.approx(R_NP_SEM)
    assert set(written) == {"E", "R_NP"}  # standard errors of single runs are not metrics


def test_one_run_and_bad_files_are_explained(tmp_path: Path, capsys) -> None:
    single = lm_eval_results(tmp_path / "results_1.json", 10.0, 20.0)
    assert main(["seeds", str(single)]) == 0
    assert "one run only, no standard error" in capsys.readouterr().out
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with pytest.raises(DataFormatError, match=r"broken\.json"):
        seed_report([bad])
    assert main(["seeds", str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err
