"""A benchmark's card: ``<benchmark folder>/eval.yaml``, the one place its title, paper,
version, licence, tasks (sample counts, headline metric, Inspect and lm-eval names), Hub
dataset and pinned data are written down.

The shape follows the ``eval.yaml`` of inspect_evals and of the Hugging Face Hub's benchmark
datasets (title, version, ``tasks`` with ``dataset_samples``, pinned external assets), with
what leaderboards need besides. The registry's titles and papers, every task's version
(lm-eval ``metadata.version``, Inspect's task ``version``, hence bundles), bundles' item
totals and both leaderboard exports read it from here; ``tests/common/test_eval_cards.py``
fails when a card and the code disagree (task names and metrics, test-set sizes, pins).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import DataFormatError

CARD_FILE = "eval.yaml"


@dataclass(frozen=True)
class CardTask:
    """One task as the card declares it."""

    name: str
    dataset_samples: int  # items of its evaluation set with the default options
    headline_metric: str  # the metric a leaderboard shows for it
    inspect_task: str  # ``conceptcomb/<name>``
    lm_eval_task: str | None  # None: Inspect only (lm-eval cannot run it)


@dataclass(frozen=True)
class CardData:
    """A pinned source of the benchmark's data."""

    key: str
    source: str  # ``github.com/owner/repo``, a Hub dataset id, or the package itself
    type: str  # "github", "huggingface", "package"
    revision: str
    files: dict[str, str | None] = field(default_factory=dict)  # file -> sha256 (None: none)
    license: str = ""


# inspect_evals' catalogue groups (its EvalMetadata's ``group``).
GROUPS = (
    "Assistants", "Bias", "Coding", "Cybersecurity", "Knowledge", "Mathematics", "Multimodal",
    "Personality", "Reasoning", "Safeguards", "Scheming", "Writing",
)  # fmt: skip


@dataclass(frozen=True)
class EvalCard:
    path: Path
    title: str
    group: str  # inspect_evals' catalogue group (`GROUPS`)
    contributors: tuple[str, ...]  # who implemented it (inspect_evals: GitHub handles)
    description: str
    paper: str  # "Song et al. (NAACL 2025)"
    paper_title: str
    paper_url: str | None
    version: str
    license_code: str
    license_data: str
    data_terms: str  # what users of the data must do (printed, exported); "" when nothing
    hub_dataset: str | None  # the benchmark's dataset on the Hugging Face Hub, if it has one
    tasks: dict[str, CardTask]
    data: tuple[CardData, ...]

    def task(self, name: str) -> CardTask:
        try:
            return self.tasks[name]
        except KeyError:
            raise DataFormatError(
                f"{self.path}: no task {name!r} in 'tasks' (add it with its dataset_samples "
                "and headline_metric)"
            ) from None


def card_path(package: str) -> Path:
    """Where a benchmark package's card is (inside the installed package)."""
    return Path(str(importlib.resources.files(package).joinpath(CARD_FILE)))


def has_card(package: str) -> bool:
    return card_path(package).is_file()


@lru_cache(maxsize=16)
def load_card(package: str) -> EvalCard:
    """The card of ``package`` (``conceptcomb.ccpt``); DataFormatError naming the file and
    the field when it is missing or malformed."""
    path = card_path(package)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise DataFormatError(
            f"{path}: cannot read the benchmark's card ({err.strerror or err}); every "
            "benchmark folder holds an eval.yaml (docs/layout.md)"
        ) from err
    return parse_card(text, path)


def version_reader(package: str) -> Callable[[], str]:
    """The ``task_version()`` of a benchmark: every task's version is its card's
    (``eval.yaml``), read at each use, so an edited card needs no restart; the README's
    Changelog lists each change."""

    def task_version() -> str:
        return load_card(package).version

    return task_version


def card_headline(package: str, task: str) -> str | None:
    """The card's headline metric of ``task`` (None for a task the card does not list, such
    as a combination of options of a parametric task)."""
    entry = load_card(package).tasks.get(task)
    return entry.headline_metric if entry else None


def _yaml(text: str, path: Path) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as err:
        raise DataFormatError(f"{path}: not valid YAML ({err})") from err


def _field(mapping: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        wanted = getattr(kind, "__name__", "a value of another type")
        raise DataFormatError(f"{where}.{key}: expected {wanted}, found {value!r:.80}")
    return value


def _optional(mapping: dict[str, Any], key: str, where: str) -> str | None:
    value = mapping.get(key)
    if value is not None and not isinstance(value, str):
        raise DataFormatError(f"{where}.{key}: expected a string or null, found {value!r:.80}")
    return value


def _task(entry: Any, where: str) -> CardTask:
    name = _field(entry, "name", str, where)
    samples = _field(entry, "dataset_samples", int, where)
    if samples < 1:
        raise DataFormatError(f"{where}.dataset_samples: expected a positive count")
    return CardTask(
        name=name,
        dataset_samples=samples,
        headline_metric=_field(entry, "headline_metric", str, where),
        inspect_task=_field(entry, "inspect_task", str, where),
        lm_eval_task=_optional(entry, "lm_eval_task", where),
    )


def _data(entry: Any, where: str) -> CardData:
    files = entry.get("files") if isinstance(entry, dict) else None
    files = {} if files is None else files
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in files.items()
    ):
        raise DataFormatError(f"{where}.files: expected file name -> sha256 (or null)")
    return CardData(
        key=_field(entry, "key", str, where),
        source=_field(entry, "source", str, where),
        type=_field(entry, "type", str, where),
        revision=str(_field(entry, "revision", (str, int), where)),
        files=dict(files),
        license=str(entry.get("license") or ""),
    )


def _group(raw: dict[str, Any], where: str) -> str:
    group = _field(raw, "group", str, where)
    if group not in GROUPS:
        raise DataFormatError(f"{where}.group: {group!r} is not one of {', '.join(GROUPS)}")
    return group


def _contributors(raw: dict[str, Any], where: str) -> tuple[str, ...]:
    names = _field(raw, "contributors", list, where)
    if not names or not all(isinstance(name, str) and name.strip() for name in names):
        raise DataFormatError(f"{where}.contributors: expected a list of names (at least one)")
    return tuple(names)


def parse_card(text: str, path: Path) -> EvalCard:
    raw = _yaml(text, path)
    where = str(path)
    if not isinstance(raw, dict):
        raise DataFormatError(f"{path}: expected a mapping (title, version, tasks, ...)")
    paper = _field(raw, "paper", dict, where)
    license_ = _field(raw, "license", dict, where)
    tasks = _field(raw, "tasks", list, where)
    parsed = [_task(entry, f"{where}: tasks[{n}]") for n, entry in enumerate(tasks)]
    names = [task.name for task in parsed]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise DataFormatError(f"{where}: tasks: listed twice: {', '.join(twice)}")
    data = raw.get("data") or []
    if not isinstance(data, list):
        raise DataFormatError(f"{where}.data: expected a list of pinned sources")
    return EvalCard(
        path=path,
        title=_field(raw, "title", str, where),
        group=_group(raw, where),
        contributors=_contributors(raw, where),
        description=str(raw.get("description") or "").strip(),
        paper=_field(paper, "citation", str, f"{where}: paper"),
        paper_title=_field(paper, "title", str, f"{where}: paper"),
        paper_url=_optional(paper, "url", f"{where}: paper"),
        version=str(_field(raw, "version", (str, int, float), where)),
        license_code=_field(license_, "code", str, f"{where}: license"),
        license_data=_field(license_, "data", str, f"{where}: license"),
        data_terms=str(license_.get("terms") or "").strip(),
        hub_dataset=_optional(raw, "hub_dataset", where),
        tasks={task.name: task for task in parsed},
        data=tuple(_data(entry, f"{where}: data[{n}]") for n, entry in enumerate(data)),
    )
