"""Spreading activation (section 4.1, Algorithm 1): prompts, graphs, the loop, both frameworks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.inspect_tasks import TASKS
from conceptcomb.ccpt.methods.lm_eval_hooks import build_docs
from conceptcomb.ccpt.methods.spreading import (
    SaSettings,
    jaccard_distance,
    load_graph,
    offline_trace,
    parse_concept_list,
)
from conceptcomb.ccpt.methods.spreading_prompts import (
    activation_prompt,
    filter_prompt,
    sa_user_prompt,
)
from conceptcomb.ccpt.tasks import lm_eval_method_specs, spec_by_name
from conceptcomb.common.errors import ConfigError
from conceptcomb.testing.judge_server import LoopbackServer
from tests.ccpt.test_inspect import mock_model
from tests.ccpt.test_lm_eval import task_manager

pytestmark = pytest.mark.shared_data


ITEM = CcptItem("x:0", "a boat on the rocks", "boat", "rock", "strand", "emergent")
NOFILTER = spec_by_name("ccpt_pi_emergent_sa_conceptnet_nofilter")


def test_answer_prompts_are_tables_12_and_15() -> None:
    pi = sa_user_prompt(spec_by_name("ccpt_pi_emergent_sa_llm"), ITEM, ["sea", "sail"])
    assert pi.startswith(
        "Instructions:\n1. You are given a combination of concepts and a set of relevant "
        "concepts to solve a task. Your task is to generate emergent property of a combination.\n"
    )
    assert (
        "- Combination: Brown apple\n- Relevant concepts: ['fruit', 'apple', 'core', 'cider']" in pi
    )
    assert "excluded.Likewise, “ash” describes" in pi  # Table 15 prints it so too
    assert pi.endswith(
        "Then let's begin:\n- Combination: a boat on the rocks\n"
        "- Relevant concepts: ['sea', 'sail']\n- Answer:"
    )
    npc = sa_user_prompt(spec_by_name("ccpt_npc_emergent_sa_both"), ITEM, [])
    assert (
        '5. Final answer should follow dictionary format: {"combination": '
        '"{generated_combination}", "modifier": "{generated_modifier}"}. Do not use other '
        "formatting.\n" in npc
    )
    assert "- Relevant concepts: ['counterfeit', 'worthless', 'ineffective', 'futile'," in npc
    assert npc.endswith(
        "- Head noun: boat\n- Emergent property: strand\n- Relevant concepts: []\n- Answer:"
    )
    canceled = sa_user_prompt(spec_by_name("ccpt_pi_canceled_sa_conceptnet"), ITEM, ["x"])
    assert "Relevant concepts: ['fruit', 'apple', 'core', 'cider', 'withered']" in canceled


def test_activation_and_filter_prompts_are_the_scripts() -> None:
    act = activation_prompt("boat")
    assert 'Answer in list format: ["{adjacent_concept_1}", "{adjacent_concept_2}", ...].' in act
    assert act.endswith("Your turn:\nConcept: boat\nAnswer: ")
    fil = filter_prompt(["sea", "farmer's market"], "'boat', 'rock'")
    assert fil.endswith(
        "Your turn:\nNode set: ['sea', \"farmer's market\"]\nConcepts: 'boat', 'rock'\nAnswer: "
    )
    assert 'castle. \\    \nSo the answer is ["king", "novel"]' in fil


def test_lists_are_read_as_the_script_reads_them() -> None:
    assert parse_concept_list('I keep ["Sea", " sail ", "sea"] and ["x"]') == ["sea", "sail"]
    assert parse_concept_list("no list at all") is None
    with pytest.raises(ValueError):
        parse_concept_list("[sea, sail]")


def test_jaccard_distance_compares_lemmas() -> None:
    assert jaccard_distance(["apples", "trees"], ["apple", "tree"]) == 0.0
    assert jaccard_distance(["sea", "sail"], ["seas", "wind"]) == pytest.approx(1 - 1 / 3)
    assert jaccard_distance([], []) == 0.0


def test_graphs_hold_the_authors_neighbours_and_cn100k() -> None:
    authors = load_graph("ccpt")
    assert authors.neighbours("Lettuce") == [
        "vegetable", "salad", "refrigerator", "farmer's market", "supermarket",
    ]  # fmt: skip
    wide = load_graph("cn100k")
    assert "play on ice" in wide.neighbours("hockey")  # ReceivesAction hockey, play on ice
    assert "hockey" in wide.neighbours("play on ice")  # both directions
    both = load_graph("ccpt+cn100k")
    assert set(both.neighbours("hockey")) == set(authors.neighbours("hockey")) | set(
        wide.neighbours("hockey")
    )


def test_offline_spreading_is_seeded_and_follows_algorithm_1() -> None:
    item = load_items(NOFILTER)[0]
    graph = load_graph("ccpt")
    settings = SaSettings.for_spec(NOFILTER)
    assert (settings.iterations, settings.epsilon) == (5, 0.1)  # the paper's T and epsilon
    trace = offline_trace(NOFILTER, item, settings, graph)
    again = offline_trace(NOFILTER, item, settings, graph)
    other = offline_trace(NOFILTER, item, SaSettings.for_spec(NOFILTER, {"sa_seed": 1}), graph)
    assert trace.to_json() == again.to_json() and trace.relevant != other.relevant
    c0 = [item.root, item.modifier]
    reachable = set(c0) | {n for c in c0 for n in graph.neighbours(c)}
    first = trace.steps[0]
    assert len(first.sampled) == min(10, first.candidates) and set(first.sampled) <= reachable
    assert first.concepts == [c for c in first.sampled if c not in c0]  # C_1 = sample \ C_0
    for step in trace.steps:
        assert not set(step.concepts) & set(c0) and step.filter_input is None
    assert trace.stopped == "max_iterations" or trace.steps[-1].delta < 0.1
    assert len(trace.steps) <= 5 and trace.relevant == trace.steps[-1].concepts


def test_task_docs_remember_each_trace_and_hand_out_copies() -> None:
    """A task built twice in a process (lm-eval's docs, Inspect's samples) computes each
    item's trace once: the same docs again, whatever a caller did to the first ones, and
    other traces for other settings."""
    from conceptcomb.ccpt.docs import task_docs

    items = load_items(NOFILTER)[:3]
    first = task_docs(NOFILTER, items, {})
    expected = json.loads(json.dumps(first))
    first[0]["spreading_activation"]["iterations"].clear()
    first[0]["relevant_concepts"].append("changed by a caller")
    assert task_docs(NOFILTER, items, {}) == expected
    graph, settings = load_graph("ccpt"), SaSettings.for_spec(NOFILTER)
    assert (
        expected[0]["spreading_activation"]
        == offline_trace(NOFILTER, items[0], settings, graph).to_json()
    )
    seeded = task_docs(NOFILTER, items, {"sa_seed": 1})
    assert [d["relevant_concepts"] for d in seeded] != [d["relevant_concepts"] for d in expected]


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="sa_graph"):
        SaSettings.for_spec(NOFILTER, {"sa_graph": "wordnet"})
    with pytest.raises(ConfigError, match="sa_iterations"):
        SaSettings.for_spec(NOFILTER, {"sa_iterations": "0"})
    with pytest.raises(ConfigError, match="run it with Inspect"):
        build_docs(spec_by_name("ccpt_pi_emergent_sa_llm"), [ITEM], {})


def test_lm_eval_has_the_no_filter_variant_with_the_same_prompts_as_inspect() -> None:
    names = {spec.name for spec in lm_eval_method_specs()}
    assert "ccpt_npc_emergent_sa_conceptnet_nofilter" in names
    assert not any(name.endswith(("_sa_llm", "_sa_both", "_sa_conceptnet")) for name in names)
    name = "ccpt_npc_emergent_sa_conceptnet_nofilter"
    task = task_manager(judge="off", sa_seed=3).load([name])["tasks"][name]
    docs = list(task.test_docs())[:5]
    samples = list(TASKS[name](judge="off", sa_seed=3).dataset)[:5]
    for doc, sample in zip(docs, samples, strict=True):
        assert task.doc_to_text(doc) == sample.input[1].text
        trace = json.loads(doc["spreading_activation"])
        assert trace["settings"]["seed"] == 3 and trace["C_0"] == [doc["property"], doc["root"]]
        assert f"- Relevant concepts: {doc['relevant_concepts']}\n- Answer:" in doc["prompt"]


def model_prompts(log) -> list[str]:
    sample = resolve_sample_attachments(log.samples[0])
    # The judge's calls are model events too, in the grader role.
    return [e.input[-1].text for e in sample.events if e.event == "model" and e.role != "grader"]


def test_inspect_filter_loop_logs_each_iteration(tmp_path: Path, fresh_cache: Path) -> None:
    replies = [
        'So the answer is ["boat", "ocean", "Sail"]',  # filter, t = 1 (C_0 dropped)
        'So the answer is ["oceans", "sail"]',  # filter, t = 2: same lemmas, converged
        '{"property": "adventurous"}',  # the answer
    ]
    with LoopbackServer() as server:
        task = TASKS["ccpt_pi_emergent_sa_conceptnet"](judge_base_url=server.base_url)
        log = inspect_eval(task, model=mock_model(replies), limit=1, display="none",
                           log_dir=str(tmp_path))[0]  # fmt: skip
    assert log.status == "success", log.error
    trace = log.samples[0].metadata["spreading_activation"]
    steps = trace["iterations"]
    assert [s["concepts"] for s in steps] == [["ocean", "sail"], ["oceans", "sail"]]
    assert [s["delta"] for s in steps] == [1.0, 0.0] and trace["stopped"] == "converged"
    assert all(s["filter_input"] == s["sampled"][:5] for s in steps)
    prompts = model_prompts(log)
    assert prompts[0] == filter_prompt(steps[0]["filter_input"], "'boat', 'rock'")
    assert prompts[2].endswith("- Relevant concepts: ['oceans', 'sail']\n- Answer:")
    info = [e for e in log.samples[0].events if e.event == "info"]
    assert info and info[0].data["iterations"] == steps  # the transcript shows every C_t
    assert log.samples[0].scores["ccpt"].value["E"] >= 0  # the answer was judged


def test_inspect_llm_activation_asks_each_concept_once(tmp_path: Path, fresh_cache: Path) -> None:
    replies = [
        '["sea", "sail"]',  # Activate(boat)
        '["stone"]',  # Activate(rock)
        'So the answer is ["sea"]',  # filter, t = 1
        '["wave"]',  # Activate(sea); boat and rock were activated already
        'So the answer is ["sea"]',  # filter, t = 2: converged
        '{"property": "adventurous"}',
    ]
    with LoopbackServer() as server:
        task = TASKS["ccpt_pi_emergent_sa_llm"](judge_base_url=server.base_url, sa_iterations=3)
        log = inspect_eval(task, model=mock_model(replies), limit=1, display="none",
                           log_dir=str(tmp_path))[0]  # fmt: skip
    assert log.status == "success", log.error
    prompts = model_prompts(log)
    assert len(prompts) == 6
    assert [p for p in prompts if p.startswith("Instruction:\n1. Your task is to find")] == [
        activation_prompt("boat"), activation_prompt("rock"), activation_prompt("sea"),
    ]  # fmt: skip
    steps = log.samples[0].metadata["spreading_activation"]["iterations"]
    assert steps[0]["activated"] == {"boat": 2, "rock": 1}
    assert set(steps[0]["sampled"]) == {"boat", "rock", "sea", "sail", "stone"}
