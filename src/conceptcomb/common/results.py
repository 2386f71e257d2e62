"""Results of ``conceptcomb score``: lm-eval's own table, and a JSON file to cite."""

from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import conceptcomb


def sem(values: list[float]) -> float | None:
    """lm-eval's standard error of a mean (sample SD / sqrt(n)); None under 2 values. One
    definition for every benchmark's scores and their offline re-checks."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((value - mean) ** 2 for value in values) / (n - 1) / n)


@dataclass(frozen=True)
class MetricValue:
    value: float
    stderr: float | None
    n: int
    higher_is_better: bool


@dataclass
class ScoreReport:
    task: str
    version: str
    filter_name: str
    metrics: dict[str, MetricValue]
    predictions: str
    source_format: str
    n_items: int
    usage: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    model_name: str | None = None  # the model that wrote the replies (--model-name)
    samples_output: str | None = None  # the per-item records (--samples-output)
    # The task options it scored with, as a run records them (lm-eval --metadata, Inspect
    # -T): what decides its items, prompts and parsing beyond the task's name.
    options: dict[str, Any] = field(default_factory=dict)
    # Items of the task's evaluation set with these options, where the benchmark knows it
    # without its data (the card's count for its default options).
    n_total: int | None = None

    def table(self) -> str:
        """The table lm-eval prints, made by lm-eval's own function."""
        from lm_eval.utils import make_table

        row: dict[str, Any] = {"alias": self.task}
        for name, metric in self.metrics.items():
            row[f"{name},{self.filter_name}"] = metric.value
            stderr = metric.stderr
            row[f"{name}_stderr,{self.filter_name}"] = (
                stderr if stderr is not None and math.isfinite(stderr) else "N/A"
            )
        return make_table(
            {
                "results": {self.task: row},
                "versions": {self.task: self.version},
                "n-shot": {self.task: 0},
                "higher_is_better": {
                    self.task: {k: m.higher_is_better for k, m in self.metrics.items()}
                },
            }
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "task_version": self.version,
            "predictions": self.predictions,
            "predictions_format": self.source_format,
            "n_items": self.n_items,
            "results": {
                name: {"value": m.value, "stderr": m.stderr, "n": m.n}
                for name, m in self.metrics.items()
            },
            "judge_usage": self.usage,
            "notes": self.notes,
            "model_name": self.model_name,
            "samples_output": self.samples_output,
            "options": self.options,
            "n_total": self.n_total,
            "conceptcomb_version": conceptcomb.__version__,
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
