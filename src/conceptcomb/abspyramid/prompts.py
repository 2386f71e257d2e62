"""AbsPyramid prompts: the paper's detection prompts (Tables 11, 12) and the generator's prompt.

Detection ("Abs. prompt", Table 12) is ``instruction + " " + question``; the wording and the
quoting of the placeholders follow the authors' released template (AbsInstruct
``utils.prompt_template``, whose instructions are Table 12a's text), e.g.

    In the sentence "{event}," does the meaning of "{concept}" encompass "{instance}?"

``{event}`` is the head event as stored, with its ``<...>`` instance markers: the authors
fill the template with the raw ``event`` field (AbsInstruct ``insert_ppl_cot_preparation``),
and their chain-of-thought exemplars quote events with the markers. The CoT prompt (Table
12b) drops "and provide a Yes/No response" from the instruction and appends the two steps.
The NLI-format prompt (Table 11) asks whether the premise (the head event without markers)
entails the hypothesis (the tail event: the instance replaced by the concept), built as the
authors' NLI code builds them.

In-context learning shows the instruction once (system message / lm-eval description)
followed by 10 question/answer turns with answers "Yes" or "No", then the item's query; the
paper prints no ICL format, this is the layout of the authors' ICL script (AbsInstruct
``eval_icl_abs_disc``). CoT + 10-shot (Table 4) keeps that layout with Table 12b's text: the
CoT instruction once, the 10 demonstrations answered "Yes" or "No" (the paper prints no
rationales for them), then the item's question followed by the two steps; without the
demonstrations it reads exactly as the zero-shot CoT prompt.

Generation (``generator_main.py``): noun and verb items ``In the sentence "{event}," {instance}
is an instance of`` with the markers removed; events ``The sentence "{instance}" is an
instance of``. The model continues the sentence (a base-model completion prompt).
"""

from __future__ import annotations

from conceptcomb.abspyramid.data import DetectionItem, GenerationItem
from conceptcomb.abspyramid.tasks import NLI_PROMPT, AbsTaskSpec

ANSWERS = ("No", "Yes")  # index = label

_HYPERNYM = "Hypernyms are words with a broad meaning, which more specific words fall under."
_YES_NO = 'provide a "Yes" or "No" response.'
# Table 12a (zero-shot and in-context instructions).
_ABS_INSTRUCTIONS = {
    "noun": f"Identify the hypernym of a specific noun and {_YES_NO} {_HYPERNYM}",
    "verb": f"Identify the hypernym of a specific verb and {_YES_NO} {_HYPERNYM}",
    "event": f"Identify abstract descriptions of specific sentences, and {_YES_NO}",
}
# Table 12b (chain of thought): instruction, then the question, then the steps.
_ABS_COT_INSTRUCTIONS = {
    "noun": f"Identify the hypernym of a specific noun. {_HYPERNYM}",
    "verb": f"Identify the hypernym of a specific verb. {_HYPERNYM}",
    "event": "Identify abstract descriptions of specific sentences.",
}
_ABS_COT_STEPS = {
    "noun": "Step 1: Let's think about the meanings of those words. "
    'Step 2: Provide a "Yes" or "No" response.',
    "verb": "Step 1: Let's think about the meanings of those words. "
    'Step 2: Provide a "Yes" or "No" response.',
    "event": "Step 1: Let's think about the meanings of the sentence and the abstract "
    'description. Step 2: Provide a "Yes" or "No" response.',
}
# Table 11 (one prompt for all relations).
_NLI_INSTRUCTION = (
    f'Identify entailment and {_YES_NO} Entailment is about determining whether a "hypothesis" '
    'is true given a "premise."'
)
_NLI_COT_INSTRUCTION = (
    'Identify entailment, which is about determining whether a "hypothesis" is true given a '
    '"premise."'
)
_NLI_COT_STEPS = (
    "Step 1: Let's think about meanings of those sentences. "
    'Step 2: Provide a "Yes" or "No" response.'
)


def detection_instruction(spec: AbsTaskSpec, item_type: str) -> str:
    """The task instruction for an item of this type (relation)."""
    if spec.prompt == NLI_PROMPT:
        return _NLI_COT_INSTRUCTION if spec.reasoning else _NLI_INSTRUCTION
    table = _ABS_COT_INSTRUCTIONS if spec.reasoning else _ABS_INSTRUCTIONS
    return table[item_type]


def detection_question(spec: AbsTaskSpec, item: DetectionItem) -> str:
    if spec.prompt == NLI_PROMPT:
        return (
            f'Given the premise "{item.premise}," can we know the hypothesis "{item.hypothesis}?"'
        )
    if item.type == "event":
        return f'Can we consider "{item.concept}" as an abstract description of the sentence "{item.event}?"'  # noqa: E501
    return f'In the sentence "{item.event}," does the meaning of "{item.concept}" encompass "{item.instance}?"'  # noqa: E501


def detection_query(spec: AbsTaskSpec, item: DetectionItem) -> str:
    """What the item asks after the instruction: the question, then the CoT steps if any
    (in-context tasks show it after the demonstrations, which show the bare question)."""
    question = detection_question(spec, item)
    if not spec.reasoning:
        return question
    steps = _NLI_COT_STEPS if spec.prompt == NLI_PROMPT else _ABS_COT_STEPS[item.type]
    return f"{question} {steps}"


def detection_prompt(spec: AbsTaskSpec, item: DetectionItem) -> str:
    """The whole single-message prompt (zero-shot, CoT, log-likelihood variants)."""
    return f"{detection_instruction(spec, item.type)} {detection_query(spec, item)}"


def answer_of(item: DetectionItem) -> str:
    return ANSWERS[item.label]


def generation_prompt(item: GenerationItem) -> str:
    if item.type == "event":
        return f'The sentence "{item.instance}" is an instance of'
    sentence = item.event.replace("<", "").replace(">", "")
    return f'In the sentence "{sentence}," {item.instance} is an instance of'
