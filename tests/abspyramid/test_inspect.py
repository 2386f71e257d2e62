"""AbsPyramid in Inspect: offline mockllm runs, logprob-based P(Yes), parity with lm-eval."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    Logprob,
    Logprobs,
    ModelOutput,
    TopLogprob,
    get_model,
)

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.docs import build_docs
from conceptcomb.abspyramid.inspect_tasks import TASKS
from conceptcomb.abspyramid.tasks import spec_by_name
from conceptcomb.common.errors import ConfigError
from conceptcomb.testing.commands import inspect_eval_command
from tests.conftest import AbspyramidInspectRun

pytestmark = pytest.mark.shared_data


def output(text: str, alternatives: list[tuple[str, float]] | None = None) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm/model", content=text)
    if alternatives:
        tops = [TopLogprob(token=token, logprob=lp) for token, lp in alternatives]
        first = Logprob(token=tops[0].token, logprob=tops[0].logprob, top_logprobs=tops)
        out.choices[0].logprobs = Logprobs(content=[first])
    return out


def run(task: str, outputs: list[ModelOutput], data_dir: Path, log_dir: Path) -> EvalLog:
    logs = inspect_eval(
        TASKS[task](data_dir=str(data_dir)),
        model=get_model("mockllm/model", custom_outputs=outputs),
        limit=len(outputs),
        max_samples=1,  # mockllm hands out its outputs in order
        display="none",
        log_dir=str(log_dir),
    )
    return logs[0]


def values(log: EvalLog) -> dict[str, float]:
    """Every reported value: means of per-item metrics, sums of counts, corpus metrics."""
    assert log.status == "success", log.error
    found = {}
    for score in log.results.scores:
        for key, metric in score.metrics.items():
            if key == "stderr":
                continue
            found[score.name if key in ("mean", "conceptcomb/total") else key] = metric.value
    return found


def test_cli_mockllm_run_offline(abspyramid_dir: Path, tmp_path: Path) -> None:
    command = inspect_eval_command(
        "conceptcomb/abspyramid_det_noun_zs", model="mockllm/model",
        task_args={"data_dir": abspyramid_dir}, limit=3, log_dir=tmp_path, display="plain",
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for name in ("accuracy", "macro_f1", "unparsable"):
        assert name in done.stdout


def test_loglikelihood_task_reads_p_yes_from_first_token_logprobs(
    abspyramid_dir: Path, tmp_path: Path
) -> None:
    p_yes = [0.9, 0.2, 0.6, 0.55, 0.3, 0.1]
    outputs = [
        output("Yes", [("Yes", math.log(p)), (" no", math.log(1 - p)), ("Maybe", -9.0)])
        for p in p_yes
    ]
    got = values(run("abspyramid_det_noun", outputs, abspyramid_dir, tmp_path))
    docs = build_docs(spec_by_name("abspyramid_det_noun"), "test", abspyramid_dir)[:6]
    expected = m.detection_metrics(
        [m.from_probability(doc["label"], p) for doc, p in zip(docs, p_yes, strict=True)]
    )
    assert got == pytest.approx(expected)


def test_loglikelihood_task_needs_logprobs(abspyramid_dir: Path, tmp_path: Path) -> None:
    log = run("abspyramid_det_verb", [output("Yes")], abspyramid_dir, tmp_path)
    assert log.status == "error"
    assert "returned no log probabilities" in str(log.error)
    assert "abspyramid_det_<relation>_zs" in str(log.error)


def test_generation_metrics_match_the_core(abspyramid_dir: Path, tmp_path: Path) -> None:
    replies = [" dog\nsecond line", " a doctor", "\n", " fruit juice", " computer"]
    got = values(run("abspyramid_gen_noun", [output(r) for r in replies], abspyramid_dir, tmp_path))
    docs = build_docs(spec_by_name("abspyramid_gen_noun"), "test", abspyramid_dir)[:5]
    predictions = ["dog", "a doctor", "", "fruit juice", "computer"]
    expected = m.generation_metrics(predictions, [doc["references"] for doc in docs])
    assert got == pytest.approx(expected)
    assert got[m.EMPTY_PREDICTIONS] == 1


def test_in_context_samples_are_chat_turns(abspyramid_dir: Path) -> None:
    task = TASKS["abspyramid_det_event_icl"](data_dir=str(abspyramid_dir))
    sample = task.dataset[0]
    demos = sample.metadata["demos"]
    assert isinstance(sample.input[0], ChatMessageSystem)
    assert sample.input[0].content.startswith("Identify abstract descriptions")
    assert len(sample.input) == 22 and len(demos) == 10
    assert [message.text for message in sample.input[1:21:2]] == [d["question"] for d in demos]
    assert [message.text for message in sample.input[2:21:2]] == [d["answer"] for d in demos]
    assert all(isinstance(message, ChatMessageAssistant) for message in sample.input[2:21:2])
    assert sample.input[-1].text == sample.metadata["question"]
    # The item's own seeded draw of event train records, as lm-eval shows it.
    assert {d["type"] for d in demos} == {"event"}
    core = build_docs(spec_by_name("abspyramid_det_event_icl"), "test", abspyramid_dir)
    assert demos == core[0]["demos"]


def test_seeded_draw_per_item(abspyramid_dir: Path) -> None:
    """One seed: the same samples; another seed: other demonstrations; never the item."""

    def inputs(seed: int) -> list[list[str]]:
        task = TASKS["abspyramid_det_all_icl"](data_dir=str(abspyramid_dir), seed=seed)
        return [[message.text for message in sample.input] for sample in task.dataset]

    assert inputs(0) == inputs(0) != inputs(2)
    for sample in TASKS["abspyramid_det_all_icl"](data_dir=str(abspyramid_dir)).dataset:
        demos, item = sample.metadata["demos"], sample.metadata
        assert len(demos) == 10 and {d["type"] for d in demos} == {item["type"]}
        assert item["item_id"] not in {d["item_id"] for d in demos}
        assert item["question"] not in {d["question"] for d in demos}


def test_cot_with_ten_demonstrations_runs_and_reads_the_last_answer(
    abspyramid_dir: Path, tmp_path: Path
) -> None:
    name = "abspyramid_det_verb_icl_cot"
    task = TASKS[name](data_dir=str(abspyramid_dir))
    sample = task.dataset[0]
    assert sample.input[0].text.startswith("Identify the hypernym of a specific verb. Hypernyms")
    assert [message.text for message in sample.input[2:21:2]] == [
        d["answer"] for d in sample.metadata["demos"]
    ]
    assert sample.input[-1].text == sample.metadata["query"]
    assert sample.input[-1].text.startswith(sample.metadata["question"] + " Step 1: ")
    assert task.config.max_tokens == 512
    replies = [
        "Step 1: no doubt both mean moving.\nStep 2: Yes",
        "Step 1: yes, they differ.\nStep 2: No",
        "Step 1: they differ.",
    ]
    got = values(run(name, [output(r) for r in replies], abspyramid_dir, tmp_path))
    docs = build_docs(spec_by_name(name), "test", abspyramid_dir)[:3]
    parsed = [1, 0, None]  # the last line holding Yes/No, as _cot reads it
    expected = m.detection_metrics(
        [m.from_answer(doc["label"], answer) for doc, answer in zip(docs, parsed, strict=True)]
    )
    del expected[m.AUC]  # generated answers have no probability
    assert got == pytest.approx(expected)
    assert got[m.UNPARSABLE] == 1


def test_cli_cot_with_ten_demonstrations_takes_the_seed(
    abspyramid_dir: Path, tmp_path: Path
) -> None:
    command = inspect_eval_command(
        "conceptcomb/abspyramid_det_noun_icl_cot", model="mockllm/model",
        task_args={"data_dir": abspyramid_dir, "seed": 3}, limit=2, log_dir=tmp_path,
        display="plain", log_format="json",
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    log = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert log["status"] == "success" and log["eval"]["task_args"]["seed"] == 3
    spec = spec_by_name("abspyramid_det_noun_icl_cot")
    shown = [sample["metadata"]["demos"] for sample in log["samples"]]
    assert shown == [doc["demos"] for doc in build_docs(spec, "test", abspyramid_dir, 3)[:2]]
    assert shown != [doc["demos"] for doc in build_docs(spec, "test", abspyramid_dir, 0)[:2]]


def test_a_bad_seed_stops_the_task_with_one_line(abspyramid_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^seed='x': .*non-negative integer") as caught:
        inspect_eval(
            "conceptcomb/abspyramid_det_noun_icl_cot",
            task_args={"data_dir": str(abspyramid_dir), "seed": "x"},
            model="mockllm/model",
            limit=1,
            display="none",
            log_dir=str(tmp_path),
        )
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_same_outputs_same_numbers_in_both_frameworks(
    lm_eval_run: dict, abspyramid_dir: Path, tmp_path: Path
) -> None:
    """SmolLM2's outputs from the real lm-eval run, rescored in Inspect: identical metrics.
    The first user in the session of its lm-eval run (`lm_eval_run`, tests/abspyramid/
    conftest.py: `abspyramid_lm_eval`, made once per session, shared with the evidence tests)
    pays that run, the SmolLM2 folder's conversion included where no test has asked for it:
    110 s of setup here for the run of four tasks (on 2 cores at load 9-10.5; 197 s for a
    run of three tasks of this module's own at load 5-10; 2026-12-06)."""
    for task in ("abspyramid_det_noun_icl", "abspyramid_gen_noun", "abspyramid_det_noun"):
        samples = lm_eval_run["samples"][task]
        if task == "abspyramid_det_noun":  # the two log-likelihoods, as first-token logprobs
            pairs = [(float(s["resps"][0][0][0]), float(s["resps"][1][0][0])) for s in samples]
            outputs = [output("No", [("No", no), ("Yes", yes)]) for no, yes in pairs]
        else:
            outputs = [output(s["resps"][0][0]) for s in samples]
        got = values(run(task, outputs, abspyramid_dir, tmp_path / task))
        for name, value in lm_eval_run["results"][task].items():
            metric, _, kind = name.partition(",")
            if kind == "none" and not metric.endswith("_stderr") and metric != "alias":
                assert got[metric] == pytest.approx(value, nan_ok=True), (task, metric)


@pytest.mark.slow
def test_inspect_hf_model_gives_p_yes_from_logprobs(
    abspyramid_inspect: AbspyramidInspectRun,
) -> None:
    """SmolLM2 through Inspect's hf provider on 3 items of event detection: the session's
    Inspect run (`abspyramid_inspect`, tests/conftest.py, whose logs the evidence tests
    bundle). Its first user pays that run (one inspect eval process loading SmolLM2, 3 items
    of each of 4 tasks): 62 s of setup here (on 2 cores at load 9-10.5; 96 s for a run of
    this test's own of event detection alone at load 5-10; 2026-12-06)."""
    (log,) = [
        log
        for log in map(read_eval_log, list_eval_logs(str(abspyramid_inspect.logs)))
        if log.eval.task.endswith("abspyramid_det_event")
    ]
    assert log.status == "success"
    scores = [sample.scores["abspyramid"].value for sample in log.samples or []]
    assert len(scores) == 3
    assert all(0.0 <= score["p_yes"] <= 1.0 for score in scores)  # Yes/No among the top 20
    assert "auc" in {name for score in log.results.scores for name in score.metrics}
    assert "auc" in abspyramid_inspect.printed
