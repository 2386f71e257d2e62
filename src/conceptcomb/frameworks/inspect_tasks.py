"""The Inspect adapter every benchmark shares: the judge options and the task builder.

Each benchmark's ``inspect_tasks.py`` declares one ``@task`` function per task name (``grep
"def ccpt_pi_emergent"`` finds it), each a one-line call into that benchmark's builder,
which ends in `build_task`. A task's options are one TypedDict per kind of task
(``**options: Unpack[CcptOptions]``); those of a task that judges extend `JudgeOptions`,
the one definition of the judge options. Inspect hands a task whose signature has ``**``
every ``-T`` option (one without drops an unknown option with a warning), so the builder
calls `check_options` and a misspelt option fails with a one-line error before any work.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypedDict

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import Metric, Scorer, mean, stderr
from inspect_ai.solver import Solver, generate

from conceptcomb.common.contract import MetricInfo
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.inspect_metrics import means, totals
from conceptcomb.common.offline import prime_tiktoken_cache
from conceptcomb.scorers.judge_settings import JudgeSettings


class JudgeOptions(TypedDict, total=False):
    """The ``-T`` judge options of every task that judges (`conceptcomb.scorers.judge_settings`).

    Each one left out (or None) falls back to its ``CONCEPTCOMB_JUDGE*`` variable, then to
    the default given here. The judge is an Inspect model in the ``grader`` role: these
    options describe it (`conceptcomb.scorers.inspect_judge.default_grader`), or
    ``--model-role grader=MODEL`` names it (not both); ``judge=local`` is our offline judge.
    """

    judge: str | None
    """``openai`` (any OpenAI-compatible endpoint; the default), ``local`` or ``off``."""
    judge_model: str | None
    """Model name (default ``gpt-4o``, the paper's judge) or a local model's path."""
    judge_base_url: str | list[str] | None
    """The endpoint, or several (comma-separated or a list) sharing the load."""
    judge_api_key_env: str | None
    """NAME of the environment variable holding the key (default ``OPENAI_API_KEY``)."""
    judge_concurrency: int | None
    """Requests in flight per endpoint (default 16)."""
    judge_cache: str | None
    """The judge cache file, or ``off`` (default: the user cache folder)."""


JUDGE_OPTIONS: tuple[str, ...] = tuple(JudgeOptions.__annotations__)


def check_options(task: str, options: Mapping[str, object], accepted: type) -> None:
    """Refuse a ``-T`` option that ``accepted`` (the task's options TypedDict) does not name."""
    names = accepted.__required_keys__ | accepted.__optional_keys__  # type: ignore[attr-defined]
    unknown = sorted(set(options) - names)
    if unknown:
        raise ConfigError(
            f"{task} has no option {', '.join(unknown)} (-T): its options are "
            f"{', '.join(sorted(names))}."
        )


def judge_settings(options: Mapping[str, object], needs_judge: bool = True) -> JudgeSettings:
    """The judge settings from a task's options (`JudgeOptions`; others are ignored).

    An explicit judge choice of a task that judges is checked for credentials up front,
    before any data is loaded or any model called.
    """
    chosen = {name: options.get(name) for name in JUDGE_OPTIONS}
    settings = JudgeSettings.resolve(chosen)
    if needs_judge and any(value is not None for value in chosen.values()):
        settings.check_credentials()
    return settings


ScorerMetrics = list[Metric | dict[str, list[Metric]]] | dict[str, list[Metric]]


def item_metrics(
    infos: Iterable[MetricInfo], together: Collection[str] = (), extra: Sequence[Metric] = ()
) -> ScorerMetrics:
    """Inspect metrics of a scorer's per-item values: each score's mean and standard error
    per key (Inspect's way, shown while the task runs); the counts one `totals` metric, the
    means named in ``together`` (ccpt_tp's confusion-matrix cells) one `means` metric, and
    the ``extra`` ones (corpus metrics). Why not every key alike: Inspect computes a
    per-key dict by deep-copying every sample's score once per key, about once a second
    while the task runs, which for ccpt_tp's 19 keys cost more than the rest of the task."""
    infos = [info for info in infos if info.aggregation != "corpus"]
    per_key: dict[str, list[Metric]] = {
        info.name: [mean(), stderr()]
        for info in infos
        if info.aggregation != "sum" and info.name not in together
    }
    counts = [info.name for info in infos if info.aggregation == "sum"]
    groups = [*([means(list(together))] if together else []), *([totals(counts)] if counts else [])]
    return [per_key, *groups, *extra] if groups or extra else per_key


class _SharedDict(dict):
    """A read-only record's dict: its deep copy is itself (see `score_metadata`)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedDict:
        return self


class _SharedList(list):
    """A read-only record's list: its deep copy is itself."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedList:
        return self


def score_metadata(record: Mapping[str, Any]) -> dict[str, Any]:
    """A score's metadata (the item's scoring record) whose deep copies share its values.

    Inspect deep-copies every sample's score once per key of a metric dict to compute the
    metrics (`scorers_from_metric_dict`), each copy with the whole record, which nothing
    changes once scored: the copies share its lists and dicts instead (the log holds them
    as ever).
    """
    return {
        key: _SharedDict(value)
        if isinstance(value, dict)
        else _SharedList(value)
        if isinstance(value, list)
        else value
        for key, value in record.items()
    }


_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def chat(turns: Iterable[tuple[str, str]]) -> list[ChatMessage]:
    """(role, text) turns -> Inspect chat messages: how a sample's input is written."""
    return [_ROLES[role](content=text) for role, text in turns]


def build_task(
    name: str,
    samples: Sequence[Sample],
    scorer: Scorer,
    config: GenerateConfig,
    version: str,
    metadata: dict[str, object],
    solver: Solver | None = None,
    setup: Solver | None = None,
) -> Task:
    """An Inspect task of one benchmark: its samples, scorer, generation settings (greedy by
    default; ``--temperature`` etc. override them), version and what the log records."""
    # Inspect counts tokens with tiktoken's o200k_base, a download: rebuilt offline, once.
    prime_tiktoken_cache()
    return Task(
        dataset=MemoryDataset(list(samples), name=name),
        setup=setup,
        solver=solver or generate(),
        scorer=scorer,
        config=config,
        version=version,
        metadata=metadata,
    )
