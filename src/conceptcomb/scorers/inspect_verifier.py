"""Inspect adapter for the yes/no verifier: the ``grader`` role or one of our judges.

As for relevance ratings (`conceptcomb.scorers.inspect_judge`): with ``--model-role
grader=MODEL`` that Inspect model answers the verification questions, otherwise the
task's ``judge*`` options pick the judge; either way through a `RatingSession`.
"""

from __future__ import annotations

from inspect_ai.model import Model

from conceptcomb.scorers.inspect_judge import InspectModelJudge, InspectSessions
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.verification import IDENTITY_SUFFIX, build_verifier, record_verdict


class InspectModelVerifier(InspectModelJudge):
    """An Inspect model answering yes/no questions at temperature 0."""

    record = staticmethod(record_verdict)

    def __init__(self, model: Model, settings: JudgeSettings) -> None:
        super().__init__(model, settings)
        self.identity += IDENTITY_SUFFIX


class InspectVerifierSessions(InspectSessions):
    """One verification `RatingSession` per event loop."""

    grader_judge = InspectModelVerifier
    build = staticmethod(build_verifier)
