"""Pairing runs item by item and comparing them, metric by metric (`compare`).

A *side* is one model in one framework as one RUN argument holds it (`sides`); several runs
of it on a task (seeds, ``conceptcomb seeds`` runs) are averaged per item first, which
shrinks the noise within each item (Miller 2024, on resampling). For every task two sides
hold, each pair of sides is compared on the items both hold (`pair_task`): unless their
task version, pinned data or prompts differ, which is one line saying so (prompts:
``allow_different_prompts`` compares them anyway and labels the rows). Every p-value printed
is then adjusted by Holm's method together with the others (`conceptcomb.compare.stats`).
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conceptcomb.compare import stats
from conceptcomb.compare.items import CHAT_ONE, CHAT_TURNS, Found, TaskItems

# Fingerprint entries that are about the prompts (the rest, version and data, always refuse).
PROMPT_KEYS = ("prompt templates", "task config", "solvers", "prompt layout")
MOST_LISTED = 10  # unpaired item ids printed per task and pair (the JSON has all)


@dataclass
class Side:
    letter: str
    label: str  # model (framework)
    argument: str
    tasks: dict[str, list[TaskItems]] = field(default_factory=dict)

    def task(self, name: str) -> TaskItems:
        return averaged(self.tasks[name])


@dataclass
class Row:
    task: str
    metric: str
    a: str  # the sides' letters
    b: str
    result: stats.Difference
    label: str = ""  # "different prompts" where they were allowed
    p_holm: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "metric": self.metric,
            "a": self.a,
            "b": self.b,
            **self.result.to_json(),
            "p_holm": self.p_holm,
            "label": self.label,
        }


@dataclass
class Unpaired:
    task: str
    a: str
    b: str
    paired: int
    only_a: list[str]
    only_b: list[str]
    data_differs: list[str]

    @property
    def count(self) -> int:
        return len(self.only_a) + len(self.only_b) + len(self.data_differs)


@dataclass
class Comparison:
    sides: list[Side]
    rows: list[Row] = field(default_factory=list)
    unpaired: list[Unpaired] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    n_resamples: int = stats.N_RESAMPLES
    seed: int = stats.SEED

    @property
    def shared_tasks(self) -> list[str]:
        return list(dict.fromkeys(row.task for row in self.rows))


# --- sides --------------------------------------------------------------------------------
def sides(arguments: Sequence[Path], found: Sequence[Found]) -> list[Side]:
    """One side per (argument, framework, model): their tasks' runs grouped."""
    grouped: dict[tuple[int, str, str], Side] = {}
    for index, (argument, what) in enumerate(zip(arguments, found, strict=True)):
        for items in what.items:
            key = (index, items.framework, items.model)
            if key not in grouped:
                grouped[key] = Side("", f"{items.model} ({items.framework})", str(argument))
            grouped[key].tasks.setdefault(items.task, []).append(items)
    result = list(grouped.values())
    labels = [side.label for side in result]
    for number, side in enumerate(result):
        side.letter = _letter(number)
        if labels.count(side.label) > 1:
            side.label = f"{side.label} [{side.argument}]"
    return result


def _letter(number: int) -> str:
    letters = string.ascii_uppercase
    return letters[number] if number < 26 else f"{letters[number // 26 - 1]}{letters[number % 26]}"


# --- several runs of one side ---------------------------------------------------------------
class _AveragedCorpus:
    """A corpus metric of several runs: the mean of their values on each resample."""

    def __init__(self, metrics: list[Any]) -> None:
        self.metrics, self.n = metrics, metrics[0].n

    def value(self) -> float:
        return float(np.mean([m.value() for m in self.metrics]))

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        return np.mean([m.resampled(counts) for m in self.metrics], axis=0)

    def subset(self, rows: Sequence[int]) -> _AveragedCorpus:
        return _AveragedCorpus([m.subset(rows) for m in self.metrics])


def averaged(runs: list[TaskItems]) -> TaskItems:
    """Several runs of one model on a task, averaged per item (NaN left out) over the items
    all of them hold; one run as it is."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    common = [i for i in first.ids if all(i in set(r.ids) for r in runs[1:])]
    rows = [{i: n for n, i in enumerate(r.ids)} for r in runs]
    picks = [np.asarray([row[i] for i in common], dtype=int) for row in rows]
    merged = TaskItems(
        first.task, first.framework, first.model, ", ".join(r.source for r in runs),
        first.version, common, benchmark=first.benchmark, unit=first.unit,
        prompt_format=first.prompt_format, demonstrations=first.demonstrations,
        fingerprint=dict(first.fingerprint), data_hashes=first.data_hashes,
        higher_is_better=first.higher_is_better, skipped=dict(first.skipped),
    )  # fmt: skip
    merged.epochs = len(runs)
    if first.units is not None:
        merged.units = [first.units[p] for p in picks[0]]
    for metric in first.scores:
        if all(metric in r.scores for r in runs):
            stacked = np.stack([r.scores[metric][p] for r, p in zip(runs, picks, strict=True)])
            with np.errstate(invalid="ignore"):
                count = np.sum(np.isfinite(stacked), axis=0)
                total = np.nansum(stacked, axis=0)
                merged.scores[metric] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    for metric in first.corpus:
        if all(metric in r.corpus for r in runs):
            parts = [r.corpus[metric].subset(p) for r, p in zip(runs, picks, strict=True)]
            merged.corpus[metric] = _AveragedCorpus(parts)
    return merged


# --- pairing --------------------------------------------------------------------------------
def _prompt_layout_differs(a: TaskItems, b: TaskItems) -> bool:
    """Chat against text, or demonstrations as turns against one message (where the task
    shows demonstrations: an lm-eval run records how many)."""
    if a.prompt_format is None or b.prompt_format is None or a.prompt_format == b.prompt_format:
        return False
    layouts = {a.prompt_format, b.prompt_format}
    if layouts == {CHAT_ONE, CHAT_TURNS}:
        shots = [x.demonstrations for x in (a, b) if x.demonstrations is not None]
        return not shots or any(s > 0 for s in shots)
    return True


def differences(a: TaskItems, b: TaskItems) -> list[tuple[str, str, str]]:
    """(what, a's, b's) for every recorded fingerprint entry that differs."""
    found = [
        (key, a.fingerprint[key], b.fingerprint[key])
        for key in a.fingerprint
        if key in b.fingerprint and a.fingerprint[key] != b.fingerprint[key]
    ]
    if _prompt_layout_differs(a, b):
        found.append(("prompt layout", str(a.prompt_format), str(b.prompt_format)))
    return found


def _pairing(a: TaskItems, b: TaskItems) -> tuple[np.ndarray, np.ndarray, Unpaired]:
    """Rows of the items both hold (a's order), and what is not paired."""
    where_b = {item: n for n, item in enumerate(b.ids)}
    rows_a, rows_b, differ = [], [], []
    for n, item in enumerate(a.ids):
        m = where_b.get(item)
        if m is None:
            continue
        ha, hb = a.data_hashes.get(item), b.data_hashes.get(item)
        if ha is not None and hb is not None and ha != hb:
            differ.append(item)
            continue
        rows_a.append(n)
        rows_b.append(m)
    set_a = set(a.ids)
    only_a = [i for i in a.ids if i not in where_b]
    only_b = [i for i in b.ids if i not in set_a]
    unpaired = Unpaired(a.task, "", "", len(rows_a), only_a, only_b, differ)
    return np.asarray(rows_a, dtype=int), np.asarray(rows_b, dtype=int), unpaired


class _Distributions:
    """Each side's corpus metric on the same resamples, computed once per item selection."""

    def __init__(self, n_resamples: int, seed: int) -> None:
        self.n_resamples, self.seed = n_resamples, seed
        self.cache: dict[tuple[int, str, bytes], tuple[float, np.ndarray]] = {}

    def get(self, items: TaskItems, metric: str, rows: np.ndarray) -> tuple[float, np.ndarray]:
        key = (id(items), metric, hashlib.sha256(rows.tobytes()).digest())
        if key not in self.cache:
            subset = items.corpus[metric].subset(rows)
            values = stats.bootstrap_distribution(subset, len(rows), self.n_resamples, self.seed)
            self.cache[key] = (subset.value(), values)
        return self.cache[key]


def pair_task(
    a: TaskItems,
    b: TaskItems,
    letters: tuple[str, str],
    distributions: _Distributions,
    label: str = "",
) -> tuple[list[Row], Unpaired, list[str]]:
    """Every metric both runs hold, compared on the items both hold."""
    rows_a, rows_b, unpaired = _pairing(a, b)
    unpaired.a, unpaired.b = letters
    found: list[Row] = []
    notes = []
    units = a.units if a.units is not None else b.units
    unit = a.unit if a.units is not None else b.unit
    for metric in [m for m in a.metrics if m in b.metrics]:
        if metric in a.scores and metric in b.scores:
            paired_units = None if units is None else [units[r] for r in rows_a]
            result = stats.paired_difference(
                a.scores[metric][rows_a], b.scores[metric][rows_b], paired_units, unit
            )
        elif metric in a.corpus and metric in b.corpus and len(rows_a) > 1:
            result = stats.bootstrap_difference(
                distributions.get(a, metric, rows_a), distributions.get(b, metric, rows_b),
                len(rows_a),
            )  # fmt: skip
        else:
            result = None
        if result is None or not np.isfinite(result.p):
            notes.append(f"{a.task} {metric}: not compared (fewer than two items defined in both)")
            continue
        found.append(Row(a.task, metric, *letters, result, label))
    for metric in sorted(set(a.skipped) | set(b.skipped)):
        reason = a.skipped.get(metric) or b.skipped.get(metric)
        notes.append(f"{a.task} {metric}: cannot be paired: {reason}")
    return found, unpaired, notes


def compare(
    all_sides: list[Side],
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
    allow_different_prompts: bool = False,
) -> Comparison:
    """Every pair of sides on every task both hold; Holm over all the p-values."""
    result = Comparison(all_sides, n_resamples=n_resamples, seed=seed)
    distributions = _Distributions(n_resamples, seed)
    tasks = list(dict.fromkeys(task for side in all_sides for task in side.tasks))
    for task in tasks:
        holding = [side for side in all_sides if task in side.tasks]
        for side in holding:
            if len(side.tasks[task]) > 1:
                result.notes.append(
                    f"{side.letter}: {len(side.tasks[task])} runs of {task}, averaged per item"
                )
        for i, first in enumerate(holding):
            for second in holding[i + 1 :]:
                _pair(first, second, task, result, distributions, allow_different_prompts)
    result.notes = list(dict.fromkeys(result.notes))
    adjusted = stats.holm([row.result.p for row in result.rows])
    for row, p in zip(result.rows, adjusted, strict=True):
        row.p_holm = p
    return result


def _pair(
    first: Side,
    second: Side,
    task: str,
    result: Comparison,
    distributions: _Distributions,
    allow_different_prompts: bool,
) -> None:
    a, b = first.task(task), second.task(task)
    letters = (first.letter, second.letter)
    differ = differences(a, b)
    label = ""
    if differ:
        what = "; ".join(f"{key}: {va} vs {vb}" for key, va, vb in differ)
        prompts_only = all(key in PROMPT_KEYS or key.startswith("option ") for key, *_ in differ)
        if not (prompts_only and allow_different_prompts):
            hint = (
                ": --allow-different-prompts compares them anyway"
                if prompts_only
                else ": not comparable"
            )
            result.notes.append(
                f"{task}: {first.letter} ({a.source}) and {second.letter} ({b.source}) differ "
                f"({what}), not paired{hint}"
            )
            return
        label = "different prompts"
    rows, unpaired, notes = pair_task(a, b, letters, distributions, label)
    result.rows += rows
    result.notes += notes
    result.unpaired.append(unpaired)
