"""What a results file says, in one shape: `Run`, one model in one framework, with the
results of each of our tasks it ran (`TaskRun`). `conceptcomb.common.results_reader` reads
every format into it; the benchmarks' leaderboard tables read it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LM_EVAL, INSPECT, RESCORED = "lm-eval", "inspect", "conceptcomb score"


@dataclass(frozen=True)
class Metric:
    value: float | None
    stderr: float | None = None


@dataclass
class TaskRun:
    task: str
    benchmark: str
    version: str | None
    metrics: dict[str, Metric]
    n_items: int | None  # items evaluated
    n_total: int | None  # items of the task's evaluation set
    options: dict[str, Any]  # task options as the run recorded them
    created: str  # ISO date of the run
    source: Path
    num_fewshot: int | None = None
    framework_hash: str | None = None  # lm-eval's task_hashes entry
    judge: dict[str, Any] | None = None  # what the run itself says about its judge
    samples: Path | None = None  # `conceptcomb score --samples-output`: the per-item records
    # From a bundle: verified / partial / unverified (`conceptcomb.leaderboard.checks.verify`),
    # and why.
    verification: str | None = None
    verification_detail: str = ""
    # From a bundle: the records of the datasets the task read (`tasks[].datasets`).
    datasets: list[dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.n_items is None or self.n_total is None or self.n_items >= self.n_total

    def items_text(self) -> str:
        if self.n_items is None:
            return "?"
        return f"{self.n_items}" if self.complete else f"{self.n_items}/{self.n_total}"


@dataclass
class ModelInfo:
    label: str  # short display name
    name: str  # as the framework names it
    provider: str  # lm-eval model type or Inspect provider
    args: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # revision, sha, dtype, ...


# (framework, provider) of the frameworks' mock models, and how to name them.
MOCK_PROVIDERS = {
    (INSPECT, "mockllm"): "Inspect's mockllm",
    (LM_EVAL, "dummy"): "lm-eval's dummy model",
}


@dataclass
class Run:
    framework: str
    framework_version: str | None
    model: ModelInfo
    tasks: dict[str, TaskRun] = field(default_factory=dict)
    generation: dict[str, Any] = field(default_factory=dict)
    sources: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        args = json.dumps(self.model.args, sort_keys=True, default=str)
        return (self.framework, self.model.label, hashlib.sha256(args.encode()).hexdigest())

    @property
    def mock_model(self) -> str | None:
        """What the model is when it is a framework's mock (Inspect's ``mockllm``, lm-eval's
        ``dummy``), which answers without a model: its scores mean nothing. Else None."""
        return MOCK_PROVIDERS.get((self.framework, self.model.provider))

    @property
    def framework_text(self) -> str:
        return (
            f"{self.framework} {self.framework_version}"
            if self.framework_version
            else (self.framework)
        )
