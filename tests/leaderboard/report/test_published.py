"""The papers' rows in the report are the papers' numbers: each row is found in the paper."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conceptcomb.abspyramid import published as abspyramid_pub
from conceptcomb.ccpt import published as ccpt_pub
from conceptcomb.cggc import published as cggc_pub
from conceptcomb.cggc.tables import cggc_gap
from conceptcomb.common.tables import PublishedRow
from conceptcomb.leaderboard.report.published import all_published, published_rows
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.shared_data


SEEDS = SHARED_DATA.parent / "seeds"
PAPERS = {
    ccpt_pub.PAPER: "ccpt_paper.txt",
    cggc_pub.PAPER: "cggc_paper.txt",
    abspyramid_pub.PAPER: "abspyramid_paper.txt",
}
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+")


def numbers_per_line(paper: str) -> list[list[float]]:
    text = (SEEDS / PAPERS[paper]).read_text(encoding="utf-8")
    return [[float(n) for n in NUMBER.findall(line)] for line in text.splitlines()]


def printed_sequence(row: PublishedRow) -> list[float]:
    """The row's numbers in the order the paper prints them (value, then its ± term)."""
    sequence: list[float] = []
    for cell in row.cells.values():
        sequence.append(cell.value)  # type: ignore[arg-type]
        if cell.stderr is not None:
            sequence.append(cell.stderr)
    return sequence


def on_one_line(sequence: list[float], lines: list[list[float]]) -> bool:
    n = len(sequence)
    return any(line[i : i + n] == sequence for line in lines for i in range(len(line) - n + 1))


@pytest.mark.parametrize(
    "row",
    [r for r in all_published() if r.table != ccpt_pub.CCPT_TYPE_PREDICTION],
    ids=lambda r: f"{r.source}:{r.model}:{r.setting}",
)
def test_row_is_printed_in_the_paper(row: PublishedRow) -> None:
    lines = numbers_per_line(row.source.rsplit(",", 1)[0])
    assert on_one_line(printed_sequence(row), lines), f"{row.source}: {row.model} {row.setting}"


def test_table_5_rows_and_the_stated_accuracy() -> None:
    (row,) = published_rows(ccpt_pub.CCPT_TYPE_PREDICTION)
    lines = numbers_per_line(ccpt_pub.PAPER)
    cells = printed_sequence(row)
    assert cells[0] == 56.4
    for gold in range(4):  # Table 5 prints one gold type per line
        assert on_one_line(cells[1 + 4 * gold : 5 + 4 * gold], lines)
        assert sum(cells[1 + 4 * gold : 5 + 4 * gold]) == pytest.approx(100, abs=0.2)
    text = (SEEDS / PAPERS[ccpt_pub.PAPER]).read_text(encoding="utf-8")
    assert "56.4" in text
    assert sum(cells[1 + 5 * i] for i in range(4)) / 4 == pytest.approx(56.4, abs=0.05)


def test_every_benchmark_table_has_its_rows() -> None:
    counts = {table: len(published_rows(table)) for table in (
        ccpt_pub.CCPT_GENERATIVE, ccpt_pub.CCPT_TYPE_PREDICTION,
        cggc_pub.CGGC_TABLE4, cggc_pub.CGGC_TABLE6, cggc_pub.CGGC_TABLE7,
        abspyramid_pub.ABSPYRAMID_DETECTION, abspyramid_pub.ABSPYRAMID_GENERATION,
    )}  # fmt: skip
    assert counts == {
        ccpt_pub.CCPT_GENERATIVE: 26,
        ccpt_pub.CCPT_TYPE_PREDICTION: 1,
        cggc_pub.CGGC_TABLE4: 24,
        cggc_pub.CGGC_TABLE6: 3,
        cggc_pub.CGGC_TABLE7: 5,
        abspyramid_pub.ABSPYRAMID_DETECTION: 30 + 8 + 4,
        abspyramid_pub.ABSPYRAMID_GENERATION: 44,
    }


def test_our_gap_matches_table_4_gap_rows() -> None:
    """cggc_gap on the paper's id and ood rows gives its printed gap rows (one known slip)."""
    rows = {(r.model, r.setting): r for r in published_rows(cggc_pub.CGGC_TABLE4)}
    models = sorted({model for model, _ in rows})
    assert len(models) == 8
    for model in models:
        gap = cggc_gap(rows[model, "id"].cells, rows[model, "ood"].cells)
        for metric, printed in rows[model, "gap"].cells.items():
            if (model, metric) == ("Llama2-chat", "rouge2"):  # printed 2.14, id - ood is 2.24
                assert gap[metric].value == pytest.approx(2.24)
                continue
            assert gap[metric].value == pytest.approx(printed.value, abs=0.011), (model, metric)


def test_seeds_are_there() -> None:
    assert all((SEEDS / name).is_file() for name in PAPERS.values()), Path(SEEDS)
