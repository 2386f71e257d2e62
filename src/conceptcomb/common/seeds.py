"""Mean and standard error of the mean over seeded runs (``conceptcomb seeds``).

The CCPT paper samples every reply with three seeds and reports, per metric, the mean of
the three runs' values with its standard error of the mean (Table 3, Appendix B.1). This
module reads the results of several runs (lm-eval ``results_*.json``, Inspect logs, or
``conceptcomb score --output`` files), groups them by task and prints ``mean ± SEM``
per metric, SEM = sample standard deviation (n - 1) / sqrt(n).

The authors' printing helper (``experiment/utils.py``, ``print_stat``) shows ``np.std``
of the seeds' means, the population standard deviation (n), not the SEM the paper names;
the JSON output carries both (``sem`` and ``sd_population``) so either can be reported.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import DataFormatError

Metrics = dict[str, float]


@dataclass(frozen=True)
class RunResults:
    """The metrics one run reported, per task."""

    source: str
    kind: str  # "lm-eval", "inspect" or "conceptcomb score"
    tasks: dict[str, Metrics]


@dataclass(frozen=True)
class SeedStat:
    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def sem(self) -> float | None:
        """Sample standard deviation / sqrt(n); undefined for one run."""
        return statistics.stdev(self.values) / math.sqrt(self.n) if self.n > 1 else None

    @property
    def sd_population(self) -> float:
        return statistics.pstdev(self.values)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "sem": self.sem,
            "sd_population": self.sd_population,
            "n": self.n,
            "values": list(self.values),
        }


@dataclass
class SeedReport:
    runs: list[RunResults]
    stats: dict[str, dict[str, SeedStat]]  # task -> metric -> values over runs
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": [run.source for run in self.runs],
            "results": {
                task: {name: stat.as_dict() for name, stat in metrics.items()}
                for task, metrics in self.stats.items()
            },
            "notes": self.notes,
        }

    def table(self, digits: int = 1) -> str:
        """One block per task: ``metric  mean ± SEM  (n runs)``, as Table 3 prints them."""
        lines = []
        for task, metrics in self.stats.items():
            lines.append(task)
            width = max(len(name) for name in metrics)
            for name, stat in metrics.items():
                spread = f" ± {stat.sem:.{digits}f}" if stat.sem is not None else ""
                lines.append(f"  {name:<{width}}  {stat.mean:.{digits}f}{spread}  (n={stat.n})")
        return "\n".join(lines)


# --- reading runs -------------------------------------------------------------------------
def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def lm_eval_metrics(results: dict[str, Any]) -> dict[str, Metrics]:
    """``results`` of an lm-eval results file: ``"E,judged"`` -> ``E`` (filter dropped
    unless two filters report the same metric), standard errors left out."""
    found: dict[str, Metrics] = {}
    for task, values in results.items():
        metrics: dict[str, dict[str, float]] = {}
        for key, value in values.items():
            name, _, filter_name = key.partition(",")
            number = _number(value)
            if not filter_name or name.endswith("_stderr") or number is None:
                continue
            metrics.setdefault(name, {})[filter_name] = number
        flat: Metrics = {}
        for name, by_filter in metrics.items():
            if len(by_filter) == 1:
                flat[name] = next(iter(by_filter.values()))
            else:
                flat.update({f"{name},{f}": v for f, v in by_filter.items()})
        found[task] = flat
    return found


def _read_lm_eval(path: Path, data: dict[str, Any]) -> RunResults:
    results = data.get("results")
    if not isinstance(results, dict):
        raise DataFormatError(f"{path}: no 'results' object (is it an lm-eval results file?).")
    return RunResults(str(path), "lm-eval", lm_eval_metrics(results))


def _read_score_output(path: Path, data: dict[str, Any]) -> RunResults:
    metrics = {
        name: float(entry["value"])
        for name, entry in data["results"].items()
        if isinstance(entry, dict) and _number(entry.get("value")) is not None
    }
    return RunResults(str(path), "conceptcomb score", {str(data["task"]): metrics})


def _read_inspect(path: Path) -> RunResults:
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path), header_only=True)
    except Exception as err:  # Inspect raises several types for unreadable logs
        raise DataFormatError(f"{path}: not a readable Inspect log ({err}).") from err
    if log.status != "success" or log.results is None:
        raise DataFormatError(f"{path}: the run did not finish (status {log.status}).")
    metrics: Metrics = {}
    for score in log.results.scores:
        for metric_name, metric in score.metrics.items():
            bare = metric_name.rsplit("/", 1)[-1]
            value = _number(metric.value)
            if bare in ("stderr", "std", "var") or value is None:
                continue
            # a dict-valued score: one EvalScore per key, its value under "mean"/"total"
            metrics[score.name if bare in ("mean", "total") else bare] = value
    task = log.eval.task.rsplit("/", 1)[-1]
    return RunResults(str(path), "inspect", {task: metrics})


def read_run(path: Path) -> RunResults:
    """One run's results: lm-eval results JSON, Inspect log, or ``conceptcomb score`` JSON."""
    if not path.is_file():
        raise DataFormatError(f"{path}: no such file.")
    if path.suffix == ".eval":
        return _read_inspect(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataFormatError(f"{path}: not a JSON file ({err}).") from err
    if not isinstance(data, dict):
        raise DataFormatError(f"{path}: expected a JSON object.")
    if "eval" in data and "status" in data:
        return _read_inspect(path)
    if "task" in data and isinstance(data.get("results"), dict):
        return _read_score_output(path, data)
    return _read_lm_eval(path, data)


def expand(paths: Iterable[Path]) -> list[Path]:
    """Files as given; folders contribute their lm-eval results files and Inspect logs."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(path.rglob("results_*.json")) + sorted(path.rglob("*.eval"))
        else:
            files.append(path)
    return files


# --- aggregating --------------------------------------------------------------------------
def aggregate_runs(runs: list[RunResults]) -> SeedReport:
    """Per task and metric, the values of every run that reports them."""
    values: dict[str, dict[str, list[float]]] = {}
    for run in runs:
        for task, metrics in run.tasks.items():
            for name, value in metrics.items():
                values.setdefault(task, {}).setdefault(name, []).append(value)
    stats = {
        task: {name: SeedStat(tuple(v)) for name, v in metrics.items()}
        for task, metrics in values.items()
    }
    report = SeedReport(runs, stats)
    runs_per_task = {task: sum(task in run.tasks for run in runs) for task in stats}
    for task, metrics in stats.items():
        if runs_per_task[task] < 2:
            report.notes.append(f"{task}: one run only, no standard error.")
        short = [name for name, stat in metrics.items() if stat.n < runs_per_task[task]]
        if short:
            report.notes.append(f"{task}: some runs lack {', '.join(short)}.")
        same = [n for n, s in metrics.items() if s.n > 1 and len(set(s.values)) == 1]
        if runs_per_task[task] > 1 and same and len(same) == len(metrics):
            report.notes.append(
                f"{task}: every metric is identical in all runs: were they sampled "
                "(temperature > 0) with different seeds?"
            )
    return report


def seed_report(paths: Iterable[Path]) -> SeedReport:
    files = expand(paths)
    if not files:
        raise DataFormatError("no results files found in " + ", ".join(map(str, paths)))
    return aggregate_runs([read_run(path) for path in files])
