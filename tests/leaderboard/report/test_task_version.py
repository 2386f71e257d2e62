"""The report shows the task version each of our rows ran (issue 26): a column of the
Markdown, CSV and HTML tables, a legend saying what it means, and a note when the rows of a
table ran different versions. Papers' rows have none."""

from __future__ import annotations

import csv
from pathlib import Path

from conceptcomb.ccpt.tasks import task_version
from conceptcomb.common.runs import Metric, ModelInfo, Run, TaskRun
from conceptcomb.common.tables import PUBLISHED, Cell, Column, Row, Table, our_row, task_versions
from conceptcomb.leaderboard.report.render import html_table, markdown, write_csv


def task(name: str, version: str | None, n: int = 200) -> TaskRun:
    return TaskRun(
        name, "ccpt", version, {"E": Metric(40.0, 1.0)}, n, 200, {}, "2026-11-24",
        Path(f"results_{name}.json"),
    )  # fmt: skip


def table(*versions: str | None) -> Table:
    rows = []
    for i, version in enumerate(versions):
        run = Run("lm-eval", "0.4.13", ModelInfo(f"model-{i}", f"model-{i}", "hf"))
        rows.append(our_row(run, "Base", [task("ccpt_pi_emergent", version)], {"E": Cell(40.0)}))
    rows.append(Row("GPT-4o", "Base", PUBLISHED, "Song et al., Table 3", {"E": Cell(40.8, 0.7)}))
    return Table("ccpt_generative", "ccpt", "Table 3", [Column("E", "E")], rows)


def test_task_versions_text() -> None:
    assert task_versions([task("a", "1.0"), task("b", "1.0")]) == "1.0"
    assert task_versions([task("a", "1.0"), task("b", "1.1")]) == "1.0 · 1.1"
    assert task_versions([task("a", "1.0"), task("b", None)]) == "1.0 · ?"
    assert task_versions([task("a", None)]) == ""


def test_markdown_csv_and_html_show_the_version(tmp_path: Path) -> None:
    shown = table(task_version())
    text = markdown(shown)
    header = next(line for line in text.splitlines() if line.startswith("| model"))
    assert "| items | task version |" in header
    ours = next(line for line in text.splitlines() if "**model-0**" in line)
    paper = next(line for line in text.splitlines() if line.startswith("| GPT-4o"))
    assert f"| 200 | {task_version()} |" in ours and "| – | – |" in paper
    assert "task version: the version of the tasks a row ran" in text
    assert "different task versions" not in text

    write_csv(shown, tmp_path / "t.csv")
    with (tmp_path / "t.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["task_version"] for row in rows] == [task_version(), ""]

    page = html_table(shown)
    assert "<th>task version</th>" in page and f"<td>{task_version()}</td>" in page


def test_rows_of_different_versions_are_flagged() -> None:
    text = markdown(table("1.0", "1.1"))
    assert "these rows ran different task versions (1.0, 1.1)" in text
