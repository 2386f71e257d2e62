"""Inspect adapter for the yes/no verifier: the ``grader`` role or one of our judges.

As for relevance ratings (`conceptcomb.scorers.inspect_judge`): with ``--model-role
grader=MODEL`` that Inspect model answers the verification questions, otherwise the
task's ``judge*`` options pick the judge; either way through a `RatingSession`.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import Model, model_roles

from conceptcomb.scorers.inspect_judge import GRADER_ROLE, InspectModelJudge, InspectSessions
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.judges import Judge, JudgeReply, shorten
from conceptcomb.scorers.verification import IDENTITY_SUFFIX, build_verifier, record_verdict


class InspectModelVerifier(InspectModelJudge):
    """An Inspect model answering yes/no questions at temperature 0."""

    def __init__(self, model: Model, settings: JudgeSettings) -> None:
        super().__init__(model, settings)
        self.identity += IDENTITY_SUFFIX

    async def ask(self, prompt: str) -> JudgeReply:
        reply = JudgeReply(rating=None)
        for _ in range(1 + self.settings.judge_format_retries):
            try:
                output = await self.model.generate(prompt, config=self._config)
            except Exception as err:  # Inspect already retried transport errors
                reply.requests += 1
                reply.error = f"{type(err).__name__}: {shorten(str(err))}"
                return reply
            reply.requests += 1
            if output.usage is not None:
                reply.input_tokens += output.usage.input_tokens
                reply.output_tokens += output.usage.output_tokens
            if record_verdict(reply, output.completion):
                return reply
        return reply


class InspectVerifierSessions(InspectSessions):
    """One verification `RatingSession` per event loop."""

    def _judge(self) -> Judge | None:
        grader: Any = model_roles().get(GRADER_ROLE)
        if isinstance(grader, list):
            grader = grader[0] if grader else None
        if grader is not None:
            return InspectModelVerifier(grader, self.settings)
        if not self.settings.enabled:
            return None
        self.settings.check_credentials()
        return build_verifier(self.settings)
