"""AbsPyramid in lm-eval: discovery, prompts as lm-eval renders them, a real run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.docs import build_docs
from conceptcomb.abspyramid.lm_eval_hooks import load_dataset
from conceptcomb.abspyramid.tasks import GROUP_NAME, all_specs, default_specs, spec_by_name
from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path
from conceptcomb.common.errors import ConfigError, DataUnavailableError

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def manager(abspyramid_dir: Path) -> TaskManager:
    """Indexing takes seconds: one task manager for the module, reading the test folder."""
    include = None if lm_eval_has_our_tasks() else str(tasks_path())
    return TaskManager(include_path=include, metadata={"data_dir": str(abspyramid_dir)})


def test_lm_eval_indexes_every_task_and_the_group(manager: TaskManager) -> None:
    assert {spec.name for spec in all_specs()} <= set(manager.all_tasks)
    assert GROUP_NAME in manager.all_groups
    loaded = manager.load([GROUP_NAME])["tasks"]
    assert set(loaded) == {spec.name for spec in default_specs()}


def test_loglikelihood_task_scores_no_and_yes_after_the_prompt(manager: TaskManager) -> None:
    task = manager.load(["abspyramid_det_noun"])["tasks"]["abspyramid_det_noun"]
    docs = list(task.test_docs())
    assert len(docs) == 20
    task.build_all_requests(limit=1, rank=0, world_size=1)
    (context, no), (_, yes) = (instance.arguments for instance in task.instances)
    assert context == docs[0]["prompt"]
    assert (no, yes) == (" No", " Yes")
    assert task.doc_to_target(docs[0]) == docs[0]["label"] == 0


def test_in_context_prompt_shows_ten_train_demonstrations(
    manager: TaskManager, abspyramid_dir: Path
) -> None:
    task = manager.load(["abspyramid_det_verb_icl"])["tasks"]["abspyramid_det_verb_icl"]
    doc = next(iter(task.test_docs()))
    text = task.fewshot_context(doc, 10)
    assert text.startswith('Identify the hypernym of a specific verb and provide a "Yes"')
    blocks = text.split("\n\n")
    assert len(blocks) == 12  # instruction, 10 demonstrations, the question
    # The item's own draw (seed 0 by default), the one Inspect shows: verb train records.
    core = build_docs(spec_by_name("abspyramid_det_verb_icl"), "test", abspyramid_dir)[0]
    assert doc["demos"] == core["demos"]
    assert blocks[1:11] == [f"{d['question']} {d['answer']}" for d in core["demos"]]
    assert all(d["item_id"].startswith("verb:train:") for d in doc["demos"])
    assert blocks[-1] == doc["question"] == doc["query"]
    # With a chat template: the system instruction (without the blank line that ends it in
    # the plain-text layout above), then user/assistant turns.
    chat = task.fewshot_context(
        doc, 10, apply_chat_template=True, fewshot_as_multiturn=True,
        chat_template=lambda messages, add_generation_prompt: json.dumps(messages),
    )  # fmt: skip
    messages = json.loads(chat)
    assert [x["role"] for x in messages[:3]] == ["system", "user", "assistant"]
    assert messages[0] == {"role": "system", "content": doc["instruction"]}
    assert [x["content"] for x in messages[2:21:2]] == [d["answer"] for d in doc["demos"]]
    assert messages[-1] == {"role": "user", "content": doc["question"]}


def test_all_relations_show_demonstrations_of_the_items_own_type(manager: TaskManager) -> None:
    task = manager.load(["abspyramid_det_all_icl"])["tasks"]["abspyramid_det_all_icl"]
    docs = list(task.test_docs())
    event_doc = next(doc for doc in docs if doc["type"] == "event")
    text = task.fewshot_context(event_doc, 10)
    assert text.startswith("Identify abstract descriptions of specific sentences")
    assert text.count("as an abstract description of the sentence") == 11


def test_cot_with_ten_demonstrations(manager: TaskManager) -> None:
    """Table 4's CoT + 10-shot: the CoT instruction, the 10 demonstrations answered Yes/No,
    then the item's question with the CoT steps; read and budgeted as CoT."""
    name = "abspyramid_det_noun_icl_cot"
    task = manager.load([name, "abspyramid_det_noun_icl", "abspyramid_det_noun_cot"])["tasks"]
    doc = next(iter(task[name].test_docs()))
    icl = next(iter(task["abspyramid_det_noun_icl"].test_docs()))
    cot = next(iter(task["abspyramid_det_noun_cot"].test_docs()))
    assert doc["demos"] == icl["demos"]  # the same draw as _icl
    blocks = task[name].fewshot_context(doc, 10).split("\n\n")
    assert len(blocks) == 12
    instruction = (
        "Identify the hypernym of a specific noun. Hypernyms are words with a broad meaning, "
        "which more specific words fall under."
    )
    steps = "Step 1: Let's think about the meanings of those words. Step 2: Provide a "
    assert blocks[0] == doc["instruction"] == instruction
    assert blocks[1:11] == [f"{d['question']} {d['answer']}" for d in doc["demos"]]
    assert blocks[-1] == doc["query"] == f'{doc["question"]} {steps}"Yes" or "No" response.'
    # Without the demonstrations: the zero-shot CoT prompt, word for word.
    assert f"{blocks[0]} {blocks[-1]}" == cot["prompt"]
    assert task[name].config.generation_kwargs["max_gen_toks"] == 512


def test_seed_comes_from_the_metadata(abspyramid_dir: Path) -> None:
    """lm-eval passes --metadata to the dataset hook: the seed changes the draw, one line
    when it is not a number."""

    def demos(seed: object) -> list:
        docs = load_dataset("abspyramid_det_event_icl", data_dir=str(abspyramid_dir), seed=seed)
        return [doc["demos"] for doc in docs["test"]]

    assert demos(None) == demos(0) != demos(5)
    with pytest.raises(ConfigError, match=r"^seed='five': .*non-negative integer[^\n]*$"):
        load_dataset("abspyramid_det_event_icl", data_dir=str(abspyramid_dir), seed="five")


def test_offline_without_a_folder_fails_when_the_dataset_is_built(monkeypatch, fresh_cache) -> None:
    """lm-eval calls this hook with --metadata; no data_dir and nothing cached: one line."""
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR", raising=False)
    with pytest.raises(DataUnavailableError, match="ZhaoweiWang/AbsPyramid at revision 8d48c28"):
        load_dataset("abspyramid_gen_verb")


@pytest.mark.slow
def test_smollm2_run_prints_the_papers_metrics(lm_eval_run: dict) -> None:
    """The real run prints the paper's metrics and logs what they are computed from. The
    first user in the session of its lm-eval run (`lm_eval_run`, tests/abspyramid/
    conftest.py: `abspyramid_lm_eval`, made once per session, shared with the evidence tests)
    pays that run: 110 s of setup in test_inspect.py's
    test_same_outputs_same_numbers_in_both_frameworks (on 2 cores at load 9-10.5,
    2026-12-06)."""
    table = lm_eval_run["table"].replace(" ", "")
    for name in (m.ACCURACY, m.MACRO_F1, m.AUC, m.BLEU1, m.BLEU2, m.ROUGE2, m.ROUGE_L, m.METEOR):
        assert f"|{name}|" in table
    detection = lm_eval_run["results"]["abspyramid_det_noun"]
    assert 0 <= detection["auc,none"] <= 100 and 0 <= detection["macro_f1,none"] <= 100
    assert detection["unparsable,none"] == 0  # log-likelihoods always give an answer
    generation = lm_eval_run["results"]["abspyramid_gen_noun"]
    assert all(math.isfinite(generation[f"{k},none"]) for k in (m.BLEU1, m.METEOR, m.ROUGE_L))
    # The samples keep the reply and the per-item values behind the corpus metrics.
    sample = lm_eval_run["samples"]["abspyramid_gen_noun"][0]
    prediction, references = sample[m.BLEU1]
    assert references == sample["doc"]["references"] and isinstance(prediction, str)
