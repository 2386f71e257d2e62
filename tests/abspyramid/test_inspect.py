"""AbsPyramid in Inspect: offline mockllm runs, logprob-based P(Yes), parity with lm-eval."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
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
from conceptcomb.abspyramid.inspect_tasks import TASKS
from conceptcomb.abspyramid.scoring import build_docs
from conceptcomb.abspyramid.tasks import spec_by_name

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
    command = ["inspect", "eval", "conceptcomb/abspyramid_det_noun_zs", "--model", "mockllm/model",
               "-T", f"data_dir={abspyramid_dir}", "--limit", "3", "--log-dir", str(tmp_path),
               "--display", "plain"]  # fmt: skip
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
    assert isinstance(sample.input[0], ChatMessageSystem)
    assert sample.input[0].content.startswith("Identify abstract descriptions")
    assert len(sample.input) == 22
    assert [message.text for message in sample.input[2:21:2]] == [
        "Yes", "No", "Yes", "No", "Yes", "No", "Yes", "No", "Yes", "No"
    ]  # fmt: skip
    assert all(isinstance(message, ChatMessageAssistant) for message in sample.input[2:21:2])
    assert sample.input[-1].text == sample.metadata["question"]


@pytest.mark.slow
def test_same_outputs_same_numbers_in_both_frameworks(
    lm_eval_run: dict, abspyramid_dir: Path, tmp_path: Path
) -> None:
    """SmolLM2's outputs from the real lm-eval run, rescored in Inspect: identical metrics."""
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
    smollm2_inspect_model: list[str], abspyramid_dir: Path, tmp_path: Path
) -> None:
    command = [
        "inspect", "eval", "conceptcomb/abspyramid_det_event", *smollm2_inspect_model,
        "-T", f"data_dir={abspyramid_dir}", "--limit", "3",
        "--log-dir", str(tmp_path / "logs"), "--display", "plain", "--log-format", "json",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    log = json.loads(next((tmp_path / "logs").glob("*.json")).read_text())
    assert log["status"] == "success"
    scores = [sample["scores"]["abspyramid"]["value"] for sample in log["samples"]]
    assert len(scores) == 3
    assert all(0.0 <= score["p_yes"] <= 1.0 for score in scores)  # Yes/No among the top 20
    assert "auc" in done.stdout
