"""CCPT in lm-eval: discovery, and real runs of SmolLM2 with a loopback judge."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, user_prompt
from conceptcomb.ccpt.tasks import GROUP_NAME, CcptTaskSpec, all_specs
from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path
from conceptcomb.frameworks.lm_eval_our_tasks import our_task_manager
from tests.ccpt.conftest import run_lm_eval

pytestmark = pytest.mark.shared_data


def lm_eval_task_manager(**metadata) -> TaskManager:
    """lm-eval's own TaskManager, as a user's ``lm_eval`` builds it: every task file it can
    see indexed (its ~14,000 and ours; about 16 s on 2 cores)."""
    include = None if lm_eval_has_our_tasks() else str(tasks_path())
    return TaskManager(include_path=include, metadata=metadata)


def task_manager(**metadata) -> TaskManager:
    """lm-eval's TaskManager indexing our task folder only (`our_task_manager`): the tasks
    built from the same YAML (tests/frameworks/test_lm_eval_our_tasks.py), without indexing
    lm-eval's own task files each time. test_lm_eval_indexes_every_task_and_the_group checks
    that lm-eval's full index finds them."""
    return our_task_manager(TaskManager)(include_path=str(tasks_path()), metadata=metadata)


def test_lm_eval_indexes_every_task_and_the_group() -> None:
    manager = lm_eval_task_manager()  # one full index serves both checks
    assert {spec.name for spec in all_specs()} <= set(manager.all_tasks)
    assert GROUP_NAME in manager.all_groups


def test_task_docs_carry_the_papers_prompts() -> None:
    loaded = task_manager(judge="off").load(["ccpt_pi_canceled"])
    task = loaded["tasks"]["ccpt_pi_canceled"]
    docs = list(task.test_docs())
    assert len(docs) == 167
    spec = CcptTaskSpec("pi_canceled")
    assert task.doc_to_text(docs[0]).startswith("Instructions:\n1. You are given a combination")
    assert docs[0]["prompt"] == user_prompt(spec, _item(docs[0]))
    assert docs[0]["system_prompt"] == SYSTEM_PROMPT


def _item(doc):
    from conceptcomb.ccpt.data import CcptItem

    return CcptItem.from_doc(doc)


def test_group_holds_the_four_tasks() -> None:
    loaded = task_manager(judge="off").load([GROUP_NAME])
    assert set(loaded["tasks"]) == {
        "ccpt_pi_emergent",
        "ccpt_pi_canceled",
        "ccpt_npc_emergent",
        "ccpt_tp",
    }


def test_missing_judge_key_fails_before_generation(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(Exception, match="OPENAI_API_KEY is not set"):
        task_manager().load(["ccpt_pi_emergent"])


@pytest.mark.slow
def test_smollm2_run_reports_the_papers_metrics(pi_emergent_run) -> None:
    run = pi_emergent_run
    for name in ("R_HMP", "R_NP", "E"):
        assert re.search(rf"\|judged\|\s*0\|{name}\s*\|", run.table.replace(" ", "")), name
        assert math.isfinite(run.metrics[f"{name},judged"])
    assert run.metrics["format_failures,judged"] < 4, "nothing was judged: the test proves nothing"
    assert run.requests > 0
    assert "judge usage [openai-chat|http://127.0.0.1" in run.table
    record = run.samples[0]  # logged samples keep the raw reply and the judged record
    assert record["doc"]["task"] == "ccpt_pi_emergent" and record["resps"][0][0]
    assert "noun_phrase" in record["filtered_resps"][0]


@pytest.mark.slow
def test_identical_rerun_asks_the_judge_nothing(
    pi_emergent_run, smollm2_folder: Path, tmp_path: Path
) -> None:
    """The same lm-eval run of ccpt_pi_emergent again, with the same judge settings and
    cache: the judge is asked nothing, the numbers are the same. A second lm_eval process of
    SmolLM2 on 4 items (the point of the test): 74 s on 2 cores at load 9-10 (2026-12-06)."""
    run = pi_emergent_run
    before = run.server.stats.requests
    _, again, _, _ = run_lm_eval(smollm2_folder, tmp_path, "ccpt_pi_emergent", run.metadata, 4)
    assert run.server.stats.requests == before
    assert again == run.metrics


@pytest.mark.slow
def test_type_prediction_runs_without_a_judge(smollm2_folder: Path, tmp_path: Path) -> None:
    _, metrics, samples, _ = run_lm_eval(smollm2_folder, tmp_path, "ccpt_tp", {}, limit=2)
    assert 0.0 <= metrics["accuracy,none"] <= 100.0
    assert len(samples) == 2
