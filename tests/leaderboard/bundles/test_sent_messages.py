"""The chat messages a bundle records for an lm-eval item (issue 40, item 5): lm-eval logs
the prompt a local model received as its chat template's text, not the messages, so the
bundle renders the task's messages from the logged doc and keeps them only where that text
holds them, in order; an API chat model's prompt is the messages themselves.

On real docs of the shipped CGGC dataset (an instruction, four demonstrations as turns, the
item) and SmolLM2's chat template (ChatML, what the packaged model's tokenizer applies)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.cggc.data import load_dataset
from conceptcomb.cggc.docs import chat_messages, demonstrations, item_doc
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from conceptcomb.common.evidence import RawItem, appear_in_order, evidence_turns
from conceptcomb.common.runs import TaskRun
from conceptcomb.leaderboard.bundles.bundle import lm_eval_turns
from conceptcomb.leaderboard.exports.eee import sent_input

TASK = "cggc_ood"


def chatml(turns: list[tuple[str, str]]) -> str:
    """SmolLM2's chat template: each message ``<|im_start|>role\\ntext<|im_end|>``, then the
    assistant's turn opened."""
    body = "".join(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns)
    return body + "<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def doc() -> dict:
    """The first test item the pool can give demonstrations, as the task's doc."""
    spec, options = spec_by_name(TASK), TaskOptions()
    dataset = load_dataset(None)
    for item in dataset.test:
        demos = demonstrations(item, spec, options, dataset)
        if demos:
            return item_doc(item, demos, spec, options)
    raise AssertionError("no test item with demonstrations")


def raw_item(doc: dict, prompt_text: str | list[str]) -> RawItem:
    arguments = {"gen_args_0": {"arg_0": prompt_text, "arg_1": {"until": ["\n\n"]}}}
    return RawItem(doc, ["A dog runs."], None, {}, [0, arguments])


def task_run() -> TaskRun:
    return TaskRun(TASK, "cggc", "1.1", {}, 1, 1, {}, "", Path("results.json"))


CHAT = {"chat_template_sha": "f3a1...", "fewshot_as_multiturn": True}


def test_messages_rendered_from_the_doc_are_kept_where_the_prompt_holds_them(doc) -> None:
    turns = chat_messages(TASK, doc)
    assert [role for role, _ in turns] == ["system", *["user", "assistant"] * 4, "user"]
    kept = lm_eval_turns(task_run(), raw_item(doc, chatml(turns)), CHAT)
    assert kept == [list(turn) for turn in turns]
    evidence = {"prompt": [0, {}], "messages": kept}
    raw, sent = sent_input(evidence)
    assert sent == kept and json.loads(raw)[0] == {"role": "system", "content": turns[0][1]}


def test_messages_the_prompt_does_not_hold_are_not_recorded(doc) -> None:
    turns = chat_messages(TASK, doc)
    one_demonstration_less = chatml([turns[0], *turns[3:]])
    assert not appear_in_order([list(t) for t in turns], one_demonstration_less)
    assert lm_eval_turns(task_run(), raw_item(doc, one_demonstration_less), CHAT) is None
    # without a chat template the model received plain text: no messages, the text itself
    plain = "".join(text for _, text in turns)
    assert lm_eval_turns(task_run(), raw_item(doc, plain), {"chat_template_sha": None}) is None
    assert sent_input({"prompt": raw_item(doc, plain).prompt}) == (plain, None)
    # demonstrations folded into one user message (--fewshot_as_multiturn false)
    folded = {**CHAT, "fewshot_as_multiturn": False}
    assert lm_eval_turns(task_run(), raw_item(doc, chatml(turns)), folded) is None


def test_an_api_models_prompt_is_the_messages_it_sent(doc) -> None:
    turns = [["system", "Answer."], ["user", "concepts: dog, run"]]
    sent = json.dumps([{"role": role, "content": text} for role, text in turns])
    item = raw_item(doc, [sent])  # lm-eval logs an API model's chat as a one-string list
    assert lm_eval_turns(task_run(), item, {"chat_template_sha": None}) == turns
    assert evidence_turns({"prompt": item.prompt, "messages": turns}) == turns


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("/home/me/.cache/conceptcomb/smollm2-135m-instruct-hf", "smollm2-135m-instruct-hf"),
        ("pretrained=/home/me/m/smol,dtype=float32", "pretrained=smol,dtype=float32"),
        ("~/data/ccpt", "ccpt"),
        ("openai-api/loopback//home/me/models/smol", "openai-api/loopback/smol"),
        (
            "local-expected-rating|/root/.cache/x/smollm2-hf|1.0",
            "local-expected-rating|smollm2-hf|1.0",
        ),
        (
            "results in /tmp/a/results_x.json and /tmp/b/r.json",
            "results in results_x.json and r.json",
        ),
        ("file:///home/me/x.json", "x.json"),
        ("C:\\Users\\me\\model", "model"),
        # not local paths: URLs, Hub ids, a slash between words
        ("openai-chat|http://127.0.0.1:9/v1/|gpt-4o", "openai-chat|http://127.0.0.1:9/v1/|gpt-4o"),
        ("https://huggingface.co/datasets/x/y", "https://huggingface.co/datasets/x/y"),
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct"),
        ("github.com/seokwon99/CCPT", "github.com/seokwon99/CCPT"),
        ("R_HMP / R_NP, E/C", "R_HMP / R_NP, E/C"),
    ],
)
def test_a_bundle_keeps_a_local_path_as_its_last_part(text: str, written: str) -> None:
    from conceptcomb.leaderboard.bundles.bundle import without_local_paths

    assert without_local_paths({"model": {"name": text}}) == {"model": {"name": written}}
