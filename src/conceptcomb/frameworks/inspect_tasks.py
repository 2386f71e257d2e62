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

import difflib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypedDict

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import Metric, Score, Scorer, mean, stderr
from inspect_ai.solver import Solver, generate
from inspect_ai.viewer import ScoreColorScale, TaskSamplesColumn, TaskSamplesView, ViewerConfig

from conceptcomb.common.contract import MetricInfo
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.evidence import GROUPED_METRICS
from conceptcomb.common.inspect_metrics import means, totals
from conceptcomb.common.offline import prime_tiktoken_cache
from conceptcomb.frameworks.inspect_runs import task_built
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.local_judge import check_local_judge as check_local_device


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
    judge_device: str | None
    """``judge=local``: ``auto`` (the GPU when there is one; default), ``cpu``, ``cuda:N``."""
    judge_dtype: str | None
    """``judge=local``: ``auto`` (bfloat16 on a GPU that has it, else float32; default)."""
    judge_batch_size: int | None
    """``judge=local``: questions per forward pass (default 16)."""


JUDGE_OPTIONS: tuple[str, ...] = tuple(JudgeOptions.__annotations__)


def check_options(task: str, options: Mapping[str, object], accepted: type) -> None:
    """Refuse a ``-T`` option that ``accepted`` (the task's options TypedDict) does not name."""
    names = accepted.__required_keys__ | accepted.__optional_keys__  # type: ignore[attr-defined]
    unknown = sorted(set(options) - names)
    if unknown:
        meant = [
            found[0] for name in unknown if (found := difflib.get_close_matches(name, names, 1))
        ]
        hint = f" Did you mean {', '.join(meant)}?" if meant else ""
        raise ConfigError(
            f"{task} has no option {', '.join(unknown)} (-T): its options are "
            f"{', '.join(sorted(names))}.{hint}"
        )


def judge_settings(options: Mapping[str, object], needs_judge: bool = True) -> JudgeSettings:
    """The judge settings from a task's options (`JudgeOptions`; others are ignored).

    A task that judges checks its judge here, up front, before any data is loaded or any
    model generates (`conceptcomb.scorers.inspect_judge.check_judge`: key, grader reached,
    local model found and loaded).
    """
    from conceptcomb.scorers.inspect_judge import check_judge, chosen_options

    chosen = {name: options.get(name) for name in JUDGE_OPTIONS}
    settings = JudgeSettings.resolve(chosen)
    if needs_judge and settings.judge == "local":
        check_local_device(settings)  # a device torch does not see: one line, before any load
    if needs_judge:
        check_judge(settings, chosen_options(options))
    return settings


ScorerMetrics = list[Metric | dict[str, list[Metric]]] | dict[str, list[Metric]]


@dataclass(frozen=True)
class ItemMetrics:
    """A scorer's per-item metrics as Inspect takes them (`metrics`) and gives them (`score`).

    Each mean is a key of the score's value: Inspect shows its mean and standard error per
    key while the task runs. The counts (one `totals` metric) and the means named in
    ``together`` (ccpt_tp's confusion-matrix cells: one `means` metric) go in the score's
    metadata instead (`GROUPED_METRICS`), which Inspect does not walk key by key for every
    sample each time it computes the metrics (`conceptcomb.common.inspect_metrics`); the
    ``extra`` metrics (corpus metrics) read what they need from the scores themselves.
    """

    infos: Sequence[MetricInfo]
    together: Collection[str] = ()
    extra: Sequence[Metric] = ()

    @cached_property
    def counts(self) -> list[str]:
        return [info.name for info in self.infos if info.aggregation == "sum"]

    @cached_property  # read for every sample scored
    def grouped(self) -> frozenset[str]:
        return frozenset(self.counts) | frozenset(self.together)

    @cached_property
    def keys(self) -> list[MetricInfo]:
        """The means each score's value holds, one key each (the rest: its metadata)."""
        return [
            info
            for info in self.infos
            if info.aggregation == "mean" and info.name not in self.grouped
        ]

    def columns(self, scorer: str, *extra: str, builtins: Sequence[str] = ()) -> SampleColumns:
        """Inspect View's sample list of a scorer of these metrics: each key of its value
        (and ``extra`` keys: AbsPyramid's label and prediction) after the ``builtins``
        (default: `SampleColumns`')."""
        chosen = {"builtins": tuple(builtins)} if builtins else {}
        return SampleColumns(scorer, [*self.keys, *extra], **chosen)

    def metrics(self) -> ScorerMetrics:
        grouped = self.grouped
        per_key: dict[str, list[Metric]] = {
            info.name: [mean(), stderr()]
            for info in self.infos
            if info.aggregation == "mean" and info.name not in grouped
        }
        groups = [
            *([means(list(self.together))] if self.together else []),
            *([totals(self.counts)] if self.counts else []),
        ]
        return [per_key, *groups, *self.extra] if groups or self.extra else per_key

    def score(
        self,
        values: Mapping[str, Any],
        *,
        answer: str | None = None,
        explanation: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Score:
        """An item's Score from all its per-item values (NaN: undefined, left out) and the
        record kept beside them (shared by Inspect's copies: `score_metadata`)."""
        grouped = self.grouped
        record = dict(metadata or {})
        if grouped:
            record[GROUPED_METRICS] = {k: v for k, v in values.items() if k in grouped}
        return Score(
            value={name: v for name, v in values.items() if name not in grouped},
            answer=answer,
            explanation=explanation,
            metadata=score_metadata(record),
        )


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


@dataclass(frozen=True)
class SampleColumns:
    """A task's columns in Inspect View's sample list (``Task(viewer=...)``), declared by its
    benchmark's room: the built-in columns (the item's id, the prompt, the target, the
    parsed answer) and the per-item values of the scorer's ``scores`` keys, labelled by
    their cards' titles and coloured on their scales (higher or lower better).

    Inspect 0.3.285's sample list takes built-in and score columns only: an item's fields
    (CCPT's property type, CGGC's structure type) stay in the sample's metadata, which its
    filter bar reads (``metadata.structure_type == "A"``)."""

    scorer: str  # the scorer's name: the key of ``sample.scores``
    scores: Sequence[MetricInfo | str]  # the keys of its value shown, in this order
    builtins: Sequence[str] = ("sampleId", "input", "target", "answer")

    def without_suffix(self, suffix: str) -> SampleColumns:
        """These columns less the score keys ending in ``suffix`` (McRae's strict P@k)."""
        kept = [s for s in self.scores if not _score_name(s).endswith(suffix)]
        return SampleColumns(self.scorer, kept, self.builtins)

    def viewer(self, task: str) -> ViewerConfig:
        infos = [s for s in self.scores if isinstance(s, MetricInfo)]
        names = [_score_name(s) for s in self.scores]
        columns = [TaskSamplesColumn(id=column) for column in self.builtins]
        columns += [TaskSamplesColumn.score(self.scorer, name) for name in names]
        labels = {info.name: info.title for info in infos if info.title and info.title != info.name}
        return ViewerConfig(
            task_samples_view=TaskSamplesView(
                name=task,
                columns=columns,
                score_labels=labels or None,
                score_color_scales={
                    info.name: ScoreColorScale(
                        palette="good-high" if info.higher_is_better else "good-low",
                        min=info.scale.low,
                        max=info.scale.high,
                    )
                    for info in infos
                    if info.scale is not None and info.scale.high is not None
                }
                or None,
            )
        )


def _score_name(score: MetricInfo | str) -> str:
    return score.name if isinstance(score, MetricInfo) else score


def build_task(
    name: str,
    samples: Sequence[Sample],
    scorer: Scorer,
    config: GenerateConfig,
    version: str,
    metadata: dict[str, object],
    solver: Solver | None = None,
    setup: Solver | None = None,
    headline: str | HeadlineMetric | None = None,
    columns: SampleColumns | None = None,
) -> Task:
    """An Inspect task of one benchmark: its samples, scorer, generation settings (greedy by
    default; ``--temperature`` etc. override them), version and what the log records;
    ``headline`` is the card's headline metric, what sums the task up (log listings, the
    progress line; else Inspect takes the scorer's first metric): a name is a per-key
    score's mean (`ItemMetrics`), a `HeadlineMetric` anything else (a corpus metric:
    ``HeadlineMetric(metric=name)``); ``columns``: its sample list in Inspect View."""
    if isinstance(headline, str):
        headline = HeadlineMetric(score=headline, metric="mean")
    task_built(name)  # a model whose server cannot start: one line, before any sample
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
        headline_metric=headline,
        viewer=None if columns is None else columns.viewer(name),
    )
