"""The runs a report shows: every results file read by `conceptcomb.common.results_reader`,
with this package's tasks (`known_tasks`), and leaderboard bundles.

Results of tasks that are not ours are skipped (lm-eval output may hold other tasks), and
so are runs of a framework's mock model (Inspect's ``mockllm``, lm-eval's ``dummy``: a
smoke test's scores mean nothing), each with a note.
Leaderboard bundles (``*.bundle.json``) are read too, checked as ``validate-bundle`` checks
them: their tasks carry their verification state (verified, partial, unverified).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conceptcomb.benchmarks import benchmarks, known_tasks
from conceptcomb.common import results_reader
from conceptcomb.common.results_reader import value_metrics, version_text
from conceptcomb.common.runs import ModelInfo, Run, TaskRun

BUNDLE_SUFFIX = ".bundle.json"


def read_bundle(path: Path, data: Any, data_dir: str | None = None, reuse: bool = False) -> Run:
    """A leaderboard bundle, checked: its rows carry their verification state. An invalid
    bundle gives no rows, only a note naming its first problem (nothing of it is read
    before the checks pass: its fields may have any type). ``reuse``: a verdict remembered
    of an earlier check is taken (`conceptcomb.leaderboard.checks.verdicts`)."""
    from conceptcomb.leaderboard.checks import verdicts

    checked = verdicts.checked(data, data_dir, reuse)
    if checked.problems:
        return _invalid(path, checked.problems)
    framework, model = data["framework"], data["model"]
    info = ModelInfo(
        str(model.get("label") or model.get("name") or path.stem),
        str(model.get("name") or ""),
        str(model.get("provider") or ""),
        dict(model.get("args") or {}),
        dict(model.get("details") or {}),
    )
    run = Run(str(framework.get("name", "")), framework.get("version"), info, sources=[path])
    run.generation = dict(data.get("generation") or {})
    if checked.remembered:
        run.notes.append(
            f"{path.name}: the verdict of its check at {checked.remembered} was reused (same "
            "content sha256 and package); --recheck checks it again"
        )
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
            datasets=[d for d in record.get("datasets") or [] if isinstance(d, dict)],
        )
    return run


def _invalid(path: Path, problems: list[str]) -> Run:
    """An INVALID bundle as a run with no rows: a note with its first problem."""
    run = Run("", None, ModelInfo(path.stem, "", "", {}, {}), sources=[path])
    run.notes.append(
        f"{path.name}: INVALID bundle, left out ({len(problems)} problems; the first: "
        f"{problems[0]}); run `conceptcomb validate-bundle {path}`"
    )
    return run


def read_bundle_file(path: Path, data_dir: str | None = None, reuse: bool = False) -> Run:
    """A ``*.bundle.json`` read within the limits of `conceptcomb.leaderboard.bundles.safe_json` (a
    bundle comes from anyone: never a plain ``json.loads``)."""
    from conceptcomb.leaderboard.checks.validate import check_file, read_bundle_file

    try:
        data = read_bundle_file(path)
    except (OSError, ValueError):  # Refused is a ValueError: check_file names the problem
        return _invalid(path, check_file(path).problems)
    return read_bundle(path, data, data_dir, reuse)


def _bundle_reader(data_dir: str | None, reuse: bool) -> results_reader.JsonReader:
    def read(path: Path, data: dict[str, Any]) -> Run | None:
        """A bundle not named ``*.bundle.json`` (the JSON was read already)."""
        if str(data.get("schema", "")).startswith("conceptcomb-bundle/"):
            return read_bundle(path, data, data_dir, reuse)
        return None

    return read


def read_runs(
    paths: Iterable[Path],
    data_dir: str | None = None,
    include_mock: bool = False,
    reuse_verdicts: bool = False,
) -> list[Run]:
    """Every run of our tasks found in the files and folders, merged by (framework, model);
    bundles are checked against the benchmark files in ``data_dir`` (else
    ``CONCEPTCOMB_DATA_DIR`` or the cache), as ``validate-bundle --data-dir`` does, or take
    the verdict of an earlier check (``reuse_verdicts``: `conceptcomb.leaderboard.checks.verdicts`).
    Runs of a mock model keep no task (a note says so) unless ``include_mock`` (tests of
    tables)."""
    bundles, others = [], []
    for path in paths:
        files = results_reader.result_files(Path(path))
        found = [file for file in files if file.name.endswith(BUNDLE_SUFFIX)]
        bundles += found
        if len(found) < len(files) or not files:
            others.append(path)
    runs = [read_bundle_file(path, data_dir, reuse_verdicts) for path in bundles]
    if others:
        readers = (_bundle_reader(data_dir, reuse_verdicts),)
        runs += results_reader.read_files(others, known_tasks().get, readers, skip=BUNDLE_SUFFIX)
    merged = results_reader.merge_runs(runs)
    return merged if include_mock else [_without_mock(run) for run in merged]


def _without_mock(run: Run) -> Run:
    """A run of a mock model, with its tasks left out and a note saying why."""
    if run.mock_model is None or not run.tasks:
        return run
    files = ", ".join(sorted({path.name for path in run.sources}))
    run.notes.append(
        f"{files}: a run of {run.mock_model} ({run.model.name}), left out: a mock model "
        "answers without a model, so its scores mean nothing"
    )
    run.tasks = {}
    return run


def nothing_usable(paths: Iterable[Path], runs: list[Run]) -> str:
    """One line for a report or bundle with no row to show: what was looked for, where."""
    where = ", ".join(str(path) for path in paths)
    tasks = ", ".join(f"{b.key}_*" for b in benchmarks())
    left_out = sum(1 for run in runs if run.notes and not run.tasks)
    why = f" ({left_out} left out: see the notes above)" if left_out else ""
    return (
        f"no results of a conceptcomb task in {where}{why}: looked for lm-eval results_*.json "
        "(with their samples_*.jsonl), Inspect logs (*.eval, *.json), `conceptcomb score "
        f"--output` files and *{BUNDLE_SUFFIX} bundles, holding {tasks} tasks run with a "
        "real model."
    )
