"""Mean and standard error of the mean over seeded runs (``conceptcomb seeds``).

The CCPT paper samples every reply with three seeds and reports, per metric, the mean of
the three runs' values with its standard error of the mean (Table 3, Appendix B.1). This
module reads the results of several runs (lm-eval ``results_*.json``, Inspect logs, or
``conceptcomb score --output`` files, through `conceptcomb.common.results_reader`, the
reader of ``conceptcomb report``), groups them by task and prints ``mean ± SEM``
per metric, SEM = sample standard deviation (n - 1) / sqrt(n).

The authors' printing helper (``experiment/utils.py``, ``print_stat``) shows ``np.std``
of the seeds' means, the population standard deviation (n), not the SEM the paper names;
the JSON output carries both (``sem`` and ``sd_population``) so either can be reported.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.results_reader import BenchmarkOf, any_task, read_files
from conceptcomb.common.runs import Run

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
def run_results(run: Run) -> RunResults:
    """The metric values one results file reports, per task (values that are not numbers,
    "N/A" or NaN, left out)."""
    tasks = {
        name: {metric: m.value for metric, m in task.metrics.items() if m.value is not None}
        for name, task in run.tasks.items()
    }
    return RunResults(str(run.sources[0]), run.framework, tasks)


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


def seed_report(paths: Iterable[Path], benchmark_of: BenchmarkOf = any_task) -> SeedReport:
    """Mean ± SEM over the runs in ``paths``: one run per results file, each read by
    `conceptcomb.common.results_reader` (as ``conceptcomb report`` reads them), of the
    tasks ``benchmark_of`` accepts (every task by default)."""
    paths = list(paths)
    runs = read_files(paths, benchmark_of)
    found = [run for run in runs if run.tasks]
    if not found:
        raise DataFormatError("no results files found in " + ", ".join(map(str, paths)))
    report = aggregate_runs([run_results(run) for run in found])
    report.notes += [note for run in runs for note in run.notes]
    return report
