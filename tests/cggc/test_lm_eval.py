"""CGGC in lm-eval: the sampler inside lm-eval's own prompt building, a real run."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from conceptcomb.cggc.data import CggcItem, load_dataset
from conceptcomb.cggc.demos import check_demonstrations
from conceptcomb.cggc.metrics import METRIC_NAMES
from conceptcomb.cggc.prompts import plain_prompt
from conceptcomb.cggc.tasks import GROUP_NAME, TaskOptions, all_specs, spec_by_name
from conceptcomb.cli import main
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from tests.ccpt.test_lm_eval import task_manager
from tests.conftest import read_jsonl

LOADED = ("cggc_id", "cggc_ood", "cggc_ood_easy2hard", "cggc_ood_script")


@pytest.fixture(scope="module")
def manager(built_dir: Path) -> TaskManager:
    return task_manager(data_dir=str(built_dir))


@pytest.fixture(scope="module")
def tasks(manager: TaskManager) -> dict:
    return manager.load(list(LOADED))["tasks"]  # indexing takes seconds: load once


def test_lm_eval_indexes_every_task_and_the_group(manager: TaskManager) -> None:
    assert {spec.name for spec in all_specs()} <= set(manager.all_tasks)
    assert GROUP_NAME in manager.all_groups


def by_id(data_dir: Path) -> dict[str, CggcItem]:
    dataset = load_dataset(data_dir)
    return {item.item_id: item for item in (*dataset.pool, *dataset.test)}


@pytest.mark.parametrize("name", ["cggc_id", "cggc_ood_easy2hard", "cggc_ood_script"])
def test_lm_eval_builds_the_papers_prompt_with_our_sampler(
    built_dir: Path, tasks: dict, name: str
) -> None:
    task = tasks[name]
    spec, items = spec_by_name(name), by_id(built_dir)
    docs = list(task.test_docs())
    assert docs and task.config.num_fewshot == 4
    for doc in docs[:10]:
        context = task.fewshot_context(doc, num_fewshot=4)
        item = items[doc["item_id"]]
        demos = [items[i] for i in doc["demonstration_ids"]]
        assert context == plain_prompt(item, demos, spec.prompt_style, seed=0)
        options = TaskOptions.resolve({"data_dir": str(built_dir)})
        assert check_demonstrations(item, demos, options.demo_spec(spec)) == []


@pytest.mark.parametrize("name", ["cggc_ood", "cggc_ood_easy2hard"])
def test_chat_turns_match_inspects(built_dir: Path, tasks: dict, name: str) -> None:
    """lm-eval's multi-turn prompt equals the messages Inspect's few-shot solver builds."""
    import asyncio

    from inspect_ai.model import ModelName
    from inspect_ai.solver import TaskState

    from conceptcomb.cggc.inspect_adapter import cggc_dataset, cggc_fewshot

    task = tasks[name]
    doc = next(iter(task.test_docs()))
    messages = task.fewshot_context(
        doc, 4, apply_chat_template=True, fewshot_as_multiturn=True,
        chat_template=lambda msgs, **_: json.dumps(msgs),
    )  # fmt: skip
    spec, options = spec_by_name(name), TaskOptions.resolve({"data_dir": str(built_dir)})
    sample = cggc_dataset(spec, options)[0]
    assert sample.id == doc["item_id"]
    state = TaskState(
        ModelName("mockllm/model"), sample.id, 1, sample.input, list(sample.input),
        metadata=dict(sample.metadata or {}),
    )  # fmt: skip
    state = asyncio.run(cggc_fewshot(spec, options)(state, None))  # type: ignore[arg-type]
    assert json.loads(messages) == [{"role": m.role, "content": m.text} for m in state.messages]
    assert state.metadata["fewshot_ids"] == doc["demonstration_ids"]


def test_parameters_reach_the_sampler(built_dir: Path, tasks: dict) -> None:
    plain = tasks["cggc_ood"]
    seeded = task_manager(data_dir=str(built_dir), seed=5).load(["cggc_ood"])["tasks"]["cggc_ood"]
    a, b = next(iter(plain.test_docs())), next(iter(seeded.test_docs()))
    assert a["item_id"] == b["item_id"] and a["seed"] == 0 and b["seed"] == 5
    assert plain.fewshot_context(a, 4) != seeded.fewshot_context(b, 4)


def run_lm_eval(model: Path, out: Path, tasks: str, metadata: dict, limit: int = 5):
    command = lm_eval_command(
        tasks, model="hf", model_args=f"pretrained={model}", limit=limit, log_samples=True,
        output_path=out, metadata=metadata, program=OUR_LM_EVAL,
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_smollm2_easy_to_hard_run_logs_ordered_demonstrations(
    smollm2_folder: Path, built_dir: Path, tmp_path: Path, capsys
) -> None:
    """Easy-to-hard demonstrations in a real run, logged and shown in that order. One
    lm_eval process loading SmolLM2 (hf runner, one item at a time), 5 items each of two
    tasks of the small build generated and scored (METEOR's JVM), then `conceptcomb cggc
    report` in this process: 67 s on 2 cores at load 4-7 (2026-12-06)."""
    table = run_lm_eval(
        smollm2_folder, tmp_path, "cggc_ood_easy2hard,cggc_id", {"data_dir": str(built_dir)}
    )
    for name in METRIC_NAMES:
        assert f"|{name}" in table.replace(" ", ""), name
    items, spec = by_id(built_dir), spec_by_name("cggc_ood_easy2hard")
    samples = read_jsonl(next(tmp_path.rglob("samples_cggc_ood_easy2hard_*.jsonl")))
    assert len(samples) == 5
    for sample in samples:
        doc, prompt = sample["doc"], sample["arguments"]["gen_args_0"]["arg_0"]
        demos = [items[i] for i in doc["demonstration_ids"]]
        assert len(demos) == 4 and doc["structure_type"] in ("A", "B", "C")
        types = [d.structure for d in demos]
        assert types == sorted(types), types  # A before B before C
        positions = [prompt.index(f"sentence: {d.target}\n") for d in demos]
        assert positions == sorted(positions)  # shown in that order
        demo_spec = TaskOptions().demo_spec(spec)
        assert check_demonstrations(items[doc["item_id"]], demos, demo_spec) == []
        assert all(isinstance(sample[m], float | list) for m in METRIC_NAMES)
    results = json.loads(next(tmp_path.rglob("results_*.json")).read_text())["results"]
    for name in ("bleu4", "meteor", "cider", "rougeL", "coverage"):
        assert math.isfinite(results["cggc_ood_easy2hard"][f"{name},none"])
    assert math.isnan(results["cggc_id"]["spice,none"]) or results["cggc_id"]["spice,none"] >= 0
    assert main(["cggc", "report", str(tmp_path)]) == 0
    report = capsys.readouterr().out
    assert "cggc_ood_easy2hard" in report and "cggc_id" in report and "METEOR" in report
