"""Inspect adapter for judges: the ``grader`` model role as a `Judge`, and a session per loop.

With ``--model-role grader=openai/gpt-4o`` (or any Inspect model) the grader answers the
relevance questions; otherwise the task's ``judge*`` options pick one of our judges. Either
way ratings go through the same `RatingSession` (dedup, disk cache) as in lm-eval.

Before a sample generates anything, the task's ``setup`` (`judge_preflight`) runs our
judge's preflight once (Inspect's own grader models are left to Inspect); when the task
ends, a task whose judge questions failed gets a warning line with their share and the
last error, above the results (`JudgeFailureReport`).
"""

from __future__ import annotations

import asyncio
import atexit
import sys
from collections.abc import Callable
from typing import Any

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.model import GenerateConfig, Model, model_roles
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conceptcomb.scorers.judge_cache import JudgeCache
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.judges import (
    Judge,
    JudgeReply,
    build_judge,
    record_relevance,
    shorten,
)
from conceptcomb.scorers.rating import JudgeUsage, RatingSession, open_cache

GRADER_ROLE = "grader"


class InspectModelJudge(Judge):
    """An Inspect model answering the judge prompt at temperature 0."""

    # How an answer is read; the yes/no verifier swaps it for its own.
    record = staticmethod(record_relevance)

    def __init__(self, model: Model, settings: JudgeSettings) -> None:
        self.model = model
        self.settings = settings
        base_url = getattr(model.api, "base_url", None) or ""
        self.identity = (
            f"inspect|{model}|{base_url}|temperature=0|max_tokens={settings.judge_max_tokens}"
        )
        self._config = GenerateConfig(temperature=0.0, max_tokens=settings.judge_max_tokens)

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
            if self.record(reply, output.completion):
                return reply
        return reply


class InspectSessions:
    """One `RatingSession` per event loop for a scorer, created on first use.

    ``task`` (the task's name) lets `JudgeFailureReport` find the sessions of a task that
    ended.
    """

    def __init__(self, settings: JudgeSettings, task: str | None = None) -> None:
        self.settings = settings
        self.task = task
        self._sessions: dict[int, RatingSession] = {}
        self._cache: JudgeCache | None = None
        self._judges: list[tuple[Judge, JudgeUsage]] = []
        self._uses_grader = False
        atexit.register(self._report)
        if task is not None:
            _RUNNING.append(self)

    # The judge for the grader role, and for the task's judge* options (the verifier's
    # sessions swap both for their yes/no counterparts).
    grader_judge: Callable[[Model, JudgeSettings], Judge] = InspectModelJudge
    build: Callable[[JudgeSettings], Judge] = staticmethod(build_judge)

    def _judge(self) -> Judge | None:
        grader: Any = model_roles().get(GRADER_ROLE)
        if isinstance(grader, list):
            grader = grader[0] if grader else None
        if grader is not None:
            self._uses_grader = True
            return self.grader_judge(grader, self.settings)
        if not self.settings.enabled:
            return None
        self.settings.check_credentials()
        return self.build(self.settings)

    def session(self) -> RatingSession | None:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._sessions:
            judge = self._judge()
            if judge is None:
                return None
            if self._cache is None:
                self._cache = open_cache(self.settings)
            session = RatingSession(judge, self._cache, self.settings.judge_concurrency)
            self._sessions[loop_id] = session
            self._judges.append((judge, session.usage))
        return self._sessions[loop_id]

    async def preflight(self) -> None:
        """Our judge's preflight, once per event loop (`JudgeError` if it cannot work)."""
        session = self.session()
        if session is not None and not self._uses_grader:
            await session.preflight()

    def warn_failures(self) -> None:
        """A warning line per judge whose questions failed (their share, the last error)."""
        for _, usage in self._judges:
            warning = usage.failure_warning()
            if warning:
                print(f"[conceptcomb] {self.task}: {warning}", file=sys.stderr, flush=True)

    def _report(self) -> None:
        for judge, usage in self._judges:
            if not usage.questions:  # e.g. the preflight stopped the run
                continue
            usage.http_requests = getattr(judge, "http_requests", None)
            print(f"[conceptcomb] {usage.summary()}", file=sys.stderr)


# Sessions of tasks that have not ended yet, for `JudgeFailureReport`.
_RUNNING: list[InspectSessions] = []


@solver
def judge_preflight(sessions: InspectSessions) -> Solver:
    """A task's ``setup``: the judge's preflight before the sample generates anything; every
    sample waits for the same single request, and all of them stop if it fails."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await sessions.preflight()
        return state

    return solve


@hooks(name="conceptcomb_judge_failures", description="Warns when judge questions failed.")
class JudgeFailureReport(Hooks):
    """At the end of a task (before Inspect shows its results): the warning line of
    `InspectSessions.warn_failures` for that task's judge."""

    def enabled(self) -> bool:
        # Off while none of our judged tasks runs: Inspect then neither lists nor calls it.
        return bool(_RUNNING)

    async def on_task_end(self, data: TaskEnd) -> None:
        name = data.log.eval.task.rsplit("/", 1)[-1]
        for sessions in [s for s in _RUNNING if s.task == name]:
            _RUNNING.remove(sessions)
            sessions.warn_failures()
