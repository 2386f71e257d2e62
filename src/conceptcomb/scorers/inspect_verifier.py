"""Inspect adapter for the yes/no verifier: the ``grader`` role or one of our judges.

As for relevance ratings (`conceptcomb.scorers.inspect_judge`): the ``grader`` model
(``--model-role grader=MODEL``, else the one the task's ``judge*`` options describe)
answers the verification questions, or the offline judge with ``judge=local``; either way
through a `RatingSession`, under the same identity as lm-eval's verifier at that endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.model import Model

from conceptcomb.scorers.inspect_judge import InspectModelJudge, InspectSessions
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.verification import (
    IDENTITY_SUFFIX,
    VERDICT_SCHEMA,
    build_verifier,
    record_verdict,
)


class InspectModelVerifier(InspectModelJudge):
    """An Inspect model answering yes/no questions at temperature 0."""

    record = staticmethod(record_verdict)
    answer_name, answer_schema = "verdict", VERDICT_SCHEMA

    def __init__(
        self, models: Model | Sequence[Model], settings: JudgeSettings, secret: str | None = None
    ) -> None:
        super().__init__(models, settings, secret)
        self.identity += IDENTITY_SUFFIX


class InspectVerifierSessions(InspectSessions):
    """One verification `RatingSession` per event loop."""

    grader_judge = InspectModelVerifier
    build = staticmethod(build_verifier)
