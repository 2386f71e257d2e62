"""Inspect adapter for judges: the judge is an Inspect model, in the ``grader`` role.

``--model-role grader=MODEL`` (``openai/gpt-4o``, ``anthropic/...``, ``vllm/...``,
``hf/...``: any Inspect model) answers the questions. Without it the task's ``judge*``
options (or ``CONCEPTCOMB_JUDGE*``) build the grader the Inspect way, ``get_model(role=
"grader", default=...)`` (`default_grader`): ``openai/gpt-4o`` by default (OpenAI's
endpoint, or ``OPENAI_BASE_URL``), ``openai-api/judge/NAME`` with ``base_url`` for
``judge_base_url`` (one model per replica). So every judge call is an Inspect model call:
in the transcript (``inspect view``), in the log's model usage, under ``--max-connections``
and Inspect's retries. Only ``judge=local`` (the offline expected-rating judge, which
reads a next-token distribution rather than generating) stays our own
(`conceptcomb.scorers.local_judge`).

Either way ratings go through the same `RatingSession` as in lm-eval (each distinct question
asked once, the disk cache, failures counted and never scored), under an identity that
names the judge and not the client (`conceptcomb.scorers.judge_base.chat_identity`): an
Inspect model speaking OpenAI's chat protocol to an endpoint shares its cached ratings with
lm-eval's judge at that endpoint.

Before a sample generates anything, the task's ``setup`` (`judge_preflight`) sends the
judge one small request and stops the run with a one-line `JudgeError` if it cannot work;
when the task ends, a task whose judge questions failed gets a warning line with their
share and the last error, above the results (`JudgeFailureReport`).
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.model import GenerateConfig, Model, ResponseSchema, get_model, model_roles
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema

from conceptcomb.common.errors import ConfigError, JudgeError
from conceptcomb.common.inspect_internals import in_eval, openai_chat_base_url
from conceptcomb.scorers import rating
from conceptcomb.scorers.api_judge import PREFLIGHT_PROMPT, RELEVANCE_SCHEMA
from conceptcomb.scorers.judge_base import ChatJudge, chat_identity, redact_url
from conceptcomb.scorers.judge_cache import JudgeCache
from conceptcomb.scorers.judge_errors import (
    UNUSABLE_STATUSES,
    http_status,
    is_transient,
    unreachable_cause,
)
from conceptcomb.scorers.judge_settings import (
    JudgeSettings,
    environment_value,
    split_base_urls,
)
from conceptcomb.scorers.judges import (
    Judge,
    JudgeReply,
    build_judge,
    record_relevance,
    shorten,
)
from conceptcomb.scorers.rating import JudgeUsage, RatingSession, open_cache, run_coroutine

GRADER_ROLE = "grader"
# The -T options that choose the judge: with --model-role grader as well, two choices.
CHOOSING_OPTIONS = ("judge", "judge_model", "judge_base_url", "judge_api_key_env")
# The service name of the openai-api model built for judge_base_url (judge-2, ... for replicas).
SERVICE = "judge"
# Requests in flight are Inspect's to bound (max_connections), not the rating session's.
UNBOUNDED = 1_000_000


def chosen_options(options: Mapping[str, object]) -> frozenset[str]:
    """The judge-choosing ``-T`` options a task was given (not those from the environment)."""
    return frozenset(name for name in CHOOSING_OPTIONS if options.get(name) is not None)


def default_grader(settings: JudgeSettings, memoize: bool = True) -> list[Model]:
    """The grader the judge options describe, one Inspect model per endpoint.

    ``get_model(role="grader", default=...)``: ``openai/MODEL`` (OpenAI's endpoint, or
    ``OPENAI_BASE_URL``) without ``judge_base_url``, else ``openai-api/judge/MODEL`` at that
    URL (``judge-2``, ... for further replicas, so that each has its own connections). The key
    is read from ``judge_api_key_env`` here and handed to the model, never to a log.
    ``judge_concurrency`` is the model's ``max_connections`` (``--max-connections`` wins),
    ``judge_max_retries`` its ``max_retries`` (``--max-retries`` wins) and ``judge_timeout``
    its ``attempt_timeout``.
    """
    config = GenerateConfig(
        max_connections=settings.judge_concurrency,
        max_retries=settings.judge_max_retries,
        attempt_timeout=max(1, round(settings.judge_timeout)),
    )
    key = os.environ.get(settings.judge_api_key_env) or None
    name = settings.model_name
    urls = split_base_urls(settings.judge_base_url)
    if not urls:
        return [
            get_model(
                role=GRADER_ROLE,
                default=f"openai/{name}",
                config=config,
                api_key=key,
                memoize=memoize,
            )
        ]
    return [
        get_model(
            role=GRADER_ROLE,
            default=f"openai-api/{SERVICE if i == 0 else f'{SERVICE}-{i + 1}'}/{name}",
            config=config,
            base_url=url,
            api_key=key or "EMPTY",  # a self-hosted endpoint usually needs none
            memoize=memoize,
        )
        for i, url in enumerate(urls)
    ]


def openai_chat_endpoint(model: Model) -> str | None:
    """The base URL (no credentials, no trailing slash) of a model that sends OpenAI chat
    completions there, as lm-eval's judge does; None for any other model (another
    protocol, the Responses API, Azure, Bedrock, a local model)."""
    base_url = openai_chat_base_url(model)
    return redact_url(base_url) if base_url else None


def wire_model_name(model: Model) -> str:
    """The model name the endpoint is sent (``gpt-4o`` for ``openai-api/judge/gpt-4o``)."""
    api: Any = model.api
    service_name = getattr(api, "service_model_name", None)
    return str(service_name()) if callable(service_name) else api.model_name


def grader_identity(models: Sequence[Model], settings: JudgeSettings) -> str:
    """The identity of a judge made of Inspect models: `chat_identity` when they send OpenAI
    chat completions (the same as lm-eval's judge at those endpoints), else
    ``inspect|PROVIDER/MODEL|BASE_URL|temperature=0|max_tokens=N``."""
    endpoints = [openai_chat_endpoint(model) for model in models]
    names = {wire_model_name(model) for model in models}
    if all(endpoints) and len(names) == 1:
        endpoint = ",".join(sorted({e for e in endpoints if e}))
        return chat_identity(
            endpoint, names.pop(), settings.judge_max_tokens, settings.judge_response_format
        )
    model = models[0]
    base_url = redact_url(getattr(model.api, "base_url", None) or "")
    identity = f"inspect|{model}|{base_url}|temperature=0|max_tokens={settings.judge_max_tokens}"
    if settings.judge_response_format != "text":
        identity += f"|response_format={settings.judge_response_format}"
    return identity


class InspectModelJudge(ChatJudge):
    """Inspect models (one, or one per replica) answering the judge prompt at temperature 0.

    Transport faults are Inspect's to retry; what still fails, and answers without a rating
    after ``judge_format_retries`` re-asks, come back as failures, never as ratings. A
    refused key or an unknown model (401/403/404) answers every later question unasked.
    """

    # How an answer is read and the JSON it must have; the yes/no verifier swaps them.
    record = staticmethod(record_relevance)
    answer_name, answer_schema = "relevance", RELEVANCE_SCHEMA

    def __init__(
        self,
        models: Model | Sequence[Model],
        settings: JudgeSettings,
        secret: str | None = None,
    ) -> None:
        self.models = [models] if isinstance(models, Model) else list(models)
        self.model = self.models[0]
        self.settings = settings
        self.replicas = len(self.models)
        self.identity = grader_identity(self.models, settings)
        # Only to scrub it from error messages an endpoint might echo.
        self._secrets = {s for s in (secret, *map(_api_key, self.models)) if s and s != "EMPTY"}
        self._busy = [0] * len(self.models)
        self._asked_names = {wire_model_name(model) for model in self.models}
        self._chat_endpoints = all(openai_chat_endpoint(model) for model in self.models)
        self.unusable = None
        self._config = GenerateConfig(temperature=0.0, max_tokens=settings.judge_max_tokens)
        kind = settings.judge_response_format
        if kind == "json_schema":
            self._config.response_format = ResponseSchema(
                name=self.answer_name,
                json_schema=JSONSchema.model_validate(self.answer_schema),
                strict=True,
            )
        elif kind == "json_object":  # llama.cpp's dialect: no Inspect field for it
            body = {"type": "json_object", "schema": self.answer_schema}
            self._config.extra_body = {"response_format": body}

    async def _generate(self, prompt: str, config: GenerateConfig) -> Any:
        """One question to the replica with the fewest in flight."""
        index = min(range(len(self.models)), key=self._busy.__getitem__)
        self._busy[index] += 1
        try:
            return await self.models[index].generate(prompt, config=config)
        finally:
            self._busy[index] -= 1

    async def _completion(self, prompt: str, reply: JudgeReply) -> str:
        reply.requests += 1  # a failed one too
        output = await self._generate(prompt, self._config)
        if output.usage is not None:
            reply.input_tokens += output.usage.input_tokens
            reply.output_tokens += output.usage.output_tokens
        reply.snapshot = self._snapshot(output.model) or reply.snapshot
        return output.completion

    def _snapshot(self, named: object) -> str | None:
        """The model an OpenAI chat answer names where it is not the one asked
        (``gpt-4o-2024-08-06`` for ``gpt-4o``), as lm-eval's judge records it; None for an
        echo and for other providers (whose outputs name the provider's model string)."""
        if not isinstance(named, str) or not named or named in self._asked_names:
            return None
        return named if self._chat_endpoints else None

    def _failure(self, err: Exception) -> str:
        err = _unwrap(err)  # Inspect already retried what a retry may fix
        if http_status(err) in UNUSABLE_STATUSES:  # never retried, never asked again
            self.unusable = self._unusable_message(err)
            return self.unusable
        return self._scrub(f"{type(err).__name__}: {shorten(str(err))}")

    async def preflight(self) -> None:
        """One small request to each replica before the run: `JudgeError` at once when one
        cannot be reached, refuses the key or does not know the model; a transient fault
        is retried as during the run. Nothing when this judge, with these keys, passed it
        already in this process (when the task was built: `check_judge`)."""
        if self.checked_key in rating._CHECKED:
            return
        errors = await asyncio.gather(
            *(self._check(model) for model in self.models), return_exceptions=True
        )
        for error in errors:
            if isinstance(error, BaseException):
                raise error
        rating._CHECKED.add(self.checked_key)

    @property
    def checked_key(self) -> tuple[str, str]:
        """(the models' identity, digest of their keys): what a passed preflight is
        remembered by, whichever questions (ratings, verdicts) the judge then asks."""
        keys = "|".join(sorted(filter(None, map(_api_key, self.models))))
        identity = grader_identity(self.models, self.settings)
        return identity, hashlib.sha256(keys.encode()).hexdigest()

    async def _check(self, model: Model) -> None:
        quick = GenerateConfig(temperature=0.0, max_tokens=16, max_retries=0)
        try:
            try:
                # No retries: a refused port or unknown host fails now, not in a minute.
                await model.generate(PREFLIGHT_PROMPT, config=quick)
            except Exception as err:
                if not is_transient(_unwrap(err)):
                    raise
                await model.generate(PREFLIGHT_PROMPT, config=quick.merge(self._retrying()))
        except Exception as err:
            raise JudgeError(self._unusable_message(_unwrap(err), model)) from None

    def _retrying(self) -> GenerateConfig:
        return GenerateConfig(max_retries=self.settings.judge_max_retries)

    def _unusable_message(self, err: BaseException, model: Model | None = None) -> str:
        """One line: the model, where it is, what went wrong and what to do."""
        model = model or self.model
        endpoint = openai_chat_endpoint(model) or getattr(model.api, "base_url", None)
        where = f"The judge {model}" + (f" at {redact_url(endpoint)}" if endpoint else "")
        status = http_status(err)
        if status in (401, 403):
            what, fix = "refused the API key", "check the key (judge_api_key_env: its variable)"
        elif status == 404:
            what, fix = "does not know the model or the route", "check the model name and base URL"
        elif unreachable := unreachable_cause(err):
            what, fix = "cannot be reached", "check the base URL and that the server is running"
            err = unreachable
        elif not is_transient(err):
            what, fix = "refused the request", "check the model and judge_max_tokens"
        else:
            what, fix = "did not answer usably", "try again later, or raise --max-retries"
        detail = f"{type(err).__name__}: {shorten(str(err))}"
        return self._scrub(
            f"{where} (grader role) {what} ({detail}): {fix}; judge=off runs without a judge."
        )

    def _scrub(self, text: str) -> str:
        """An endpoint may echo the key in an error: never pass it on."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


def _api_key(model: Model) -> str | None:
    key = getattr(model.api, "api_key", None)
    return key if isinstance(key, str) else None


def _unwrap(err: BaseException) -> BaseException:
    """The last attempt's error behind tenacity's RetryError (Inspect's retries)."""
    attempt = getattr(err, "last_attempt", None)
    inner = attempt.exception() if attempt is not None else None
    return inner if isinstance(inner, BaseException) else err


# Providers whose models run in this process (or a server Inspect starts for them): a
# model object of theirs is the loaded model, with nothing to reach; and a second one would
# load the weights again.
LOCAL_PROVIDERS = frozenset(
    {"hf", "vllm", "sglang", "llama-cpp-python", "transformer_lens", "mockllm", "none"}
)


def check_judge(settings: JudgeSettings, chosen: frozenset[str] = frozenset()) -> None:
    """The judge's checks when a task is built, before any model generates (Inspect builds
    tasks after it has made the models and their roles, before any sample runs).

    Inside an eval: the ``grader`` role conflicting with ``-T`` judge options, and one small
    request to the grader (the role's models, or those the options describe; each a model
    of its own, in a thread of its own: the run's models stay untouched), whose failure is a
    one-line `JudgeError`; ``judge=local``: its libraries and model found, then loaded.
    A task built outside an eval (``Task`` objects handed to ``eval()``, which may give the
    role) gets the checks that need no role (key, local model found) when a judge option
    was given, and its ``setup`` asks the judge when the task runs (`preflight_setup`).
    """
    from conceptcomb.scorers.judge_checks import check_local_judge, load_local_judge

    if not in_eval():
        if chosen and settings.enabled:
            settings.check_credentials()
            check_local_judge(settings)
        return
    grader = _role_models()
    if grader:
        _refuse_two_choices(grader[0], chosen)
        remote = [model for model in grader if _provider(model) not in LOCAL_PROVIDERS]
        if remote:
            _preflight_copies(remote, settings)
        return
    if not settings.enabled:
        return
    if settings.judge == "local":
        load_local_judge(settings)
        return
    settings.check_credentials()
    if not chosen and not any(environment_value(name) for name in CHOOSING_OPTIONS):
        print(f"[conceptcomb] {default_judge_line(settings)}", file=sys.stderr, flush=True)
    run_coroutine(_preflight_described(settings))


def default_judge_line(settings: JudgeSettings) -> str:
    """What a judged task says when nothing chose its judge: the model it asks, never the
    model under test, and how to choose another."""
    where = os.environ.get("OPENAI_BASE_URL") or "OpenAI's API"
    return (
        f"no judge chosen: the judge is openai/{settings.model_name} (the paper's) at "
        f"{redact_url(where)}; --model-role grader=MODEL or -T judge_base_url=... chooses "
        "another, -T judge=off runs without one."
    )


def _role_models() -> list[Model]:
    grader: Any = model_roles().get(GRADER_ROLE)
    if grader is None:
        return []
    return list(grader) if isinstance(grader, list | tuple) else [grader]


def _refuse_two_choices(grader: Model, chosen: frozenset[str]) -> None:
    if chosen:
        given = ", ".join(f"-T {name}" for name in sorted(chosen))
        raise ConfigError(
            f"--model-role grader={grader} and {given} both choose the judge: "
            "pass only one of them."
        )


def _provider(model: Model) -> str:
    return str(model).split("/", 1)[0]


def _preflight_copies(models: Sequence[Model], settings: JudgeSettings) -> None:
    """The preflight of the role's models, each through a copy made in the preflight's own
    event loop (a client is bound to the loop that first used it)."""

    async def check() -> None:
        copies = [
            get_model(
                str(model),
                config=model.config,
                base_url=model.api.base_url,
                api_key=_api_key(model),
                memoize=False,
                **model.model_args,
            )
            for model in models
        ]
        await _preflight_and_close(InspectModelJudge(copies, settings), copies)

    run_coroutine(check())


async def _preflight_described(settings: JudgeSettings) -> None:
    """The preflight of the grader the judge options describe (`default_grader`)."""
    secret = os.environ.get(settings.judge_api_key_env)
    models = default_grader(settings, memoize=False)
    await _preflight_and_close(InspectModelJudge(models, settings, secret), models)


async def _preflight_and_close(judge: InspectModelJudge, models: Sequence[Model]) -> None:
    try:
        await judge.preflight()
    finally:
        for model in models:
            await model.api.aclose()


class InspectSessions:
    """One `RatingSession` per event loop for a scorer, created on first use.

    ``task`` (the task's name) lets `JudgeFailureReport` find the sessions of a task that
    ended; ``chosen`` names the judge-choosing ``-T`` options the task was given
    (`chosen_options`), which conflict with ``--model-role grader``. ``required`` names the
    scorer (``conceptcomb/ccpt_judge``) whose judge can only be the ``grader`` role, as
    Inspect's ``get_model(role="grader", required=True)``: ``inspect score`` without
    ``--model-role grader`` (nor one in the log) stops with one line, and never asks the
    model under test nor a default judge.
    """

    def __init__(
        self,
        settings: JudgeSettings,
        task: str | None = None,
        chosen: frozenset[str] = frozenset(),
        required: str | None = None,
    ) -> None:
        self.settings = settings
        self.task = task
        self.chosen = chosen
        self.required = required
        self._sessions: dict[int, RatingSession] = {}
        self._cache: JudgeCache | None = None
        self._judges: list[tuple[Judge, JudgeUsage]] = []
        atexit.register(self._report)
        if task is not None:
            _RUNNING.append(self)

    # The judge made of Inspect models, and our own (judge=local); the verifier's sessions
    # swap both for their yes/no counterparts.
    grader_judge: Callable[..., Judge] = InspectModelJudge
    build: Callable[[JudgeSettings], Judge] = staticmethod(build_judge)

    def _judge(self) -> Judge | None:
        grader: Any = model_roles().get(GRADER_ROLE)
        if isinstance(grader, list):
            grader = grader[0] if grader else None
        if grader is not None:
            _refuse_two_choices(grader, self.chosen)
            return self.grader_judge(grader, self.settings)
        if self.required:
            raise ConfigError(
                f"{self.required} asks the judge in the {GRADER_ROLE} role, and none is given: "
                f"add --model-role {GRADER_ROLE}=MODEL (e.g. openai/gpt-4o, the paper's judge)."
            )
        if not self.settings.enabled:
            return None
        if self.settings.judge != "openai":  # judge=local: our offline judge
            return self.build(self.settings)
        self.settings.check_credentials()
        secret = os.environ.get(self.settings.judge_api_key_env)
        return self.grader_judge(default_grader(self.settings), self.settings, secret)

    def session(self) -> RatingSession | None:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._sessions:
            judge = self._judge()
            if judge is None:
                return None
            if self._cache is None:
                self._cache = open_cache(self.settings)
            # An Inspect model's requests in flight are bounded by Inspect (max_connections).
            inspect_model = isinstance(judge, InspectModelJudge)
            slots = UNBOUNDED if inspect_model else self.settings.judge_concurrency
            session = RatingSession(judge, self._cache, slots)
            self._sessions[loop_id] = session
            self._judges.append((judge, session.usage))
        return self._sessions[loop_id]

    async def preflight(self) -> None:
        """The judge's preflight, once per event loop (`JudgeError` if it cannot work)."""
        session = self.session()
        if session is not None:
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


def preflight_setup(sessions: InspectSessions | None) -> Solver | None:
    """A task's ``setup``: `judge_preflight` while its judge is on, else none (a setup solver
    costs every sample a span of events in the log, ~0.4 ms, for nothing)."""
    if sessions is None or not sessions.settings.enabled:
        return None
    return judge_preflight(sessions)


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
