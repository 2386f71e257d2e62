"""The runs a report shows: every results file read by `conceptcomb.common.results_reader`,
with this package's tasks (`known_tasks`), and leaderboard bundles.

Results of tasks that are not ours are skipped (lm-eval output may hold other tasks).
Leaderboard bundles (``*.bundle.json``) are read too, checked as ``validate-bundle`` checks
them: their tasks carry their verification state (verified, partial, unverified).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conceptcomb.benchmarks import known_tasks
from conceptcomb.common import results_reader
from conceptcomb.common.results_reader import value_metrics, version_text
from conceptcomb.common.runs import ModelInfo, Run, TaskRun


# --- task names ------------------------------------------------------------------------------
def read_bundle(path: Path, data: dict[str, Any], data_dir: str | None = None) -> Run:
    """A leaderboard bundle, checked: its rows carry their verification state. An invalid
    bundle gives no rows, only a note naming its first problem."""
    from conceptcomb.report.validate import check_bundle

    checked = check_bundle(data, data_dir)
    framework = data.get("framework") or {}
    model = data.get("model") or {}
    info = ModelInfo(
        str(model.get("label") or model.get("name") or path.stem),
        str(model.get("name") or ""),
        str(model.get("provider") or ""),
        dict(model.get("args") or {}),
        dict(model.get("details") or {}),
    )
    run = Run(str(framework.get("name", "")), framework.get("version"), info, sources=[path])
    run.generation = dict(data.get("generation") or {})
    if checked.problems:
        run.notes.append(
            f"{path.name}: INVALID bundle, left out ({len(checked.problems)} problems; the "
            f"first: {checked.problems[0]}); run `conceptcomb validate-bundle {path}`"
        )
        return run
    states = {check.task: check for check in checked.tasks}
    for record in data["tasks"]:
        task = str(record["task"])
        benchmark = known_tasks().get(task)
        if benchmark is None:
            continue
        check = states.get(task)
        run.tasks[task] = TaskRun(
            task=task,
            benchmark=benchmark,
            version=version_text(record.get("version")),
            metrics=value_metrics(record["metrics"]),
            n_items=record.get("items"),
            n_total=record.get("items_total"),
            options=dict(record.get("options") or {}),
            created=str(record.get("created") or data.get("created", "")),
            source=path,
            num_fewshot=record.get("num_fewshot"),
            judge=record.get("judge"),
            verification=check.status if check else None,
            verification_detail=check.detail if check else "",
        )
    return run


def _bundle(path: Path, data: dict[str, Any]) -> Run | None:
    if str(data.get("schema", "")).startswith("conceptcomb-bundle/"):
        return read_bundle(path, data)
    return None


def read_runs(paths: Iterable[Path]) -> list[Run]:
    """Every run of our tasks found in the files and folders, merged by (framework, model)."""
    return results_reader.read_runs(paths, known_tasks().get, (_bundle,))
