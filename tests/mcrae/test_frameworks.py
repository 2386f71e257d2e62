"""McRae in lm-eval and Inspect: discovery, mockllm runs, a real SmolLM2 run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, get_model

from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path
from conceptcomb.mcrae.data import TERMS_OF_USE
from conceptcomb.mcrae.inspect_tasks import TASKS
from conceptcomb.mcrae.metrics import metric_infos
from conceptcomb.mcrae.prompts import user_prompt
from conceptcomb.mcrae.rescore import rescore
from tests.conftest import LmEvalOutput, read_jsonl
from tests.mcrae.test_metrics import gold_phrases

pytestmark = pytest.mark.shared_data


TASK = "mcrae_esslli44"


def test_lm_eval_builds_the_task_with_its_prompt_and_metrics() -> None:
    from lm_eval.tasks import TaskManager

    include = None if lm_eval_has_our_tasks() else str(tasks_path())
    manager = TaskManager(include_path=include)
    assert {"mcrae_esslli44", "mcrae_all"} <= set(manager.all_tasks)
    task = manager.load([TASK])["tasks"][TASK]
    docs = list(task.test_docs())
    assert [doc["concept"] for doc in docs][:3] == ["chicken", "eagle", "duck"]
    assert task.doc_to_text(docs[0]) == user_prompt("chicken")
    assert task.config.generation_kwargs["until"] == []
    assert task.config.metadata["terms_of_use"] == TERMS_OF_USE
    names = [entry["metric"] for entry in task.config.metric_list]
    assert names[:3] == ["P@10", "P@20", "P@30"]


def mock_run(task_name: str, replies: list[str], log_dir: Path, **options) -> EvalLog:
    outputs = [ModelOutput.from_content(model="mockllm/model", content=r) for r in replies]
    logs = inspect_eval(
        TASKS[task_name](**options),
        model=get_model("mockllm/model", custom_outputs=outputs),
        limit=len(replies),
        max_samples=1,  # mockllm hands out its outputs in order
        display="none",
        log_dir=str(log_dir),
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def means(log: EvalLog) -> dict[str, float]:
    return {score.name: score.metrics["mean"].value for score in log.results.scores}


def test_inspect_gold_phrases_score_one(esslli_golds, tmp_path: Path) -> None:
    golds = list(esslli_golds.values())
    replies = ["\n".join(gold_phrases(gold)) for gold in golds]
    values = means(mock_run(TASK, replies, tmp_path))
    assert values["P@10"] == pytest.approx((43 + 0.9) / 44)
    assert values["R@10"] == 1.0 and values["P@20"] == pytest.approx(values["P@10"] / 2)
    assert set(values) == {info.name for info in metric_infos()}


def test_inspect_tie_rule_option(tmp_path: Path) -> None:
    log = mock_run(TASK, ["wings\nclaws"] * 2, tmp_path, tie_rule="all_tied")
    assert log.eval.task_args["tie_rule"] == "all_tied"
    assert log.eval.metadata["terms_of_use"] == TERMS_OF_USE
    # chicken: wings hit; eagle: wings and (tied-in) has_claws hit; 11 gold features.
    assert means(log)["P@10"] == pytest.approx((0.1 + 0.2) / 2)


@pytest.mark.slow
def test_smollm2_in_lm_eval_then_rescored_and_replayed_in_inspect(
    mcrae_lm_eval: LmEvalOutput, tmp_path: Path
) -> None:
    """The acceptance command on 2 concepts (the session's `mcrae_lm_eval`, tests/conftest.py,
    which the McRae evidence tests bundle); its replies give the same numbers everywhere.
    The session's first user of that run pays it: 118 s of setup here with this module
    alone, the SmolLM2 folder's conversion included (on 2 cores at load 9-10, 2026-12-06)."""
    out = mcrae_lm_eval.out
    metrics = json.loads(next(out.rglob("results_*.json")).read_text())["results"][TASK]
    samples_file = next(out.rglob(f"samples_{TASK}_*.jsonl"))
    table = mcrae_lm_eval.table
    for name in ("P@10", "P@20", "P@30"):
        assert f"|{name}" in table.replace(" ", ""), name
    assert "Terms of use of the data" in table
    samples = sorted(read_jsonl(samples_file), key=lambda s: s["doc_id"])
    assert len(samples) == 2 and all(s["resps"][0][0].strip() for s in samples)
    assert metrics["n_properties,none"] > 0, "SmolLM2 listed nothing: the test proves nothing"
    # Post-hoc rescoring of the log gives lm-eval's numbers.
    rescored = rescore(TASK, samples_file)
    for info in metric_infos():
        assert math.isclose(rescored[info.name], metrics[f"{info.name},none"], abs_tol=1e-9)
    # The same replies through Inspect's scorer: the same numbers.
    replies = [sample["resps"][0][0] for sample in samples]
    values = means(mock_run(TASK, replies, tmp_path / "inspect"))
    for info in metric_infos():
        assert math.isclose(values[info.name], metrics[f"{info.name},none"], abs_tol=1e-9)


def test_mcrae_scorer_matches_a_reply_against_the_concepts_gold(esslli_golds, tmp_path) -> None:
    """The scorer by itself, on a sample of the real task: a reply listing the concept's
    gold features scores P@10 = 1 and keeps the properties it parsed; an unrelated one 0."""
    from inspect_ai import Task

    from conceptcomb.mcrae.inspect_adapter import mcrae_scorer

    sample = TASKS[TASK]().dataset[0]  # chicken
    gold = "\n".join(gold_phrases(esslli_golds[sample.id]))
    for reply, p10 in ((gold, 1.0), ("- made of stone\n- a planet", 0.0)):
        task = Task(dataset=[sample], scorer=mcrae_scorer())
        outputs = [ModelOutput.from_content(model="mockllm/model", content=reply)]
        model = get_model("mockllm/model", custom_outputs=outputs)
        [log] = inspect_eval(task, model=model, display="none", log_dir=str(tmp_path))
        assert log.status == "success", log.error
        [score] = log.samples[0].scores.values()
        assert score.value["P@10"] == p10
        assert score.metadata["properties"] == score.answer.split("\n")
        assert len(score.metadata["properties"]) == len(reply.split("\n"))
