"""Table 3's method rows: spreading activation and multi-oracle runs land in their own rows."""

from __future__ import annotations

from pathlib import Path

from conceptcomb.ccpt.tables import ccpt_generative
from conceptcomb.common.runs import Metric, ModelInfo, Run, TaskRun
from conceptcomb.leaderboard.report.runs import known_tasks


def _task(name: str, metrics: dict[str, float]) -> TaskRun:
    return TaskRun(
        task=name,
        benchmark="ccpt",
        version="1.0",
        metrics={key: Metric(value, 1.0) for key, value in metrics.items()},
        n_items=200,
        n_total=200,
        options={},
        created="2026-11-22",
        source=Path("results.json"),
    )


def _run(*tasks: TaskRun) -> Run:
    return Run("lm-eval", "0.4.13", ModelInfo("m", "m", "hf"), {t.task: t for t in tasks})


def test_method_tasks_are_known_to_the_report() -> None:
    names = known_tasks()
    for task in (
        "ccpt_pi_emergent_sa_llm",
        "ccpt_npc_emergent_sa_conceptnet_nofilter",
        "ccpt_pi_canceled_oracle",
        "cggc_id_verified",
    ):
        assert task in names, task


def test_sa_and_oracle_rows_beside_base() -> None:
    run = _run(
        _task("ccpt_pi_emergent", {"R_HMP": 40.0, "R_NP": 80.0, "E": 41.0}),
        _task("ccpt_pi_emergent_sa_conceptnet", {"R_HMP": 30.0, "R_NP": 82.0, "E": 52.0}),
        # The oracle's main-metric names must not leak into any row: only *_oracle count.
        _task(
            "ccpt_pi_emergent_oracle",
            {"R_HMP_oracle": 20.0, "R_NP_oracle": 90.0, "E_oracle": 70.0, "E": 99.0},
        ),
    )
    ours = {row.setting: row for row in ccpt_generative([run]).ours()}
    assert set(ours) == {"Base", "S.A.w/ ConceptNet", "Multi-Oracle"}
    assert ours["S.A.w/ ConceptNet"].cells["pi_emergent:E"].value == 52.0
    oracle = ours["Multi-Oracle"].cells
    assert oracle["pi_emergent:E"].value == 70.0
    assert oracle["pi_emergent:R_NP"].value == 90.0
    assert ours["Base"].cells["pi_emergent:E"].value == 41.0
