"""The benchmark contract: what every benchmark folder provides, in one typed shape.

A benchmark is a folder ``conceptcomb/<key>/`` whose ``benchmark.py`` defines one
`Benchmark` (and the functions it reads there) and which is listed once in
`conceptcomb.benchmarks.REGISTRY`. Everything
that spans benchmarks (the ``conceptcomb`` command, the Inspect entry point, the report,
leaderboard bundles, packaging) iterates that registry and asks each benchmark through
this contract; nothing outside a benchmark's folder names its tasks, tables or files.

Layers, each importing only from those before it (``tests/test_layers.py``): ``common``
(this contract, readers, table shapes), ``scorers`` (judges), ``frameworks`` (the shared
lm-eval and Inspect adapters), the benchmark folders (never each other), then the registry
and what iterates it (``cli``, ``leaderboard``, the Inspect entry point, ``demo``).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from conceptcomb.common.datafiles import PinnedDataset
    from conceptcomb.common.evalcard import EvalCard
    from conceptcomb.common.evidence import EvidenceAdapter
    from conceptcomb.common.hubfiles import HubDataset
    from conceptcomb.common.results import ScoreReport
    from conceptcomb.common.runs import Run
    from conceptcomb.common.tables import PlotSpec, PublishedRow, Table

Aggregation = Literal["mean", "sum", "corpus"]


@dataclass(frozen=True)
class Scale:
    """The values a metric can take, as leaderboards record them (Every Eval Ever's
    ``metric_unit``, ``min_score``, ``max_score``): None is unbounded."""

    unit: str  # "percent", "count", "proportion", "properties"...
    low: float | None
    high: float | None


PERCENT = Scale("percent", 0.0, 100.0)  # most metrics here: x100, as the papers print them
PROPORTION = Scale("proportion", 0.0, 1.0)
COUNT = Scale("count", 0.0, None)  # a "sum" metric: items (or replies) counted


@dataclass(frozen=True)
class MetricInfo:
    """One metric a task reports, the same shape for every benchmark and framework."""

    name: str  # as the frameworks report it (results files, leaderboards)
    higher_is_better: bool = True
    # "mean": of item values (NaN left out); "sum": a count over items (failures);
    # "corpus": computed over all items at once (BLEU, CIDEr, macro-F1).
    aggregation: Aggregation = "mean"
    title: str = ""  # as the paper's tables print it ("ROUGE-2")
    # Its range (None: not declared; a "sum" is a COUNT): leaderboard exports need it.
    scale: Scale | None = None
    judged: bool = False  # an LLM judge's ratings decide its values

    @property
    def value_scale(self) -> Scale | None:
        return self.scale or (COUNT if self.aggregation == "sum" else None)


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: the folder ``conceptcomb/<key>/`` (or ``package``), declared by its
    ``benchmark.py`` (``BENCHMARK = Benchmark(key)``) and listed in the registry. What it
    provides is read from the files every benchmark folder holds, each module imported on
    first use (listing the benchmarks, as the Inspect entry point does for every ``inspect
    eval``, imports no model, spaCy or data):

    * ``eval.yaml``, its card (`conceptcomb.common.evalcard`): title, paper, version,
      licence, tasks with their sample counts and headline metrics, pinned data; the title
      and paper here are read from it (given explicitly only by a folder without a card);
    * ``benchmark.py``: ``tasks() -> {task name: [MetricInfo]}``, every task it registers in
      lm-eval and Inspect with the metrics it reports, in order; ``datasets() -> {key:
      PinnedDataset | HubDataset}``, its pinned sources (``conceptcomb data fetch KEY``);
      and, where it has them: ``rescore(task, predictions, judge_settings, samples_output,
      options) -> ScoreReport`` (``conceptcomb score``), ``judged(task) -> bool`` (an LLM
      judge scores it: a bundle records the judge), ``local_data_records(data_dir) ->
      [record]`` (data the user built, for bundles);
    * ``evidence.py``, where bundles' items can be checked again: ``EVIDENCE``, the class
      (an `EvidenceAdapter`) whose instance puts each item in a bundle and checks it;
    * ``tables.py``: ``tables(runs) -> [Table]`` in the papers' layouts (our rows, then the
      papers'), ``plots() -> {table key: [PlotSpec]}``;
    * ``published.py``: ``published() -> [PublishedRow]``, the papers' rows;
    * ``docs.py``: its items as docs, and ``chat_messages(task, doc, options) -> [(role,
      text)]``, the chat a task sends for one doc, demonstrations included, as both
      frameworks send it (bundles record it for lm-eval runs and ``conceptcomb score``);
    * ``templates.py``: ``templates() -> {name: text}``, every prompt its tasks send,
      rendered on placeholders, and ``judge_templates()`` if it has a judge (a bundle
      records their sha256);
    * ``inspect_tasks.py``: one ``@task`` function per task name, generated from
      ``inspect_adapter.INSPECT`` by ``python -m conceptcomb.frameworks.task_files``;
    * ``lm_eval_yaml.py``: ``declaration()`` of its lm-eval YAML, written to ``task_yaml/``;
    * ``cli.py``, if it has commands of its own (``conceptcomb cggc build``):
      ``add_commands(subparsers)``.
    """

    key: str  # the folder name, the report section, the prefix of its task names
    title: str = ""  # "CCPT: conceptual combination with property type" (default: the card's)
    paper: str = ""  # "Song et al. (NAACL 2025)" (default: the card's)
    package: str = ""  # where its modules are; default ``conceptcomb.<key>``

    def __post_init__(self) -> None:
        if not (self.title and self.paper):
            card = self.card
            object.__setattr__(self, "title", self.title or card.title)
            object.__setattr__(self, "paper", self.paper or card.paper)

    @property
    def _package(self) -> str:
        return self.package or f"conceptcomb.{self.key}"

    @property
    def card(self) -> EvalCard:
        """Its ``eval.yaml`` (DataFormatError naming the file when missing or malformed)."""
        from conceptcomb.common.evalcard import load_card

        return load_card(self._package)

    @property
    def has_card(self) -> bool:
        from conceptcomb.common.evalcard import has_card

        return has_card(self._package)

    def _module(self, name: str) -> Any:
        return importlib.import_module(f"{self._package}.{name}")

    def _has(self, name: str) -> bool:
        """Whether the folder has the module ``name`` (without importing it)."""
        return importlib.util.find_spec(f"{self._package}.{name}") is not None

    def _optional(self, name: str) -> Any:
        """A function ``benchmark.py`` may define (None where it does not)."""
        return getattr(self._module("benchmark"), name, None)

    @property
    def inspect_tasks(self) -> str:
        """The module whose ``@task`` functions Inspect registers."""
        return f"{self._package}.inspect_tasks"

    def tasks(self) -> dict[str, list[MetricInfo]]:
        return self._module("benchmark").tasks()

    def task_names(self) -> list[str]:
        return list(self.tasks())

    def datasets(self) -> dict[str, PinnedDataset | HubDataset]:
        return self._module("benchmark").datasets()

    @property
    def rescore(self) -> Callable[..., ScoreReport] | None:
        return self._optional("rescore")

    def judged(self, task: str) -> bool:
        judged = self._optional("judged")
        return bool(judged and judged(task))

    @property
    def evidence(self) -> Callable[[], EvidenceAdapter] | None:
        """``evidence.py``'s ``EVIDENCE``, where the folder has one (else its bundles' rows
        stay unverified)."""
        return self._module("evidence").EVIDENCE if self._has("evidence") else None

    @property
    def local_data_records(self) -> Callable[[str | None], list[dict[str, Any]]] | None:
        return self._optional("local_data_records")

    @property
    def commands(self) -> Callable[[Any], None] | None:
        """``cli.py``'s ``add_commands``, where the folder has one."""
        return self._module("cli").add_commands if self._has("cli") else None

    def tables(self, runs: list[Run]) -> list[Table]:
        return self._module("tables").tables(runs)

    def plots(self) -> dict[str, list[PlotSpec]]:
        return self._module("tables").plots()

    def published(self) -> list[PublishedRow]:
        return self._module("published").published()

    def chat_messages(
        self, task: str, doc: dict[str, Any], options: dict[str, Any] | None = None
    ) -> list[tuple[str, str]] | None:
        """The (role, text) messages ``task`` sends for ``doc`` (``docs.py``'s
        ``chat_messages``; None where the folder has none or the doc cannot say)."""
        if not self._has("docs"):
            return None
        render = getattr(self._module("docs"), "chat_messages", None)
        return render(task, doc, options or {}) if render else None

    def templates(self) -> dict[str, str]:
        return self._module("templates").templates()

    def judge_templates(self) -> dict[str, str] | None:
        render = getattr(self._module("templates"), "judge_templates", None)
        return render() if render else None
