"""``conceptcomb judge agree RUN RUN``: how much a result depends on its judge.

Two scorings of the same replies by two judges (bundles, ``export --to eee`` folders, or the
results of ``conceptcomb score`` with their samples: each run's per-item evidence holds the
judge questions with their ratings). Per judged task, the questions both judges rated are
paired by their prompt and their ratings compared (`conceptcomb.leaderboard.statistics
.agreement`: Spearman, Kendall, Krippendorff's ordinal alpha with bootstrap intervals, the
mean difference); the items both scorings hold are paired by their id, and each metric's
A - B is the paired difference of their per-item scores, clustered by the items' unit where
they share one (`conceptcomb.leaderboard.statistics.stats.paired_difference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conceptcomb.benchmarks import evidence_adapter, get, known_tasks
from conceptcomb.common import results_reader
from conceptcomb.common.errors import ConfigError, DataFormatError
from conceptcomb.leaderboard.bundles.safe_json import decode_evidence
from conceptcomb.leaderboard.checks.replies import BUNDLE_SUFFIX, is_stored_run, stored_bundles
from conceptcomb.leaderboard.statistics.agreement import Agreement, agreement
from conceptcomb.leaderboard.statistics.stats import Difference, paired_difference


# --- reading a RUN --------------------------------------------------------------------------
def run_bundles(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(label, bundle) of everything a RUN argument holds: bundles, EEE exports (the bundle
    they carry), else results made into bundles as ``submit-bundle`` makes them."""
    from conceptcomb.leaderboard.bundles.bundle import build_bundle

    if is_stored_run(path):
        return stored_bundles(path)
    found = []
    for run in results_reader.read_files([path], known_tasks().get, skip=BUNDLE_SUFFIX):
        if run.tasks:
            label = f"{run.model.label} ({run.framework})"
            found.append((label, build_bundle(run, intervals=False)))
    if not found:
        raise DataFormatError(f"{path}: no bundle, export or results of this package's tasks.")
    return found


# --- one scoring of one task ----------------------------------------------------------------
@dataclass
class Scoring:
    """One run's judged task: its judge, each question's rating, each item's scores."""

    task: str
    benchmark: str
    source: str
    judge: str
    record: Any = None  # the judge's `JudgeRecord` (None: not recorded)
    ratings: dict[str, float] = field(default_factory=dict)  # judge prompt -> rating
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)  # item id -> scores
    units: dict[str, str] = field(default_factory=dict)  # item id -> its unit
    unit: str | None = None


def judge_record(judge: Any) -> Any:
    """The one judge a task's ``judge`` entry names, as a `JudgeRecord` (None: none, or
    several): `judge_identity.records_of` reads every shape a bundle has had."""
    from conceptcomb.scorers.judge_identity import records_of

    records = records_of(judge)
    return records[0] if len(records) == 1 else None


def judge_label(judge: Any) -> str:
    """The judge a task record names, in one line (`judge_identity.describe`)."""
    from conceptcomb.scorers.judge_identity import describe, records_of

    records = records_of(judge)
    if not records:
        return "no judge recorded"
    return " + ".join(describe(record) for record in records)


def task_questions(
    record: dict[str, Any], items: list[dict[str, Any]], data_dir: str | None
) -> list[list[tuple[str, float | None]]] | None:
    """Each item's (judge prompt, stored rating) pairs; None where the benchmark's evidence
    names no judge questions (no judge, or none it can ask again)."""
    task, benchmark = str(record["task"]), str(record["benchmark"])
    adapter = evidence_adapter(benchmark)
    if adapter is None or not hasattr(adapter, "questions") or not get(benchmark).judged(task):
        return None
    known = adapter.rescore_set(task, record.get("options") or {}, data_dir)
    asked = []
    for number, evidence in enumerate(items):
        key = str(evidence.get("id") or "").split(":", 1)[-1]
        if key not in known:
            raise DataFormatError(f"{task}: item #{number + 1} ({key}) is not a test item.")
        asked.append(adapter.questions(task, known[key], evidence))
    return asked


def scorings(label: str, bundle: dict[str, Any], data_dir: str | None) -> list[Scoring]:
    """Every judged task of a bundle that carries per-item evidence."""
    found = []
    for index, record in enumerate(bundle.get("tasks") or []):
        if not isinstance(record, dict) or record.get("task") not in known_tasks():
            continue
        evidence = record.get("evidence") or {}
        if not isinstance(evidence, dict) or "data" not in evidence:
            continue
        items = decode_evidence(evidence, f"{label}: tasks[{index}].evidence")
        asked = task_questions(record, items, data_dir)
        if asked is None:
            continue
        judge = record.get("judge")
        scoring = Scoring(
            str(record["task"]), str(record["benchmark"]), label, judge_label(judge),
            judge_record(judge),
        )  # fmt: skip
        for rows in asked:
            for prompt, rating in rows:
                if rating is not None and math.isfinite(float(rating)):
                    scoring.ratings.setdefault(prompt, float(rating))
        for number, item in enumerate(items):
            item_id = str(item.get("id") or f"#{number}")
            scoring.scores[item_id] = item.get("scores") or {}
            if isinstance(item.get("unit"), str):
                scoring.units[item_id] = item["unit"]
        adapter = evidence_adapter(scoring.benchmark)
        scoring.unit = getattr(adapter, "UNIT", None)
        found.append(scoring)
    return found


def read_scorings(path: Path, data_dir: str | None = None) -> dict[str, Scoring]:
    """Task -> its scoring, from one RUN argument (which must hold one run of each task)."""
    found: dict[str, Scoring] = {}
    for label, bundle in run_bundles(path):
        for scoring in scorings(label, bundle, data_dir):
            if scoring.task in found:
                raise ConfigError(
                    f"{path}: holds two runs of {scoring.task} ({found[scoring.task].source}, "
                    f"{scoring.source}): give one file per RUN."
                )
            found[scoring.task] = scoring
    return found


# --- two scorings compared ------------------------------------------------------------------
@dataclass
class TaskAgreement:
    task: str
    judge_a: str
    judge_b: str
    same_judge: bool  # the two records name one judge (then the figures say how stable it is)
    questions: Agreement | None  # None: fewer than two questions rated by both
    only_one: int  # questions only one scoring rated
    metrics: dict[str, Difference | None] = field(default_factory=dict)  # A - B
    items: int = 0  # items both scorings hold

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "judge_a": self.judge_a,
            "judge_b": self.judge_b,
            "same_judge": self.same_judge,
            "questions": None if self.questions is None else self.questions.to_json(),
            "questions_rated_by_one_only": self.only_one,
            "items": self.items,
            "metrics_a_minus_b": {
                name: None if diff is None else diff.to_json()
                for name, diff in self.metrics.items()
            },
        }


def _metric_names(scoring: Scoring) -> list[str]:
    infos = get(scoring.benchmark).tasks().get(scoring.task, [])
    return [info.name for info in infos if info.aggregation == "mean"]


def _score(scores: dict[str, Any], name: str) -> float:
    value = scores.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def compare_scorings(a: Scoring, b: Scoring, n_resamples: int | None = None) -> TaskAgreement:
    prompts = [prompt for prompt in a.ratings if prompt in b.ratings]
    only = len(a.ratings.keys() ^ b.ratings.keys())
    questions = None
    if len(prompts) >= 2:
        x = np.array([a.ratings[p] for p in prompts])
        y = np.array([b.ratings[p] for p in prompts])
        questions = agreement(x, y) if n_resamples is None else agreement(x, y, n_resamples)
    from conceptcomb.scorers.judge_identity import same_judge

    same = a.record is not None and same_judge(a.record, b.record)
    result = TaskAgreement(a.task, a.judge, b.judge, same, questions, only)
    ids = [item for item in a.scores if item in b.scores]
    result.items = len(ids)
    units = [a.units.get(i) for i in ids]
    shared = units if ids and all(u is not None for u in units) else None
    for name in _metric_names(a):
        xs = np.array([_score(a.scores[i], name) for i in ids])
        ys = np.array([_score(b.scores[i], name) for i in ids])
        if np.isfinite(xs).any() or np.isfinite(ys).any():
            result.metrics[name] = paired_difference(xs, ys, shared, a.unit)
    return result


def agree(
    path_a: Path, path_b: Path, data_dir: str | None = None, n_resamples: int | None = None
) -> list[TaskAgreement]:
    a, b = read_scorings(path_a, data_dir), read_scorings(path_b, data_dir)
    if not a or not b:
        empty = path_a if not a else path_b
        raise ConfigError(
            f"{empty}: no judged task with per-item evidence (judge questions and ratings): "
            "give a bundle, an `export --to eee` folder, or `conceptcomb score` results "
            "written with --samples-output."
        )
    common = [task for task in a if task in b]
    if not common:
        raise ConfigError(
            f"{path_a} ({', '.join(a)}) and {path_b} ({', '.join(b)}) share no judged task."
        )
    return [compare_scorings(a[task], b[task], n_resamples) for task in common]


def _signed(value: float, digits: int = 2) -> str:
    return f"{value:+.{digits}f}"


def lines(result: TaskAgreement) -> list[str]:
    """What ``judge agree`` prints for one task."""
    found = [f"{result.task}: A judged by {result.judge_a}; B judged by {result.judge_b}"]
    if result.same_judge:
        found.append("  (one judge: the figures say how stable its ratings are)")
    q = result.questions
    if q is None:
        found.append("  fewer than two judge questions rated by both: no agreement figures")
    else:
        extra = f" ({result.only_one} rated by one only)" if result.only_one else ""
        found.append(f"  {q.n} judge questions rated by both{extra}; 95% bootstrap intervals:")
        found.append(
            f"  Spearman {q.spearman.text()}, Kendall tau-b {q.kendall.text()}, "
            f"Krippendorff's alpha (ordinal) {q.alpha.text()}"
        )
        found.append(
            f"  same rating {100 * q.equal:.1f}%, within one point {100 * q.within_one:.1f}%"
        )
        d, m = q.mean_difference, q.mean_abs_difference
        if d is not None:
            found.append(
                f"  mean rating A {d.a:.2f}, B {d.b:.2f}, A - B {_signed(d.difference)} "
                f"[{_signed(d.lower)}, {_signed(d.upper)}]"
                + (f"; mean |A - B| {m.value:.2f} [{m.lower:.2f}, {m.upper:.2f}]" if m else "")
            )
    found.append(f"  {result.items} items in both; per metric A - B, paired, 95% interval:")
    for name, diff in result.metrics.items():
        if diff is None:
            found.append(f"    {name}: fewer than two items defined in both")
            continue
        found.append(
            f"    {name}: A {diff.a:.2f}, B {diff.b:.2f}, A - B {_signed(diff.difference)} "
            f"[{_signed(diff.lower)}, {_signed(diff.upper)}], p {diff.p:.3g} ({diff.method})"
        )
    return found
