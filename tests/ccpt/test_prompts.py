"""The prompts are the paper's (Tables 9-16), rendered as the authors' script renders them."""

from __future__ import annotations

import pytest

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, instructions, user_prompt
from conceptcomb.ccpt.tasks import CcptTaskSpec, all_specs

ITEM = CcptItem("x:0", "a boat on the rocks", "boat", "rock", "strand", "emergent")


def test_system_prompt_is_table_9() -> None:
    assert SYSTEM_PROMPT.startswith("Conceptual combination is a task that combines two concepts")
    for line in (
        "1. Head Noun: The original concept in the conceptual combination.",
        "2. Modifier: The word that modify head noun to create a new conceptual combination.",
        "3. Component Property: A property inherent to individual concepts (head noun or "
        "modifier).",
        "5. Canceled Property: A property that is inherent to individual concept (head noun or "
        "modifier) and negated due to the combination.",
    ):
        assert line in SYSTEM_PROMPT.splitlines()


def test_property_induction_base_is_table_13() -> None:
    prompt = user_prompt(CcptTaskSpec("pi_emergent"), ITEM)
    assert prompt.startswith(
        "Instructions:\n1. You are given a combination of concepts. Your task is to generate "
        "emergent property of a combination.\n"
    )
    assert '4. Answer in dictionary format: {"property": "{generated_property}"}. ' in prompt
    assert '- Combination: Brown apple\n- Correct answer: {"property": "unappetizing"}' in prompt
    assert '- Combination: burned banknote\n- Wrong answer: {"property": "useless"}' in prompt
    assert prompt.endswith("Then let's begin:\n- Combination: a boat on the rocks\n- Answer:")


def test_cot_adds_reasoning_instruction_and_reasoned_examples() -> None:
    prompt = user_prompt(CcptTaskSpec("pi_emergent", "cot"), ITEM)
    assert "4. Come up with your reasoning process before giving your final answer." in prompt
    assert '- Correct answer: Let\'s think step-by-step. "Brown" signifies' in prompt


def test_noun_phrase_completion_is_table_10() -> None:
    prompt = user_prompt(CcptTaskSpec("npc_emergent"), ITEM)
    assert "3. Modifier should not have the given emergent property on its own" in prompt
    assert '{"combination": "brown apple", "modifier": "brown"}' in prompt
    assert prompt.endswith("- Head noun: boat\n- Emergent property: strand\n- Answer:")


def test_type_prediction_is_table_16() -> None:
    prompt = user_prompt(CcptTaskSpec("tp"), ITEM)
    assert "- Others: The property is not related to the combination nor components." in prompt
    assert '- Correct answer: {"property_type": "component"}' in prompt
    assert prompt.endswith("- Combination: a boat on the rocks\n- Property: strand\n- Answer:")


def test_canceled_prompt_follows_the_emergent_pattern() -> None:
    emergent = instructions(CcptTaskSpec("pi_emergent")).splitlines()
    canceled = instructions(CcptTaskSpec("pi_canceled")).splitlines()
    assert len(canceled) == len(emergent)
    assert "generate canceled property of a combination" in canceled[1]
    assert canceled[3:5] == emergent[3:5]  # same learning and format instructions


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.name)
def test_every_prompt_renders_without_template_leftovers(spec: CcptTaskSpec) -> None:
    prompt = user_prompt(spec, ITEM)
    assert "{example_" not in prompt and "{{" not in prompt
    assert prompt.count("<Example") == 2
