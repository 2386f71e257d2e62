"""Yes/no verification by a judge: does a sentence express a relation between two concepts?

The same judges as the relevance judge (any OpenAI-compatible endpoint, the offline local
model, an Inspect ``grader``), the same settings, cache and concurrent `RatingSession`
(dedup, retries, usage), with a yes/no prompt instead of the 1-10 scale: a verdict is
stored as the rating 1.0 (yes) or 0.0 (no). A reply without a readable verdict is asked
again (``judge_format_retries``), then counted as a failure, never as "no".

Used by CGGC's relation verification (paper section 5.3): one question per edge of the
reasoning graph, an item is verified when every edge is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.api_judge import OpenAIJudge
from conceptcomb.scorers.judge_base import Judge, JudgeReply, shorten
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.local_judge import LocalJudge, question_ids
from conceptcomb.scorers.rating import JudgeUsage, rate_prompts
from conceptcomb.scorers.verdicts import parse_verdict

YES, NO = 1.0, 0.0
IDENTITY_SUFFIX = "|yes-no-verifier|v1"

VERIFICATION_PROMPT = """You are given a sentence and a commonsense relation between two concepts, taken from the ConceptNet knowledge graph. Your task is to decide whether the sentence expresses this relation: whether a reader of the sentence can tell, explicitly or by clear implication, that the relation holds between the two concepts as they are used in the sentence.

Relation: {head} --{relation}--> {tail}
In words: {statement}

Sentence: {sentence}

Does the sentence express the relation? Answer in dictionary format: {{"answer": "yes"}} or {{"answer": "no"}}. Do not include other formatting.
"""  # noqa: E501


@dataclass(frozen=True)
class VerificationQuestion:
    """Does ``sentence`` express (head, relation, tail)? One judge call."""

    sentence: str
    head: str
    relation: str
    tail: str
    statement: str  # the triple in words, e.g. "pizza is located at oven"

    @property
    def prompt(self) -> str:
        return VERIFICATION_PROMPT.format(
            head=self.head.strip(),
            relation=self.relation.strip(),
            tail=self.tail.strip(),
            statement=self.statement.strip(),
            sentence=" ".join(self.sentence.split()),
        )


def record_verdict(reply: JudgeReply, text: str) -> bool:
    """Record a verdict on ``reply``; False when the text holds none."""
    verdict = parse_verdict(text)
    reply.reply = text
    if verdict is None:
        reply.error = f"no yes/no verdict in the judge's answer: {shorten(text)!r}"
        return False
    reply.rating, reply.error = (YES if verdict else NO), None
    return True


VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["answer"],
    "additionalProperties": False,
}


class OpenAIVerifier(OpenAIJudge):
    """The relevance judge's endpoint and transport, asked yes/no questions."""

    record = staticmethod(record_verdict)
    answer_name, answer_schema = "verdict", VERDICT_SCHEMA

    def __init__(self, settings: JudgeSettings) -> None:
        super().__init__(settings)
        self.identity += IDENTITY_SUFFIX


class LocalVerifier(LocalJudge):
    """Offline: "yes" when the model puts more probability on it than on "no" after
    ``{"answer": "``. Like the local relevance judge, it proves the pipeline runs; it runs
    where the judge options say and answers in batches the same way."""

    ANSWER_PREFIX = '{"answer": "'
    FINAL_POSITIONS = 1  # the verdict's first token

    def __init__(self, settings: JudgeSettings) -> None:
        super().__init__(settings)
        self.identity += IDENTITY_SUFFIX
        self._yes_no = (0, 0)

    def prepare(self, tokenizer: Any) -> None:
        yes = tokenizer("yes", add_special_tokens=False)["input_ids"][0]
        no = tokenizer("no", add_special_tokens=False)["input_ids"][0]
        self._yes_no = (yes, no)

    def question_row(self, tokenizer: Any, prompt: str) -> list[int]:
        return question_ids(tokenizer, prompt, self.ANSWER_PREFIX)

    def reply_from(self, logits: Any) -> JudgeReply:
        import torch

        probs = torch.softmax(logits[-1].float(), dim=-1)
        p_yes, p_no = probs[list(self._yes_no)].tolist()
        verdict = "yes" if p_yes >= p_no else "no"
        return JudgeReply(
            rating=YES if verdict == "yes" else NO,
            reply=f'{{"answer": "{verdict}"}} (P(yes) {p_yes:.4f}, P(no) {p_no:.4f})',
            requests=1,
        )


_VERIFIERS: dict[str, Callable[[JudgeSettings], Judge]] = {
    "openai": OpenAIVerifier,
    "local": LocalVerifier,
}


def build_verifier(settings: JudgeSettings) -> Judge:
    if settings.judge not in _VERIFIERS:
        raise ConfigError("The judge is off (judge=off): nothing can be verified.")
    return _VERIFIERS[settings.judge](settings)


def verify_prompts(
    settings: JudgeSettings, prompts: Iterable[str]
) -> tuple[dict[str, JudgeReply], JudgeUsage]:
    """Ask every yes/no question (sync entry point for lm-eval and the CLI): replies by
    prompt, rating 1.0 for yes and 0.0 for no, and the usage."""
    replies, usage, _ = rate_prompts(settings, prompts, "verifying", build=build_verifier)
    return replies, usage
