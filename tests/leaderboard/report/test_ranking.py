"""``conceptcomb report`` ranks with confidence: three runs of CCPT type prediction (the
dataset's own labels, then a tenth and an eighth of them changed), scored by ``conceptcomb
score``: the first is separated from both, the other two share ranks 2-3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from conceptcomb.leaderboard.report.ranking import BEATS_COLOR, TIED_COLOR, rank
from conceptcomb.testing.recorded import score_predictions
from tests.leaderboard.compare.test_compare_cli import _predictions
from tests.leaderboard.eee_support import run_cli

pytestmark = pytest.mark.shared_data
TASK = "ccpt_tp"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("ranked")
    found = []
    for model, changed, seed in (("gold", 0.0, 1), ("tenth", 0.10, 2), ("eighth", 0.12, 3)):
        out = root / model
        out.mkdir()
        predictions = _predictions(TASK, out / f"{TASK}.jsonl", changed, seed)
        found.append(Path(score_predictions(out, TASK, predictions, model)))
    return found


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def test_rows_no_comparison_separates_share_ranks(runs: list[Path]) -> None:
    (ranking,) = rank(runs)
    assert (ranking.task, ranking.metric, ranking.higher_is_better) == (TASK, "accuracy", True)
    ranks = {row.side.label.split(" ")[0]: row.rank for row in ranking.rows}
    assert ranks == {"gold": "1", "tenth": "2–3", "eighth": "2–3"}
    # the same comparisons as `conceptcomb compare` on the headline metric alone
    code, printed = run_cli("compare", *(str(p) for p in runs), "--json")
    assert code == 0
    rows = [r for r in json.loads(printed)["comparisons"] if r["metric"] == "accuracy"]
    separated = {(r["run_a"], r["run_b"]) for r in rows if r["p_holm"] < 0.05}
    assert ("A", "B") in separated and ("A", "C") in separated
    assert all(row.interval is not None and row.interval.clusters for row in ranking.rows)


def test_the_report_shows_the_ranks_the_intervals_and_the_figure(
    runs: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "report"
    code, printed = run_cli("report", *(str(p) for p in runs), "--out", str(out))
    assert code == 0, printed
    text = (out / "ccpt.md").read_text()
    assert "### ccpt_tp: ranked by accuracy ↑, with 95% intervals" in text
    assert "| 1 | gold (conceptcomb score) | 100.00 [100.00, 100.00] | 1000 |" in text
    assert "| 2–3 | tenth (conceptcomb score) |" in text
    assert "have no per-item scores: they are shown there and never ranked by a test" in text
    page = (out / "ccpt.html").read_text()
    assert "ccpt_tp: ranked by accuracy" in page and "ccpt_tp: each pair" in page
    figure = Image.open(out / "ccpt_tp_differences.png").convert("RGB")
    colours = {rgb: count for count, rgb in figure.getcolors(1 << 24)}
    assert colours.get(_rgb(BEATS_COLOR), 0) > 500  # gold's two separated differences
    assert colours.get(_rgb(TIED_COLOR), 0) > 100  # tenth - eighth


def test_one_run_of_each_task_is_reported_without_reading_its_items(
    runs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranking reads every item of every run (issue 42: ``report`` of a validated bundle
    within 2 s): with no task held by two runs, the report does not start it."""
    import conceptcomb.leaderboard.report.ranking as ranking

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("ranked a task that one run holds")

    monkeypatch.setattr(ranking, "rank", refuse)
    out = tmp_path / "report"
    code, printed = run_cli("report", str(runs[0]), "--out", str(out))
    assert code == 0, printed
    text = (out / "ccpt.md").read_text()
    assert "| **gold** |" in text and "ranked by accuracy" not in text
    assert not (out / "ccpt_tp_differences.png").exists()
