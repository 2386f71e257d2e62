"""Emergence / cancellation and the Table 5 confusion matrix, on hand-checked numbers."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from conceptcomb.ccpt.metrics import (
    aggregate,
    format_failure_metrics,
    judge_failure_metrics,
    relevance_metrics,
    type_prediction_metrics,
)
from conceptcomb.ccpt.tasks import CcptTaskSpec

pytestmark = pytest.mark.shared_data


EMERGENT = CcptTaskSpec("pi_emergent")
CANCELED = CcptTaskSpec("pi_canceled")
TP = CcptTaskSpec("tp")


def test_emergence_by_hand() -> None:
    # ratings N=8, H=4, M=2 -> R = 7/9, 3/9, 1/9; R_HMP = 3/9; E = 4/9
    metrics = relevance_metrics(EMERGENT, 7 / 9, 3 / 9, 1 / 9)
    assert metrics["R_NP"] == pytest.approx(77.777, abs=1e-3)
    assert metrics["R_HMP"] == pytest.approx(33.333, abs=1e-3)
    assert metrics["E"] == pytest.approx(44.444, abs=1e-3)
    assert "C" not in metrics


def test_emergence_is_clipped_at_zero() -> None:
    assert relevance_metrics(EMERGENT, 0.2, 0.9, 0.1)["E"] == 0.0


def test_cancellation_by_hand() -> None:
    # N=2, H=9, M=5 -> R_HMP = 8/9, R_NP = 1/9, C = 7/9
    metrics = relevance_metrics(CANCELED, 1 / 9, 8 / 9, 4 / 9)
    assert metrics["C"] == pytest.approx(77.777, abs=1e-3)
    assert relevance_metrics(CANCELED, 0.9, 0.1, 0.1)["C"] == 0.0


def test_aggregate_skips_undefined_and_sums_counts() -> None:
    rows = [
        relevance_metrics(EMERGENT, 7 / 9, 3 / 9, 1 / 9),  # E 44.4
        format_failure_metrics(EMERGENT),  # E 0, R undefined
        judge_failure_metrics(EMERGENT),  # excluded everywhere
    ]
    result = aggregate(EMERGENT, rows)
    assert result["E"].value == pytest.approx(44.444 / 2, abs=1e-3)
    assert result["E"].n == 2
    assert result["R_NP"].n == 1 and result["R_NP"].value == pytest.approx(77.777, abs=1e-3)
    assert result["format_failures"].value == 1
    assert result["judge_failures"].value == 1
    # sample standard error of (44.44, 0): sd = 31.43, / sqrt(2)
    assert result["E"].stderr == pytest.approx(22.222, abs=1e-3)


def test_confusion_matrix_rows_are_percentages_of_the_gold_type() -> None:
    pairs = [
        ("emergent", "emergent"),
        ("emergent", "component"),
        ("emergent", "emergent"),
        ("emergent", "emergent"),
        ("others", "canceled"),
        ("others", None),  # unparsable: wrong, counted
    ]
    result = aggregate(TP, [type_prediction_metrics(g, p) for g, p in pairs])
    assert result["accuracy"].value == pytest.approx(50.0)
    assert result["cm_emergent_as_emergent"].value == pytest.approx(75.0)
    assert result["cm_emergent_as_component"].value == pytest.approx(25.0)
    assert result["cm_emergent_as_emergent"].n == 4
    assert result["cm_others_as_canceled"].value == pytest.approx(50.0)
    assert result["cm_others_as_others"].value == 0.0
    assert "cm_component_as_component" not in result  # no gold component item
    assert result["format_failures"].value == 1


def _recorded(path: Path, positions: list[int], modifier_column: str) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [
        {
            "n": float(rows[p]["meta.combination_gpt-4o_relevance"]),
            "h": float(rows[p]["meta.root_gpt-4o_relevance"]),
            "m": float(rows[p][modifier_column]),
        }
        for p in sorted(positions)
    ]


@pytest.mark.parametrize(
    ("file", "kind", "table3_gold"),
    [
        ("ccpt_emergent.csv", "pi_emergent", {"R_HMP": 29.2, "R_NP": 87.4, "E": 58.4}),
        ("ccpt_canceled.csv", "pi_canceled", {"R_HMP": 83.2, "R_NP": 14.2, "C": 69.5}),
        ("ccpt_emergent.csv", "npc_emergent", {"R_HMP": 27.5, "R_NP": 87.2, "E": 59.9}),
    ],
)
def test_metrics_reproduce_table_3_gold_row(
    ccpt_dir: Path, file: str, kind: str, table3_gold: dict[str, float]
) -> None:
    """The paper's Gold row = our metrics on GPT-4o's recorded ratings of the gold items."""
    positions = json.loads((ccpt_dir / "test_index.json").read_text())[kind]
    spec = CcptTaskSpec(kind)
    rows = [
        relevance_metrics(spec, r["n"], r["h"], r["m"])
        for r in _recorded(ccpt_dir / file, positions, "meta.modifier_gpt-4o_relevance")
    ]
    result = aggregate(spec, rows)
    for name, published in table3_gold.items():
        assert round(result[name].value, 1) == published, name


def test_recorded_emergence_column_matches_our_definition(ccpt_dir: Path) -> None:
    with (ccpt_dir / "ccpt_emergent.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        ours = relevance_metrics(
            EMERGENT,
            float(row["meta.combination_gpt-4o_relevance"]),
            float(row["meta.root_gpt-4o_relevance"]),
            float(row["meta.modifier_gpt-4o_relevance"]),
        )["E"]
        assert math.isclose(ours / 100, float(row["meta.gpt-4o_emergence"]), abs_tol=1e-9)
