"""`conceptcomb report` on real runs of SmolLM2 (lm-eval and Inspect, ccpt_tp and
ccpt_pi_emergent): one table per paper table, our rows from the results files, the papers'
rows beside them, Markdown, CSV, a self-contained HTML page and the plots."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from conceptcomb.ccpt.tasks import task_version
from conceptcomb.cli import main
from conceptcomb.common.runs import INSPECT, LM_EVAL
from conceptcomb.leaderboard.report.runs import read_runs
from tests.ccpt.test_inspect import means
from tests.leaderboard.conftest import RealRuns

pytestmark = pytest.mark.slow


def run_cli(*args: str) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(list(args))
    return code, printed.getvalue()


@pytest.fixture(scope="module")
def report(real_runs: RealRuns, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report")
    code, printed = run_cli(
        "report", str(real_runs.lm_eval_dir), str(real_runs.inspect_dir), "--out", str(out)
    )
    assert code == 0
    return out, printed


def lm_eval_results(real_runs: RealRuns) -> dict:
    return json.loads(next(real_runs.lm_eval_dir.rglob("results_*.json")).read_text())


def inspect_means(real_runs: RealRuns, task: str) -> dict[str, float]:
    for path in real_runs.inspect_dir.glob("*.eval"):
        log = read_eval_log(str(path), header_only=True)
        if log.eval.task.endswith(task):
            return means(log)
    raise AssertionError(f"no Inspect log of {task}")


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_runs_are_read_from_both_frameworks(real_runs: RealRuns) -> None:
    runs = read_runs([real_runs.lm_eval_dir, real_runs.inspect_dir])
    assert sorted(run.framework for run in runs) == [INSPECT, LM_EVAL]
    tasks = {run.framework: set(run.tasks) for run in runs}
    assert tasks == {
        LM_EVAL: {"ccpt_tp", "ccpt_pi_emergent", "mcrae_esslli44"},
        INSPECT: {"ccpt_tp", "ccpt_pi_emergent"},
    }
    for run in runs:
        assert run.model.label == "SmolLM2-135M-Instruct.Q4_1"
        tp = run.tasks["ccpt_tp"]
        assert (tp.n_items, tp.n_total, tp.complete) == (3, 1000, False)
        assert run.tasks["ccpt_pi_emergent"].n_total == 200
        assert run.tasks["ccpt_pi_emergent"].options["judge_base_url"] == real_runs.judge_url


def test_files_written(report: tuple[Path, str]) -> None:
    out, printed = report
    names = {path.name for path in out.iterdir()}
    assert names == {
        "ccpt.md", "ccpt.html", "ccpt_generative.csv", "ccpt_type_prediction.csv",
        "ccpt_emergence_cancellation.png", "ccpt_confusion.png",
        "ccpt_pi_emergent_differences.png", "ccpt_tp_differences.png",  # two runs: ranked
        "mcrae.md", "mcrae.html", "mcrae.csv",
        "explore.html",  # the item explorer of the same runs, linked from the rankings
    }  # fmt: skip
    assert printed.startswith("## CCPT") and "## McRae" in printed
    # The same model's replies in both frameworks: no paired comparison separates them.
    for task, metric in (("ccpt_pi_emergent", "E"), ("ccpt_tp", "accuracy")):
        assert f"### {task}: ranked by {metric}" in printed
    assert printed.count("| 1–2 | SmolLM2-135M-Instruct.Q4_1 (") == 4
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_type_prediction_rows_are_the_runs_numbers(
    report: tuple[Path, str], real_runs: RealRuns
) -> None:
    rows = csv_rows(report[0] / "ccpt_type_prediction.csv")
    ours = {row["framework_or_source"].split()[0]: row for row in rows if row["origin"] == "ours"}
    assert set(ours) == {"lm-eval", "inspect"}
    results = lm_eval_results(real_runs)["results"]["ccpt_tp"]
    means = inspect_means(real_runs, "ccpt_tp")
    for key in ("accuracy", "cm_emergent_as_emergent", "cm_emergent_as_others"):
        assert float(ours["lm-eval"][key]) == pytest.approx(results[f"{key},none"])
        assert float(ours["inspect"][key]) == pytest.approx(means[key])
    # no canceled item among the first 3: that row of the matrix is undefined, left empty
    assert "cm_canceled_as_others,none" not in results
    assert (
        ours["lm-eval"]["cm_canceled_as_others"] == ours["inspect"]["cm_canceled_as_others"] == ""
    )
    assert ours["lm-eval"]["items"] == ours["inspect"]["items"] == "3/1000"
    # the task version each framework recorded (lm-eval `versions`, Inspect task `version`)
    assert ours["lm-eval"]["task_version"] == ours["inspect"]["task_version"] == task_version()
    (paper,) = [row for row in rows if row["origin"] == "published"]
    assert paper["model"] == "GPT-4o" and float(paper["accuracy"]) == 56.4
    assert paper["framework_or_source"] == "Song et al. (NAACL 2025), Table 5"


def test_generative_table_has_table_3_beside_ours(
    report: tuple[Path, str], real_runs: RealRuns
) -> None:
    rows = csv_rows(report[0] / "ccpt_generative.csv")
    ours = [row for row in rows if row["origin"] == "ours"]
    published = [row for row in rows if row["origin"] == "published"]
    assert len(ours) == 2 and len(published) == 26
    results = lm_eval_results(real_runs)["results"]["ccpt_pi_emergent"]
    (lm_row,) = [row for row in ours if row["framework_or_source"].startswith("lm-eval")]
    for metric in ("R_HMP", "R_NP", "E"):
        assert float(lm_row[f"pi_emergent:{metric}"]) == pytest.approx(results[f"{metric},judged"])
        stderr = results[f"{metric}_stderr,judged"]
        assert float(lm_row[f"pi_emergent:{metric}_stderr"]) == pytest.approx(stderr)
    assert lm_row["pi_canceled:C"] == ""  # not run: an empty cell, not a zero
    gpt4o = next(r for r in published if r["model"] == "GPT-4o" and r["setting"] == "Base")
    assert (float(gpt4o["pi_emergent:E"]), float(gpt4o["pi_emergent:E_stderr"])) == (40.8, 0.7)


def test_mcrae_table_has_our_precision_and_no_published_rows(
    report: tuple[Path, str], real_runs: RealRuns
) -> None:
    (row,) = csv_rows(report[0] / "mcrae.csv")
    results = lm_eval_results(real_runs)["results"]["mcrae_esslli44"]
    assert (row["origin"], row["setting"], row["items"]) == ("ours", "44 ESSLLI nouns", "3/44")
    for key in ("P@10", "P@20", "P@30", "P@10_strict"):
        assert float(row[key]) == pytest.approx(results[f"{key},none"])
        assert float(row[f"{key}_stderr"]) == pytest.approx(results[f"{key}_stderr,none"])
    assert "publishes no system results" in (report[0] / "mcrae.md").read_text()
    page = (report[0] / "mcrae.html").read_text()
    assert "results_" in page and ".eval" not in page  # its source: the lm-eval run only


def test_markdown_marks_the_papers_rows_and_partial_runs(report: tuple[Path, str]) -> None:
    text = (report[0] / "ccpt.md").read_text()
    assert "### CCPT generative tasks (Song et al. 2025, Table 3)" in text
    # Table 3's rows name their judge: ours the record of the loopback gpt-4o (one key for
    # the lm-eval judge and the Inspect grader), the paper's GPT-4o.
    judged = "| **SmolLM2-135M-Instruct.Q4_1** | Base | {} | gpt-4o (API chat, "
    rows = [
        line
        for framework in ("lm-eval 0.4.13", "inspect 0.3.285")
        for line in text.splitlines()
        if line.startswith(judged.format(framework))
    ]
    assert len(rows) == 2 and all("| 3/200 | 1.0 |" in row for row in rows)
    assert len({row.split(" | ")[3] for row in rows}) == 1
    assert "(NAACL 2025), Table 3 | GPT-4o | – | – |" in text
    # The papers' rows have no item count and no task version.
    assert (
        "| GPT-4o | Base | **published**: Song et al. (NAACL 2025), Table 5 | – | – | 56.4 |"
        in (text)
    )
    assert "not comparable to the papers' rows" in text
    assert "judge: " in text


def test_html_is_self_contained(report: tuple[Path, str]) -> None:
    page = (report[0] / "ccpt.html").read_text()
    # Tables 3 and 5 and their plots, then per task a ranking table, a differences plot and
    # the table of each pair's items in the explorer.
    assert page.count("<table>") == 6 and page.count("data:image/png;base64,") == 4
    assert page.count('class="explore-pair"') == 2  # one pair of runs per task
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    # 2 runs x (2 paper tables + 2 rankings), and the one pair of each task's runs
    assert page.count('<tr class="ours">') == 8 + 2
    assert "Song et al. (NAACL 2025), Table 3" in page


def test_no_published_option(real_runs: RealRuns, tmp_path: Path) -> None:
    code, _ = run_cli(
        "report", str(real_runs.lm_eval_dir), "--out", str(tmp_path), "--no-published",
        "--no-plots",
    )  # fmt: skip
    assert code == 0
    rows = csv_rows(tmp_path / "ccpt_type_prediction.csv")
    assert [row["origin"] for row in rows] == ["ours"]
    assert not list(tmp_path.glob("*.png"))


def test_results_of_no_conceptcomb_task_are_refused(tmp_path: Path, capsys) -> None:
    other = tmp_path / "results_2024.json"
    other.write_text(json.dumps({"results": {"arc_easy": {"acc,none": 0.5}}, "configs": {}}))
    assert main(["report", str(other), "--out", str(tmp_path / "out")]) == 1
    assert "no results of a conceptcomb task in" in capsys.readouterr().err


def test_rescored_replies_become_a_row_of_their_own(real_runs: RealRuns, tmp_path: Path) -> None:
    """`conceptcomb score` output: the model named by the results beside the samples."""
    samples = next(real_runs.lm_eval_dir.rglob("samples_ccpt_tp_*.jsonl"))
    scored = tmp_path / "tp_scored.json"
    assert (
        run_cli("score", "ccpt_tp", "--predictions", str(samples), "--output", str(scored))[0] == 0
    )
    code, _ = run_cli("report", str(scored), "--out", str(tmp_path / "out"), "--no-plots")
    assert code == 0
    rows = csv_rows(tmp_path / "out" / "ccpt_type_prediction.csv")
    (ours,) = [row for row in rows if row["origin"] == "ours"]
    assert ours["model"] == "SmolLM2-135M-Instruct.Q4_1"
    assert ours["framework_or_source"].startswith("conceptcomb score")
    results = lm_eval_results(real_runs)["results"]["ccpt_tp"]
    assert float(ours["accuracy"]) == pytest.approx(results["accuracy,none"])
