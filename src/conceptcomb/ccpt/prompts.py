"""CCPT prompts: the paper's system prompt (Table 9) and task instructions (Tables 10-16).

Each user prompt is ``instructions + two examples + "Then let's begin:" + item + "- Answer:"``,
the layout of the authors' script (seokwon99/CCPT ``experiment/prompts.py`` and
``experiment/run/*.py``), rendered as their double ``str.format`` renders it: single braces
in the dictionary formats. The blank line holding four spaces before ``<Example 1>`` is in
their script too; we keep it so that prompts are byte-identical to the ones that produced
the published numbers.
"""

from __future__ import annotations

import re

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.tasks import (
    NPC_EMERGENT,
    PI_CANCELED,
    PI_EMERGENT,
    TYPE_PREDICTION,
    CcptTaskSpec,
)

# Table 9. The released script words item 2 differently ("The word that you will generate
# to create a new conceptual combination with the head noun."); the paper's text is used.
SYSTEM_PROMPT = """Conceptual combination is a task that combines two concepts, which can result in new properties. It involves a head noun, a modifier, and corresponding properties. Here's the definition of each component:

1. Head Noun: The original concept in the conceptual combination.
2. Modifier: The word that modify head noun to create a new conceptual combination.
3. Component Property: A property inherent to individual concepts (head noun or modifier).
4. Emergent Property: A new property that arises from the combination of the head noun and the modifier. This property does not exist in either concept individually (head noun or modifier) but emerge in conceptual combination.
5. Canceled Property: A property that is inherent to individual concept (head noun or modifier) and negated due to the combination.
"""  # noqa: E501

_EXAMPLES_LEAD = "\n    \n"
_REASONING_STEP = "Come up with your reasoning process before giving your final answer."


def _with_reasoning_step(base: str, step: int) -> str:
    """The CoT instructions of the paper's tables: the base ones with the reasoning step
    inserted as step ``step``, the steps after it renumbered."""
    lines = base.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{step}. "))
    later = [re.sub(r"^(\d+)\. ", lambda m: f"{int(m[1]) + 1}. ", line) for line in lines[at:]]
    return "\n".join([*lines[:at], f"{step}. {_REASONING_STEP}", *later])


# --- Property induction, emergent (Tables 13 and 14) -----------------------------------
_PI_EMERGENT_BASE = """Instructions:
1. You are given a combination of concepts. Your task is to generate emergent property of a combination.
2. Find a property that does not belong to any of the individual component in the combination but emerges when the words are combined.
3. Use the previous examples to learn how to do this.
4. Answer in dictionary format: {"property": "{generated_property}"}. Do not include other formatting."""  # noqa: E501

_PI_EMERGENT_COT = _with_reasoning_step(_PI_EMERGENT_BASE, 4)

_PI_EMERGENT_EXAMPLES = """<Example 1>
- Combination: Brown apple
- Correct answer: {example_1}

Above answer is correct because property "unappetizing" does not belong to either "brown" and "apple", but belong to brown apple

<Example 2>
- Combination: burned banknote
- Wrong answer: {example_2}

Above answer is wrong because "burned" something can directly belong to property "useless". Ensure that the emergent property you generate does not directly describe any of the individual words but is a characteristic of the combination as a whole."""  # noqa: E501

_PI_EMERGENT_ANSWERS = {
    "base": ('{"property": "unappetizing"}', '{"property": "useless"}'),
    "cot": (
        """Let's think step-by-step. "Brown" signifies a color change due to aging, oxidation, or decay, indicating the apple is no longer fresh. "Apple" is a fruit that is typically appealing when fresh, but browning suggests overripeness or spoilage. Concepts like spectrum (color change) and growth (life cycle of the fruit) reinforce this transition. So the answer is {"property": "unappetizing"}""",  # noqa: E501
        """Let's think step-by-step. Individually, "burned" does not mean something is useless. A "banknote" by itself is valuable and serves as a medium of exchange. However, when combined, a "burned banknote" implies that the note is damaged beyond recognition, making it invalid for transactions and effectively useless as currency. So the answer is  {"property": "useless"}""",  # noqa: E501
    ),
}

# --- Property induction, canceled --------------------------------------------------------
# The paper prints no canceled-property prompt. These follow the emergent pattern of
# Tables 13-14 item by item (task, criterion, examples, format); the base wording is the
# one in the authors' released script, so base scores stay comparable with Table 3 (2).
# The CoT variant is ours: their script's canceled CoT lacks the reasoning instruction and
# pairs the "Brown apple" example with reasoning about a burned banknote.
_PI_CANCELED_BASE = """Instructions:
1. You are given a combination of concepts. Your task is to generate canceled property of a combination.
2. Find a property that belongs to one of the individual components in the combination but doesn't belong to combination as a whole.
3. Use the previous examples to learn how to do this.
4. Answer in dictionary format: {"property": "{generated_property}"}. Do not include other formatting."""  # noqa: E501

_PI_CANCELED_COT = _with_reasoning_step(_PI_CANCELED_BASE, 4)

_PI_CANCELED_EXAMPLES = """<Example 1>
- Combination: Brown apple
- Correct answer: {example_1}

Above answer is correct because the property "appetizing" applies to the word "apple" individually but does not apply to the combination "brown apple" as a whole.

<Example 2>
- Combination: Peeled apple
- Wrong answer: {example_2}

Above answer is wrong because the property "round" applies to both "apple" and "peeled apple"."""  # noqa: E501

_PI_CANCELED_ANSWERS = {
    "base": ('{"property": "appetizing"}', '{"property": "round"}'),
    "cot": (
        """Let's think step-by-step. An "apple" on its own is fresh and appetizing. "Brown" signals bruising, oxidation or decay, and a brown apple looks spoiled rather than tempting, so the appetizing quality of the apple is lost in the combination. So the answer is {"property": "appetizing"}""",  # noqa: E501
        """Let's think step-by-step. An "apple" is round. Peeling removes its skin, and the skin is what makes a peeled apple look different, so roundness must be lost as well. So the answer is {"property": "round"}""",  # noqa: E501
    ),
}

# --- Noun phrase completion, emergent (Tables 10 and 11) -----------------------------------
_NPC_BASE = """Instructions:
1. You are given a head noun and emergent property. Your task is to generate a conceptual combination by adding one modifier.
2. You can use function word without any constraint.
3. Modifier should not have the given emergent property on its own, but the combination exhibits the emergent property.
4. Use the previous examples to learn the task.
5. Answer in dictionary format: {"combination": "{generated_combination}", "modifier": "{generated_modifier}"}. Do not include other formatting."""  # noqa: E501

_NPC_COT = _with_reasoning_step(_NPC_BASE, 4)

_NPC_EXAMPLES = """<Example 1>
- Head noun: apple
- Emergent property: unappetizing
- Correct answer: {example_1}

Above answer is correct because each component "brown" and "apple" do not possess "unappetizing" but "brown apple" does.

<Example 2>
- Head noun: banknote
- Emergent property: useless
- Wrong answer: {example_2}

Above answer is wrong because modifier "burned" directly elicit property "useless". Avoid modifier which has given property in itself.
"""  # noqa: E501

_NPC_ANSWERS = {
    "base": (
        '{"combination": "brown apple", "modifier": "brown"}',
        '{"combination": "burned banknote", "modifier": "burned"}',
    ),
    "cot": (
        """Let's think step-by-step. A typical apple is fresh and appetizing, but certain modifications can make it unappetizing. Factors like discoloration, decay, or unusual texture can contribute to this perception. A brown apple, for instance, appears spoiled or oxidized, making it less appealing to eat. So the answer is {"combination": "brown apple", "modifier": "brown"}""",  # noqa: E501
        """Let's think step-by-step. A typical banknote has value and can be used for transactions, but certain modifications can make it useless. Burning a banknote destroys its structure, making it unrecognizable and invalid as currency. So the answer is {"combination": "burned banknote", "modifier": "burned"}""",  # noqa: E501
    ),
}

# --- Property type prediction (Table 16) ---------------------------------------------------
_TP_BASE = """Instructions:
1. You are given a combination and property. Your task is to predict a type of property.
2. Definition of each property type is as follows:
    - Emergent: The property emerges from the combination of components.
    - Component: The property is inherited by component of the combination.
    - Canceled: The property is canceled out by the combination of components.
    - Others: The property is not related to the combination nor components.
3. Use the previous examples to learn the task.
4. Answer in dictionary format: {"property_type": "{property_type}"}. Do not include other formatting."""  # noqa: E501

_TP_EXAMPLES = """<Example 1>
- Combination: peeled apple
- Property: round
- Correct answer: {example_1}

Above answer is correct because property "round" is inherited by component "apple".

<Example 2>
- Combination: burned banknote
- Property: useless
- Wrong answer: {example_2}

Above answer is wrong because modifier "burned" directly elicit property "useless".
"""

_TP_ANSWERS = {"base": ('{"property_type": "component"}', '{"property_type": "emergent"}')}

_INSTRUCTIONS = {
    (PI_EMERGENT, "base"): _PI_EMERGENT_BASE,
    (PI_EMERGENT, "cot"): _PI_EMERGENT_COT,
    (PI_CANCELED, "base"): _PI_CANCELED_BASE,
    (PI_CANCELED, "cot"): _PI_CANCELED_COT,
    (NPC_EMERGENT, "base"): _NPC_BASE,
    (NPC_EMERGENT, "cot"): _NPC_COT,
    (TYPE_PREDICTION, "base"): _TP_BASE,
}
_EXAMPLES = {
    PI_EMERGENT: (_PI_EMERGENT_EXAMPLES, _PI_EMERGENT_ANSWERS),
    PI_CANCELED: (_PI_CANCELED_EXAMPLES, _PI_CANCELED_ANSWERS),
    NPC_EMERGENT: (_NPC_EXAMPLES, _NPC_ANSWERS),
    TYPE_PREDICTION: (_TP_EXAMPLES, _TP_ANSWERS),
}


def instructions(spec: CcptTaskSpec) -> str:
    """Instructions plus the one correct and one wrong example for this task and method."""
    template, answers = _EXAMPLES[spec.kind]
    correct, wrong = answers[spec.method]
    # str.replace, not str.format: the instructions hold literal braces.
    examples = template.replace("{example_1}", correct).replace("{example_2}", wrong)
    return _INSTRUCTIONS[(spec.kind, spec.method)] + _EXAMPLES_LEAD + examples


def item_input(spec: CcptTaskSpec, item: CcptItem) -> str:
    if spec.kind == NPC_EMERGENT:
        return f"- Head noun: {item.root}\n- Emergent property: {item.property}"
    if spec.kind == TYPE_PREDICTION:
        return f"- Combination: {item.combination}\n- Property: {item.property}"
    return f"- Combination: {item.combination}"


def user_prompt(spec: CcptTaskSpec, item: CcptItem) -> str:
    """The user message for one item (the system message is `SYSTEM_PROMPT`)."""
    return f"{instructions(spec)}\n\nThen let's begin:\n{item_input(spec, item)}\n- Answer:"


def target_of(spec: CcptTaskSpec, item: CcptItem) -> str:
    """The dataset's own answer, shown in logs (generative scoring never compares to it)."""
    if spec.kind == TYPE_PREDICTION:
        return item.label
    if spec.kind == NPC_EMERGENT:
        return item.combination
    return item.property
