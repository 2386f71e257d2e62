"""Pairing runs item by item and comparing them, metric by metric (`compare`).

A *side* is one model in one framework as one RUN argument holds it (`sides`); several runs
of it on a task (seeds, ``conceptcomb seeds`` runs) are averaged per item first, which
shrinks the noise within each item (Miller 2024, on resampling). For every task two sides
hold, each pair of sides is compared on the items both hold (`pair_task`): unless their
task version, pinned data or prompts differ, which is one line saying so (prompts:
``allow_different_prompts`` compares them anyway and labels the rows). A metric a judge's
ratings decide (``MetricInfo.judged``: CCPT's E, C, R_HMP, R_NP, CGGC's ``_verified``
metrics) is paired only when both runs name the same judge (`same_judges`: what determines
the ratings, not where the judge was served); otherwise one line names both judges and the
command that re-scores one run with the other's judge, and the metrics no judge decides
are compared still (``allow_different_judges`` compares them anyway and labels the rows).
Every p-value printed is then adjusted by Holm's method together with the others
(`conceptcomb.leaderboard.statistics.stats`).
"""

from __future__ import annotations

import hashlib
import shlex
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conceptcomb.benchmarks import evidence_adapter
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.leaderboard.compare.items import CHAT_ONE, CHAT_TURNS, Found, TaskItems
from conceptcomb.leaderboard.statistics import stats
from conceptcomb.scorers import judge_identity
from conceptcomb.scorers.judge_identity import JudgeRecord

# Fingerprint entries that are about the prompts (the rest, version and data, always refuse).
PROMPT_KEYS = ("prompt templates", "task config", "solvers", "prompt layout")
MOST_LISTED = 10  # unpaired item ids printed per task and pair (the JSON has all)
# Below this many paired items the t and bootstrap approximations are rough: on 3 items a
# CIDEr-D interval touched 0 beside a bootstrap p of 0.001. Said once per pair, never refused.
FEW_ITEMS = 30
DIFFERENT_PROMPTS, DIFFERENT_JUDGES = "different prompts", "different judges"


@dataclass
class Side:
    letter: str
    label: str  # model (framework)
    argument: str
    tasks: dict[str, list[TaskItems]] = field(default_factory=dict)
    _averaged: dict[str, TaskItems] = field(default_factory=dict, repr=False)

    def task(self, name: str) -> TaskItems:
        """The side's runs of a task, averaged per item (once: comparisons share it)."""
        if name not in self._averaged:
            self._averaged[name] = averaged(self.tasks[name])
        return self._averaged[name]


@dataclass
class Row:
    task: str
    metric: str
    a: str  # the sides' letters
    b: str
    result: stats.Difference
    label: str = ""  # "different prompts" where they were allowed
    p_holm: float | None = None
    # --variants: what differs between variant A and variant B ("order: x vs y"), each a line
    differs: list[str] = field(default_factory=list)
    pairing: Pairing | None = field(default=None, repr=False, compare=False)  # its runs, items

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "metric": self.metric,
            "run_a": self.a,
            "run_b": self.b,
            **self.result.to_json(),
            "p_holm": self.p_holm,
            "label": self.label,
            **({"differs": self.differs} if self.differs else {}),
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
def sides(
    arguments: Sequence[Path], found: Sequence[Found], judges_apart: bool = False
) -> list[Side]:
    """One side per (argument, framework, model): their tasks' runs grouped (averaged per
    item); ``judges_apart``: one per judge too, a row each in a ranking by judge, labelled
    with the judge's key where a model has several."""
    grouped: dict[tuple[int, str, str, int], Side] = {}
    judges: dict[tuple[int, str, str], list[list[JudgeRecord]]] = {}
    for index, (argument, what) in enumerate(zip(arguments, found, strict=True)):
        for items in what.items:
            model = (index, items.framework, items.model)
            number = _judge_number(judges.setdefault(model, []), items) if judges_apart else 0
            key = (*model, number)
            if key not in grouped:
                grouped[key] = Side("", f"{items.model} ({items.framework})", str(argument))
            grouped[key].tasks.setdefault(items.task, []).append(items)
    result = list(grouped.values())
    labels = [side.label for side in result]
    for number, side in enumerate(result):
        side.letter = _letter(number)
        if labels.count(side.label) > 1:
            side.label = f"{side.label} [{_judge_label(side) if judges_apart else side.argument}]"
    return result


def _judge_number(known: list[list[JudgeRecord]], items: TaskItems) -> int:
    """The index of the run's judge among a model's (0: no judge); a new judge added."""
    if not items.judge:
        return 0
    for number, judge in enumerate(known, start=1):
        if same_judges(judge, items.judge):
            return number
    known.append(items.judge)
    return len(known)


def _judge_label(side: Side) -> str:
    records = next((r.judge for runs in side.tasks.values() for r in runs if r.judge), [])
    if not records:
        return "no judge recorded"
    return "judge key " + " + ".join(judge_identity.key(r)[:8] for r in records)


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
    held = [set(r.ids) for r in runs[1:]]
    common = [i for i in first.ids if all(i in ids for ids in held)]
    rows = [{i: n for n, i in enumerate(r.ids)} for r in runs]
    picks = [np.asarray([row[i] for i in common], dtype=int) for row in rows]
    merged = TaskItems(
        first.task, first.framework, first.model, ", ".join(r.source for r in runs),
        first.version, common, benchmark=first.benchmark, unit=first.unit,
        prompt_format=first.prompt_format, demonstrations=first.demonstrations,
        fingerprint=dict(first.fingerprint), data_hashes=first.data_hashes,
        skipped=dict(first.skipped), judged=set(first.judged), settings=dict(first.settings),
        # runs of one side by several judges: no judge (its judged metrics are not paired)
        judge=first.judge if all(same_judges(r.judge, first.judge) for r in runs) else [],
        evidence=first.evidence, options=dict(first.options),
    )  # fmt: skip
    if first.units is not None:
        merged.units = [first.units[p] for p in picks[0]]
    if first.replies is not None:  # the first run's reply shows the item (`--items`)
        merged.replies = [first.replies[p] for p in picks[0]]
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
    """Rows of the items both hold, in the order of their ids, and what is not paired.

    The order of the ids, not of either file: a resampling draws rows by position, so the
    same replies read from an lm-eval folder or from an Inspect log (which keep their
    samples in different orders) give the same interval."""
    if a.ids == b.ids and not _any_data_differs(a, b):  # the usual case: the same items
        rows = np.asarray(sorted(range(len(a.ids)), key=a.ids.__getitem__), dtype=int)
        return rows, rows, Unpaired(a.task, "", "", len(rows), [], [], [])
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
    order = sorted(range(len(rows_a)), key=lambda k: a.ids[rows_a[k]])
    rows_a, rows_b = [rows_a[k] for k in order], [rows_b[k] for k in order]
    return np.asarray(rows_a, dtype=int), np.asarray(rows_b, dtype=int), unpaired


def _any_data_differs(a: TaskItems, b: TaskItems) -> bool:
    if not a.data_hashes or not b.data_hashes:
        return False
    return any(b.data_hashes.get(item, hash_a) != hash_a for item, hash_a in a.data_hashes.items())


class _Distributions:
    """Each side's corpus metric on the same resamples, computed once per item selection."""

    def __init__(self, n_resamples: int, seed: int) -> None:
        self.n_resamples, self.seed = n_resamples, seed
        self.cache: dict[tuple[int, str, bytes], tuple[float, np.ndarray]] = {}

    @staticmethod
    def _key(items: TaskItems, metric: str, rows: np.ndarray) -> tuple[int, str, bytes]:
        return (id(items), metric, hashlib.sha256(rows.tobytes()).digest())

    def get(self, items: TaskItems, metric: str, rows: np.ndarray) -> tuple[float, np.ndarray]:
        key = self._key(items, metric, rows)
        if key not in self.cache:
            subset = items.corpus[metric].subset(rows)
            values = stats.bootstrap_distribution(subset, len(rows), self.n_resamples, self.seed)
            self.cache[key] = (subset.value(), values)
        return self.cache[key]

    def prefetch(self, wanted: list[tuple[TaskItems, str, np.ndarray]]) -> None:
        """The distributions ``get`` will be asked for, computed together where that shares
        work (`stats.bootstrap_distributions`: many runs' CIDEr-D on one task's references).
        Nothing is kept when that fails: ``get`` computes each alone and names the one that
        fails."""
        todo: dict[int, dict[tuple[int, str, bytes], Any]] = {}  # items drawn -> key -> metric
        for items, metric, rows in wanted:
            key = self._key(items, metric, rows)
            if key not in self.cache:
                todo.setdefault(len(rows), {}).setdefault(key, (items, metric, rows))
        for n, entries in todo.items():
            try:
                subsets = [items.corpus[m].subset(rows) for items, m, rows in entries.values()]
                found = stats.bootstrap_distributions(subsets, n, self.n_resamples, self.seed)
                values = [subset.value() for subset in subsets]
            except (ImportError, NameError):  # a fault of ours, not of a run: never hidden
                raise
            except Exception:  # computed again one by one, the failing one named
                continue
            for key, value, distribution in zip(entries, values, found, strict=True):
                self.cache[key] = (value, distribution)


@dataclass
class Pairing:
    """Two runs of a task paired: the rows of the items both hold, in a's order."""

    a: TaskItems
    b: TaskItems
    letters: tuple[str, str]
    rows_a: np.ndarray
    rows_b: np.ndarray
    label: str = ""
    judges_differ: bool = False  # compared anyway (allow_different_judges): rows labelled
    left_out: set[str] = field(default_factory=set)  # metrics not paired (another judge)
    differs: list[str] = field(default_factory=list)  # variants: what differs, A vs B

    def label_of(self, metric: str) -> str:
        """The row's label: different prompts, and different judges for a judged metric."""
        judged = self.judges_differ and metric in (self.a.judged | self.b.judged)
        return ", ".join(x for x in (self.label, DIFFERENT_JUDGES if judged else "") if x)

    def units(self) -> tuple[np.ndarray | None, str | None]:
        """The paired items' unit codes (a's where it has units, else b's) and the unit."""
        if self.a.unit_codes is not None:
            return self.a.unit_codes[self.rows_a], self.a.unit
        if self.b.unit_codes is not None:
            return self.b.unit_codes[self.rows_b], self.b.unit
        return None, None


def _means(metric: str, pairings: list[Pairing]) -> dict[int, stats.Difference | None]:
    """A mean metric for every pairing holding it: pairings with the same defined items
    (an item undefined in either run left out) are computed together
    (`stats.paired_differences`)."""
    found: dict[int, stats.Difference | None] = {}
    batches: dict[tuple, list[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]]] = {}
    for number, pairing in enumerate(pairings):
        if metric not in pairing.a.scores or metric not in pairing.b.scores:
            continue
        if metric in pairing.left_out:
            continue
        a = pairing.a.scores[metric][pairing.rows_a]
        b = pairing.b.scores[metric][pairing.rows_b]
        keep = np.isfinite(a) & np.isfinite(b)
        if int(keep.sum()) < 2:
            found[number] = None
            continue
        codes, unit = pairing.units()
        codes = None if codes is None else codes[keep]
        key = (unit, keep.tobytes(), None if codes is None else codes.tobytes())
        batches.setdefault(key, []).append((number, a[keep], b[keep], codes))
    for (unit, _, _), members in batches.items():
        codes = members[0][3]
        results = stats.paired_differences(
            np.stack([m[1] for m in members]), np.stack([m[2] for m in members]), codes, unit
        )
        for member, result in zip(members, results, strict=True):
            found[member[0]] = result
    return found


def _compare_task(
    pairings: list[Pairing],
    distributions: _Distributions,
    only: Callable[[str, str], bool] | None = None,
) -> tuple[list[Row], list[str]]:
    """Every metric each pairing's two runs hold (``only``: those it keeps), on the items
    both hold: rows in the order of the pairings, then of the metrics."""
    rows: list[Row] = []
    notes: list[str] = []
    if not pairings:
        return rows, notes
    task = pairings[0].a.task
    metrics = [
        m
        for m in dict.fromkeys(m for p in pairings for m in p.a.metrics if m in p.b.metrics)
        if only is None or only(task, m)
    ]
    results: dict[tuple[int, str], stats.Difference | None] = {}
    distributions.prefetch(
        [
            (items, metric, rows)
            for metric in metrics
            for p in pairings
            if metric in p.a.corpus and metric in p.b.corpus and len(p.rows_a) > 1
            if metric not in p.left_out
            for items, rows in ((p.a, p.rows_a), (p.b, p.rows_b))
        ]
    )
    for metric in metrics:
        for number, result in _means(metric, pairings).items():
            results[(number, metric)] = result
        for number, p in enumerate(pairings):
            if metric in p.left_out:
                continue
            if metric in p.a.corpus and metric in p.b.corpus and len(p.rows_a) > 1:
                try:
                    results[(number, metric)] = stats.bootstrap_difference(
                        distributions.get(p.a, metric, p.rows_a),
                        distributions.get(p.b, metric, p.rows_b),
                        len(p.rows_a),
                    )
                except Exception as err:  # an item its computation does not take: one line
                    notes.append(f"{task} {metric}: cannot be resampled ({type(err).__name__})")
    for number, p in enumerate(pairings):
        if 1 < len(p.rows_a) < FEW_ITEMS:
            # Variants of two tasks (one lm-eval folder of both orders): name both tasks.
            if p.a.task == p.b.task:
                sides = f"{task} {p.letters[0]} - {p.letters[1]}"
            else:
                sides = f"{p.a.task} vs {p.b.task}"
            notes.append(
                f"{sides}: only {len(p.rows_a)} items paired: "
                "intervals and p-values this few items give are rough (a --limit run?)"
            )
        for metric in metrics:
            if (number, metric) not in results:
                continue
            result = results[(number, metric)]
            if result is None or not np.isfinite(result.p):
                notes.append(
                    f"{task} {metric}: not compared (fewer than two items defined in both)"
                )
                continue
            rows.append(Row(task, metric, *p.letters, result, p.label_of(metric), pairing=p))
        for metric in sorted(set(p.a.skipped) | set(p.b.skipped)):
            if metric in p.left_out:
                continue
            if only is None or only(task, metric):
                reason = p.a.skipped.get(metric) or p.b.skipped.get(metric)
                notes.append(f"{task} {metric}: cannot be paired: {reason}")
    return rows, notes


def compare(
    all_sides: list[Side],
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
    allow_different_prompts: bool = False,
    only: Callable[[str, str], bool] | None = None,
    allow_different_judges: bool = False,
) -> Comparison:
    """Every pair of sides on every task both hold (``only``: the (task, metric) it keeps);
    Holm over all the p-values."""
    result = Comparison(all_sides, n_resamples=n_resamples, seed=seed)
    distributions = _Distributions(n_resamples, seed)
    tasks = list(dict.fromkeys(task for side in all_sides for task in side.tasks))
    for task in tasks:
        holding = [side for side in all_sides if task in side.tasks]
        if len(holding) == 1 and len(all_sides) > 1:
            result.notes.append(f"{task}: only {holding[0].letter} holds it, not compared")
        for side in holding:
            if len(side.tasks[task]) > 1:
                result.notes.append(
                    f"{side.letter}: {len(side.tasks[task])} runs of {task}, averaged per item"
                )
        pairings = []
        for i, first in enumerate(holding):
            for second in holding[i + 1 :]:
                pairing = _pair(first, second, task, result, allow_different_prompts)
                if pairing is not None:
                    _judges(pairing, first, second, result, allow_different_judges)
                    pairings.append(pairing)
        rows, notes = _compare_task(pairings, distributions, only)
        result.rows += rows
        result.notes += notes
    return _finished(result)


# Settings that change what the model is asked (the rest are generation settings).
PROMPT_SETTINGS = ("demonstrations",)
# A sampling seed of several runs of one model in one RUN is what `conceptcomb seeds` varies:
# those runs are averaged per item, not variants.
SAMPLING_SEED = "sampling seed"
VARIANTS_HINT = "--variants compares them as variants of one model"


def setting_changes(a: TaskItems, b: TaskItems) -> list[tuple[str, str, str]]:
    """(setting, a's, b's) for every setting the two runs were run with differently. Runs of
    two frameworks name their settings differently: there the fingerprint (prompts and
    options) alone says what differs."""
    if a.framework != b.framework:
        return []
    keys = list(dict.fromkeys([*a.settings, *b.settings]))
    return [
        (key, a.settings.get(key, "–"), b.settings.get(key, "–"))
        for key in keys
        if a.settings.get(key) != b.settings.get(key)
    ]


def _asks_otherwise(key: str, a: TaskItems, b: TaskItems) -> bool:
    """A setting that changes the prompt (a task option, the demonstrations), not the
    generation."""
    option = f"option {key}"
    return key in PROMPT_SETTINGS or option in a.fingerprint or option in b.fingerprint


# Fingerprint entries recorded as hashes: their values say nothing to a reader.
HASHED = ("prompt templates", "task config", "solvers", "pinned data")


def differences_text(differ: list[tuple[str, str, str]]) -> str:
    """ "solvers differ; task version: 1.0 vs 1.1": hashes named, readable values shown."""
    return "; ".join(
        f"{key} differ" if key in HASHED else f"{key}: {va} vs {vb}" for key, va, vb in differ
    )


def changes_text(changes: list[tuple[str, str, str]]) -> str:
    """ "order: easy_to_hard vs hard_to_easy; seed: 0 vs 1"."""
    return "; ".join(f"{key}: {va} vs {vb}" for key, va, vb in changes)


def _pair(
    first: Side, second: Side, task: str, result: Comparison, allow_different_prompts: bool
) -> Pairing | None:
    """The two runs' items paired, or None (a line in the notes) where they differ: one line
    naming each difference and the option that compares them anyway."""
    a, b = first.task(task), second.task(task)
    letters = (first.letter, second.letter)
    changes = setting_changes(a, b)
    named = {f"option {key}" for key, *_ in changes}
    differ = [d for d in differences(a, b) if d[0] not in named]  # options: named by value
    where = f"{task}: {first.letter} ({a.source}) and {second.letter} ({b.source})"
    label = ""
    if differ:
        what = "; ".join(filter(None, [changes_text(changes), differences_text(differ)]))
        prompts_only = all(key in PROMPT_KEYS or key.startswith("option ") for key, *_ in differ)
        if not (prompts_only and allow_different_prompts):
            hint = (
                ": --allow-different-prompts compares them anyway"
                if prompts_only
                else ": not comparable"
            )
            if prompts_only and a.model == b.model:
                hint += f"; {VARIANTS_HINT}"
            result.notes.append(f"{where} differ ({what}), not paired{hint}")
            return None
        label = DIFFERENT_PROMPTS
    if changes and a.model == b.model:  # one model run two ways: never paired silently
        result.notes.append(
            f"{where} differ in {changes_text(changes)}: not paired; {VARIANTS_HINT}"
        )
        return None
    prompt_changes = [c for c in changes if _asks_otherwise(c[0], a, b)]
    if prompt_changes and not allow_different_prompts:
        result.notes.append(
            f"{where} differ in {changes_text(prompt_changes)}, not paired: "
            "--allow-different-prompts compares them anyway"
        )
        return None
    if changes:
        result.notes.append(f"{where} differ in {changes_text(changes)}: compared as they are")
        label = ", ".join(x for x in (label, changes_text(prompt_changes)) if x)
    rows_a, rows_b, unpaired = _pairing(a, b)
    unpaired.a, unpaired.b = letters
    result.unpaired.append(unpaired)
    return Pairing(a, b, letters, rows_a, rows_b, label)


# --- variants of one model (--variants) ----------------------------------------------------
@dataclass
class Variant:
    """One way a model ran a task: its runs with the same settings, averaged per item."""

    letter: str  # the side (RUN argument) it comes from
    items: TaskItems


def _variant_key(items: TaskItems) -> tuple[str, ...]:
    settings = {k: v for k, v in items.settings.items() if k != SAMPLING_SEED}
    return (items.task, repr(sorted(settings.items())), repr(sorted(items.fingerprint.items())))


def model_variants(all_sides: list[Side]) -> dict[tuple[str, str], list[Variant]]:
    """(model, framework) -> its variants, in the order of the RUN arguments: runs of a task
    with the same settings (seeds of `conceptcomb seeds` aside) are one variant, averaged."""
    found: dict[tuple[str, str], list[Variant]] = {}
    for side in all_sides:
        for runs in side.tasks.values():
            groups: dict[tuple[str, ...], list[TaskItems]] = {}
            for run in runs:
                groups.setdefault(_variant_key(run), []).append(run)
            for members in groups.values():
                first = members[0]
                variant = Variant(side.letter, averaged(members))
                found.setdefault((first.model, first.framework), []).append(variant)
    return found


def variant_sides(all_sides: list[Side], found: dict[tuple[str, str], list[Variant]]) -> list[Side]:
    """The sides ``--variants`` lists under "Runs:": a side holding several variants (one
    lm-eval folder of cggc_ood_easy2hard and cggc_ood_hard2easy) split into one side per
    variant, named by its task, so that each row's A and B are two letters the list names;
    the letters of every variant follow. Sides of one variant each stay as they are."""
    held: dict[str, list[Variant]] = {}
    for variants in found.values():
        for variant in variants:
            held.setdefault(variant.letter, []).append(variant)
    if all(len(variants) < 2 for variants in held.values()):
        return all_sides
    split: list[tuple[Side, list[Variant]]] = []
    for side in all_sides:
        variants = held.get(side.letter, [])
        if len(variants) < 2:
            split.append((Side("", side.label, side.argument, side.tasks), variants))
            continue
        tasks = [v.items.task for v in variants]
        for variant in variants:
            name = variant.items.task
            if tasks.count(name) > 1:  # one task run two ways in one folder: its file too
                name += f" ({variant.items.source})"
            label = f"{side.label}, {name}"
            tasks_held = {variant.items.task: [variant.items]}
            split.append((Side("", label, side.argument, tasks_held), [variant]))
    for number, (side, variants) in enumerate(split):
        side.letter = _letter(number)
        for variant in variants:
            variant.letter = side.letter
    return [side for side, _ in split]


def variant_differences(a: TaskItems, b: TaskItems) -> list[str]:
    """What differs between two variants, each a line: the task, each setting with both
    values, and the prompts where their templates or solvers differ."""
    lines = [f"task: {a.task} vs {b.task}"] if a.task != b.task else []
    changes = setting_changes(a, b)
    lines += [f"{key}: {va} vs {vb}" for key, va, vb in changes]
    named = {key for key, *_ in changes}
    lines += [f"{key}: {va} vs {vb}" for key, va, vb in task_changes(a, b) if key not in named]
    if a.task == b.task:  # another task's templates differ as a matter of course
        prompts = [d for d in differences(a, b) if d[0] in PROMPT_KEYS]
        lines += [differences_text([d]) for d in prompts]
    return lines


def task_changes(a: TaskItems, b: TaskItems) -> list[tuple[str, str, str]]:
    """(setting, a's, b's) for what two task names of one benchmark of ours fix differently
    (its evidence adapter's ``task_settings``: CGGC's order, CCPT's method), so that a row of
    cggc_ood_easy2hard vs cggc_ood_hard2easy says "order: easy_to_hard vs hard_to_easy" as
    an Inspect run's ``-T order=`` does."""
    if a.task == b.task or not a.benchmark or a.benchmark != b.benchmark:
        return []
    adapter = evidence_adapter(a.benchmark)
    settings = getattr(adapter, "task_settings", None)
    if settings is None:
        return []
    try:
        sa, sb = settings(a.task), settings(b.task)
    except ConceptcombError:  # a task name its specs do not hold
        return []
    return [(key, sa[key], sb.get(key, "–")) for key in sa if sa[key] != sb.get(key, "–")]


def _candidates(x: TaskItems, y: TaskItems, named: set[tuple[str, str]]) -> bool:
    """Variants of one task: tasks of one benchmark of ours, one task of another package,
    or a pair the user named (``--variants a=b``)."""
    if (x.task, y.task) in named or (y.task, x.task) in named:
        return True
    if x.benchmark or y.benchmark:
        return x.benchmark == y.benchmark
    return x.task == y.task


def _variant_pairing(
    first: Variant, second: Variant, named: set[tuple[str, str]], result: Comparison
) -> Pairing | None:
    """Two variants paired on the items both hold (the same ids and data), or None."""
    x, y = first.items, second.items
    if (y.task, x.task) in named and (x.task, y.task) not in named:
        first, second, x, y = second, first, y, x  # A as the user named it
    if not _candidates(x, y, named):
        return None
    differs = variant_differences(x, y)
    if not differs:
        return None  # the same settings: runs of one variant, not two
    for key in ("pinned data", "task version"):
        if x.fingerprint.get(key, "") != y.fingerprint.get(key, "") and x.task == y.task:
            result.notes.append(f"{x.task}: {key} differ, not variants of one task")
            return None
    rows_a, rows_b, unpaired = _pairing(x, y)
    if len(rows_a) < 2:
        return None  # other items (ccpt_pi_emergent and ccpt_npc_emergent)
    if unpaired.count:
        unpaired.a, unpaired.b = first.letter, second.letter
        result.unpaired.append(unpaired)
    pairing = Pairing(x, y, (first.letter, second.letter), rows_a, rows_b)
    judged = (x.judged | y.judged) & set(x.metrics) & set(y.metrics)
    if judged and not same_judges(x.judge, y.judge):  # never variants of each other
        pairing.left_out = judged
        result.notes.append(
            f"{x.task} vs {y.task}: scored by different judges ({judge_text(x.judge)}; "
            f"{judge_text(y.judge)}): {', '.join(sorted(judged))} not compared as variants"
        )
    pairing.differs = differs
    return pairing


def compare_variants(
    all_sides: list[Side],
    named: Sequence[tuple[str, str]] = (),
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
    only: Callable[[str, str], bool] | None = None,
) -> Comparison:
    """Within each model, every two variants of one task on the items both hold (different
    task names of one benchmark, one task run with other options, seeds or generation
    settings, and the pairs ``named``); rows name what differs; Holm over all."""
    found = model_variants(all_sides)
    result = Comparison(variant_sides(all_sides, found), n_resamples=n_resamples, seed=seed)
    distributions = _Distributions(n_resamples, seed)
    wanted = set(named)
    for variants in found.values():
        for i, first in enumerate(variants):
            for second in variants[i + 1 :]:
                pairing = _variant_pairing(first, second, wanted, result)
                if pairing is None:
                    continue
                rows, notes = _compare_task([pairing], distributions, only)
                task = (
                    pairing.a.task
                    if pairing.a.task == pairing.b.task
                    else (f"{pairing.a.task} vs {pairing.b.task}")
                )
                for row in rows:
                    row.task, row.differs = task, pairing.differs
                result.rows += rows
                result.notes += notes
    return _finished(result)


# --- judges -------------------------------------------------------------------------------
def same_judges(a: list[JudgeRecord], b: list[JudgeRecord]) -> bool:
    """Both runs name their judges, and the same ones (`judge_identity.same_judge`)."""
    if not a or not b:
        return False
    return all(any(judge_identity.same_judge(x, y) for y in b) for x in a) and all(
        any(judge_identity.same_judge(y, x) for x in a) for y in b
    )


def _judges(pairing: Pairing, first: Side, second: Side, result: Comparison, allow: bool) -> None:
    """Judge-dependent metrics of a pairing whose runs name different judges (or none):
    left out, with one line (both judges, the command that re-scores one run with the
    other's judge), or with ``allow`` compared and labelled."""
    a, b = pairing.a, pairing.b
    judged = (a.judged | b.judged) & set(a.metrics) & set(b.metrics)
    if not judged or same_judges(a.judge, b.judge):
        return
    if allow:
        pairing.judges_differ = True
        return
    pairing.left_out = judged
    names = f"{first.letter}: {judge_text(a.judge)}; {second.letter}: {judge_text(b.judge)}"
    result.notes.append(
        f"{a.task}: {first.letter} and {second.letter} were scored by different judges "
        f"({names}): {', '.join(sorted(judged))} not paired; {rescore_hint(first, second, a, b)}"
        "; --allow-different-judges compares them anyway, labelled"
    )


def judge_text(records: list[JudgeRecord]) -> str:
    if not records:
        return "no judge recorded"
    return " + ".join(judge_identity.describe(record) for record in records)


def rescore_hint(first: Side, second: Side, a: TaskItems, b: TaskItems) -> str:
    """``re-score B with A's judge: conceptcomb score TASK --predictions B_RUN --judge-model
    ... --output ... --samples-output ...`` (`submit-bundle` makes them a bundle; or A with
    B's, where only that one can be written; or why neither can)."""
    why = "neither judge can be named as score options (no judge recorded)"
    for side, items, other, judge in ((second, b, first, a.judge), (first, a, second, b.judge)):
        if len(judge) != 1:
            continue
        try:
            options = judge_identity.cli_options(judge[0])
        except ValueError as err:
            why = str(err)
            continue
        run = shlex.quote(items.source.split(", ")[0])
        return (
            f"re-score {side.letter} with {other.letter}'s judge: conceptcomb score {a.task} "
            f"--predictions {run} {options} --output rescored.json --samples-output "
            "rescored.samples.jsonl"
        )
    return why


# --- two runs of any tasks on the same items (the report's variants) -------------------------
Distributions = _Distributions


def compare_pairing(
    a: TaskItems, b: TaskItems, distributions: _Distributions, metrics: set[str]
) -> tuple[list[tuple[str, stats.Difference]], list[str]]:
    """A - B for each of ``metrics`` both hold, on the items both hold (same ids and data),
    as `compare` compares two runs of a task: (metric, difference) pairs, and the notes."""
    rows_a, rows_b, _ = _pairing(a, b)
    pairing = Pairing(a, b, ("A", "B"), rows_a, rows_b)
    judged = (a.judged | b.judged) & set(a.metrics) & set(b.metrics) & metrics
    differ = []
    if judged and not same_judges(a.judge, b.judge):  # never variants of each other
        pairing.left_out = judged
        differ.append(
            f"{', '.join(sorted(judged))}: scored by different judges ({judge_text(a.judge)}; "
            f"{judge_text(b.judge)}), not paired"
        )
    rows, notes = _compare_task([pairing], distributions, lambda _, metric: metric in metrics)
    return [(row.metric, row.result) for row in rows], differ + notes


def _finished(result: Comparison) -> Comparison:
    """Each note once, and every row's p adjusted by Holm over all the rows."""
    result.notes = list(dict.fromkeys(result.notes))
    adjusted = stats.holm([row.result.p for row in result.rows])
    for row, p in zip(result.rows, adjusted, strict=True):
        row.p_holm = p
    return result
