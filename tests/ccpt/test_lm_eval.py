"""CCPT in lm-eval: YAML in sync, discovery, and real runs of SmolLM2 with a loopback judge."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from conceptcomb.ccpt.lm_eval_yaml import stale_files
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, user_prompt
from conceptcomb.ccpt.tasks import GROUP_NAME, CcptTaskSpec, all_specs
from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path
from conceptcomb.testing.judge_server import LoopbackServer
from tests.conftest import read_jsonl


def include_args() -> list[str]:
    return [] if lm_eval_has_our_tasks() else ["--include_path", str(tasks_path())]


def task_manager(**metadata) -> TaskManager:
    include = None if lm_eval_has_our_tasks() else str(tasks_path())
    return TaskManager(include_path=include, metadata=metadata)


def test_generated_yaml_is_up_to_date() -> None:
    assert stale_files() == [], "run: python -m conceptcomb.ccpt.lm_eval_yaml"


def test_lm_eval_indexes_every_task_and_the_group() -> None:
    names = set(task_manager().all_tasks)
    assert {spec.name for spec in all_specs()} <= names
    assert GROUP_NAME in task_manager().all_groups


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


def run_lm_eval(smollm2_gguf: Path, out: Path, task: str, metadata: dict, limit: int = 3):
    command = [
        "lm_eval",
        "--model", "hf",
        "--model_args", f"pretrained={smollm2_gguf.parent},gguf_file={smollm2_gguf.name}",
        "--tasks", task,
        "--limit", str(limit),
        "--apply_chat_template",
        "--gen_kwargs", "max_gen_toks=48",
        "--log_samples",
        "--output_path", str(out),
        "--metadata", json.dumps(metadata),
        *include_args(),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    samples = read_jsonl(next(out.rglob(f"samples_{task}_*.jsonl")))
    return done.stdout, results["results"][task], samples


@pytest.mark.slow
def test_smollm2_run_with_loopback_judge_then_cached_rerun(
    smollm2_gguf: Path, tmp_path: Path, fresh_cache: Path
) -> None:
    with LoopbackServer() as server:
        metadata = {"judge_base_url": server.base_url, "judge_model": "gpt-4o"}
        table, metrics, samples = run_lm_eval(
            smollm2_gguf, tmp_path / "a", "ccpt_pi_emergent", metadata
        )
        asked = server.stats.requests
        for name in ("R_HMP", "R_NP", "E"):
            assert f"|{name}" in table.replace(" ", "")
            assert math.isfinite(metrics[f"{name},judged"])
        assert metrics["format_failures,judged"] + metrics.get("judge_failures,judged", 0) < 3
        assert asked > 0
        assert "judge usage" in table
        # The same run again: everything is answered from the on-disk cache.
        _, again, _ = run_lm_eval(smollm2_gguf, tmp_path / "b", "ccpt_pi_emergent", metadata)
        assert server.stats.requests == asked
        assert again == metrics
    # Logged samples keep the raw reply and the judged record.
    record = samples[0]
    assert record["doc"]["task"] == "ccpt_pi_emergent" and record["resps"][0][0]
    assert "noun_phrase" in record["filtered_resps"][0]


@pytest.mark.slow
def test_type_prediction_runs_without_a_judge(smollm2_gguf: Path, tmp_path: Path) -> None:
    _, metrics, samples = run_lm_eval(smollm2_gguf, tmp_path, "ccpt_tp", {}, limit=2)
    assert 0.0 <= metrics["accuracy,none"] <= 100.0
    assert len(samples) == 2
