"""Prompts of the spreading-activation method (paper section 4.1, Tables 12 and 15).

Three kinds of prompt, all as the authors' released script renders them (seokwon99/CCPT,
``experiment/spread_activation.py`` and ``experiment/run/gen_*.py``; the paper prints only
the answer prompts):

* the activation prompt p_act (Activate with the model): one concept in, a list out;
* the filter prompt p_fil (Filter): a node set and the objective O in, a list out;
* the answer prompt: the task's instructions for the method, two examples with their
  relevant concepts, and the item with its concept set C_T (Tables 12 and 15).

Line continuations of the script are joined, double braces single (its two ``format``
passes), and its oddities kept so that prompts match the ones behind the published
numbers: the filter prompt numbers two items "4." and ends its second example with a
stray backslash and "novel"; the NPC answer prompt has two spaces before "Avoid"; the
canceled answer prompt (the paper prints none) has a list line inside its second example.
"""

from __future__ import annotations

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.prompts import item_input
from conceptcomb.ccpt.tasks import NPC_EMERGENT, PI_CANCELED, PI_EMERGENT, CcptTaskSpec

# --- Activate(c) with the model ------------------------------------------------------------
ACTIVATION_PROMPT = """Instruction:
1. Your task is to find relevant concepts related to a given concept
2. Explore adjacent concepts from various and novel perspectives on given concept.
3. Use the previous examples to learn how to do this.
4. Answer in list format: ["{adjacent_concept_1}", "{adjacent_concept_2}", ...]. Do not include other formatting.

<Example 1>
Concept: Apple
Answer: ["fruit", "stem", "red", "round", "tree", "adam"]

<Example 2>
Concept: Castle
Answer: ["building", "house", "king", "moat", "fortress"]

Your turn:
Concept: <<concept>>
Answer: """  # noqa: E501

# --- Filter(C_t, C_0) ----------------------------------------------------------------------
FILTER_PROMPT = """Instruction:
1. Identify the relevant nodes related to both given concepts.
2. Remove nodes that are redundant to another node or related to only one of the concepts.
3. Improve accuracy by learning from previous examples.
4. Come up with your reasoning process before giving your final answer.
4. Final answer should follow dictionary format: ["{node_1}", "{node_2}", ...]. Do not use other formatting.

<Example 1>
Node set: ["crispy", "stem", "red", "crunchy"]
Concepts: "peeled", "apple"
Answer: Let's consider each concept. The crispy is the texture of apple, but it is not directly related to whether apple is peeled or not. Stem is the part of apple and removed when apple is peeled, related to either concepts. Apple is red and the color of apple is affected by whether it is peeled or not, related to either concepts. Crunchy is similar to crispy, which is a redundant node. So the answer is ["stem", "red"]

<Example 2>
Node set: ["house", "king", "royal", "abstract"]
Concepts: "imaginary", "castle"
Answer: Let's consider each concept. The castle is a house of king or royal, but the house is not related to 'imaginary'. The castle is related to king and king may be imaginary because of power. Royal is a similar concept to king, which is a redundant node. Abstract is related to imaginary, but not related to the castle. \\    
So the answer is ["king", "novel"]

Your turn:
Node set: <<nodes>>
Concepts: <<objective>>
Answer: """  # noqa: E501, W291


def activation_prompt(concept: str) -> str:
    return ACTIVATION_PROMPT.replace("<<concept>>", concept)


def filter_prompt(nodes: list[str], objective: str) -> str:
    """The node set is shown as Python prints a list, as the script formats it."""
    return FILTER_PROMPT.replace("<<nodes>>", str(list(nodes))).replace("<<objective>>", objective)


# --- The answer prompts (Tables 12 and 15) ---------------------------------------------------
_EXAMPLES_LEAD = "\n    \n"

_PI_EMERGENT = """Instructions:
1. You are given a combination of concepts and a set of relevant concepts to solve a task. Your task is to generate emergent property of a combination.
2. Find a property that does not belong to any of the individual component in the combination but emerges when the words are combined.
3. Come up with your reasoning process before giving your final answer.
4. Final answer should follow dictionary format: {"property": "{generated_property}"}. Do not include other formatting."""  # noqa: E501

_PI_EMERGENT_EXAMPLES = """<Example 1>
- Combination: Brown apple
- Relevant concepts: ['fruit', 'apple', 'core', 'cider']
- Correct answer: The goal is to find an emergent property of "brown apple" that does not exist in "brown" or "apple" individually. "Fruit" and "apple" describe general attributes, so they are excluded. "Core" and "Cider" are unrelated to "brown apple." "Withered" relates to a decayed state, which applies to "brown apple" but not to "brown" or "apple" alone. To interpret "withered" naturally, we select "unappetizing" as the emergent property. So the answer is {"property": "unappetizing"}

Above answer is correct because property "unappetizing" does not belong to either "brown" and "apple", but belong to brown apple

<Example 2>
- Combination: burned banknote
- Relevant concepts: ['paper', 'ash', 'money', 'value']
- Wrong answer: The goal is to find an emergent property of a “burned banknote” that does not exist in either “burned” or “banknote” individually. The attributes “paper” and “money” describe general properties of a banknote, so they are excluded.Likewise, “ash” describes a general property of something that is burned, so it is also excluded. While a banknote possesses “value,” this characteristic disappears once the banknote is burned. Consequently, to convey the idea of “valueless” naturally, we choose “useless” as the emergent property. So the answer is is: {"property": "useless"}

Above answer is wrong because "burned" something can directly belong to property "useless". Ensure that the emergent property you generate does not directly describe any of the individual words but is a characteristic of the combination as a whole."""  # noqa: E501

# The paper prints no canceled-property prompt: this is the authors' script's.
_PI_CANCELED = """Instructions:
1. You are given a combination of concepts and a set of relevant concepts to solve a task. Your task is to generate canceled property of a combination.
2. Find a property that belongs to one of the individual components in the combination but doesn't belong to combination as a whole.
3. Come up with your reasoning process before giving your final answer.
4. Final answer should follow dictionary format: {"property": "{generated_property}"}. Do not include other formatting."""  # noqa: E501

_PI_CANCELED_EXAMPLES = """<Example 1>
- Combination: Brown apple
- Relevant concepts: ['fruit', 'apple', 'core', 'cider', 'withered']
- Correct answer: The goal is to find an canceled property of "brown apple" that exists in "brown" or "apple" but not in "brown apple." "Fruit" and "apple" describe general attributes, so they are excluded. "Core" is unrelated to "apple." "Cider" is produced from apples. But it is hard to say that "cider" is a property of "apple." "Withered" relates to a decayed state, which applies to "brown apple" but not to "brown" or "apple" alone. To find canceled property with "withered", we select antonym of "withered" as "appetizing" as the canceled property. So the answer is {"property": "appetizing"}

Above answer is correct because the property "appetizing" applies to the word "apple" individually but does not apply to the combination "brown apple" as a whole.

<Example 2>
- Combination: Peeled apple
- Relevant concepts: ['apple', 'round', 'skin', 'knife']
- Wrong answer: The goal is to find an canceled property of "peeled apple" that exists in "peeled" or "apple" but not in "peeled apple." ['apple', 'round', 'skin', 'knife']
"Apple" describes general attributes, so they are excluded. "Round" is attribute of "apple" but not of "peeled apple." "Skin" describes general attributes of "peeled", so it is excluded. "Knife" make "peeled apple" but it is hard to say that "knife" is a property of "peeled apple." So the answer is {"property": "round"}

Above answer is wrong because the property "round" applies to both "apple" and "peeled apple"."""  # noqa: E501

_NPC = """Instructions:
1. You are given a head noun, emergent property and a set of relevant concepts to solve a task. Your task is to generate a conceptual combination by adding one modifier.
2. You can use function word without any constraint.
3. Modifier should not have the given emergent property on its own, but the combination exhibits the emergent property.
4. Come up with your reasoning process before giving your final answer.
5. Final answer should follow dictionary format: {"combination": "{generated_combination}", "modifier": "{generated_modifier}"}. Do not use other formatting."""  # noqa: E501

_NPC_EXAMPLES = """<Example 1>
- Head noun: apple
- Emergent property: unappetizing
- Relevant concepts: ['bland', 'bitter', 'inedible', 'insipid', 'unappealing', 'unpalatable']
- Correct answer: The goal is to find a modifier that does not inherently have the emergent property "unappetizing," but do when combined with "apple". Related concepts such as bitter, inedible or unpalatable make apple unappetizing. To represent bitter apple, "yellow" can be used as a modifier. But yellow is somewhat related to bitter because of the color of lemons. To represent inedible or unpalatable apple, "plastic" or "brown" can be used as a modifier. However plastic is directly related to inedible. "Brown" as a modifier doesn't imply inedible on its own, but when paired with "apple," it suggest an inedible state. So the answer is {"combination": "brown apple", "modifier": "brown"}

Above answer is correct because each component "brown" and "apple" do not possess "unappetizing" but "brown apple" does.

<Example 2>
- Head noun: banknote
- Emergent property: useless
- Relevant concepts: ['counterfeit', 'worthless', 'ineffective', 'futile', 'meaningless', 'pointless']
- Wrong answer: The goal is to find a modifier that does not inherently have the emergent property "useless," but do when combined with "banknote". Related concepts such as counterfeit or worthless make banknote useless. To represent counterfeit banknote, "fake" can be used as a modifier. But fake is somewhat related to useless because of the meaning. To represent worthless banknote, "burned" can be used as a modifier. So the answer is {"combination": "burned banknote", "modifier": "burned"}

Above answer is wrong because modifier "burned" directly elicit property "useless".  Avoid modifier which elicit given property in itself.
"""  # noqa: E501

_ANSWER_PROMPTS = {
    PI_EMERGENT: (_PI_EMERGENT, _PI_EMERGENT_EXAMPLES),
    PI_CANCELED: (_PI_CANCELED, _PI_CANCELED_EXAMPLES),
    NPC_EMERGENT: (_NPC, _NPC_EXAMPLES),
}


def sa_instructions(spec: CcptTaskSpec) -> str:
    instructions, examples = _ANSWER_PROMPTS[spec.kind]
    return instructions + _EXAMPLES_LEAD + examples


def sa_user_prompt(spec: CcptTaskSpec, item: CcptItem, concepts: list[str]) -> str:
    """The answer prompt for one item and its relevant concepts (C_T without C_0)."""
    relevant = f"\n- Relevant concepts: {list(concepts)}"
    return (
        f"{sa_instructions(spec)}\n\nThen let's begin:\n{item_input(spec, item)}{relevant}"
        "\n- Answer:"
    )
