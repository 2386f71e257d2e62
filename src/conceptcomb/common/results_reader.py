"""Reading results files: lm-eval ``results_*.json``, Inspect logs, ``conceptcomb score`` JSON.

The one reader of results for `conceptcomb report`, `conceptcomb seeds` and
`conceptcomb cggc report`, so the three agree on the same folder. Everything is read into
one shape, `Run`: one model in one framework, with the results of each task it ran
(`TaskRun`: metrics with standard errors, items evaluated out of the task's total, the task
options the run recorded). lm-eval metrics come from the ``judged`` filter, else ``none``,
else the first; Inspect metrics from each score's mean/total (their stderr beside them) or
the corpus metric's own name.

Which tasks count, and to which benchmark each belongs, is the caller's: a `BenchmarkOf`
function (task name -> benchmark, None to skip the task), so this module knows no
benchmark. `read_files` gives one `Run` per file (seeded runs of one model stay apart);
`read_runs` merges runs of the same model in the same framework (several lm-eval output
folders, one Inspect log per task) unless they differ in what the results record (the
judge, a task's options or version, the framework's version, generation settings): those
stay apart, a note naming the difference; a task read twice from one run is kept once, a
note saying so (`merge_runs`).
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePath
from typing import Any

from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.runs import INSPECT, LM_EVAL, RESCORED, Metric, ModelInfo, Run, TaskRun

BenchmarkOf = Callable[[str], "str | None"]
# Another kind of JSON results file (a leaderboard bundle): a Run, or None if not its kind.
JsonReader = Callable[[Path, dict[str, Any]], "Run | None"]

# lm-eval metadata keys that are not task options: lm-eval's own and the model's arguments.
_LM_EVAL_META = {"version", "config_source"}


def any_task(task: str) -> str:
    """Every task counts; its benchmark is the name's first part (``ccpt_tp`` -> ``ccpt``)."""
    return task.split("_", 1)[0]


def finite_number(value: Any) -> float | None:
    """A finite float, or None for "N/A", NaN, missing."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def value_metrics(entries: dict[str, Any]) -> dict[str, Metric]:
    """``{"E": {"value": 50.0, "stderr": 3.1}, ...}`` (our JSON outputs) -> metrics."""
    return {
        name: Metric(finite_number(m.get("value")), finite_number(m.get("stderr")))
        for name, m in entries.items()
    }


def version_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _iso(value: Any) -> str:
    if isinstance(value, int | float):
        stamp = datetime.datetime.fromtimestamp(float(value), tz=datetime.UTC)
        return stamp.isoformat(timespec="seconds")
    return str(value or "")


def model_label(name: str, args: dict[str, Any]) -> str:
    """A short, stable display name: the GGUF file, else the model argument, else the name."""
    gguf = args.get("gguf_file")
    if gguf:
        return PurePath(str(gguf)).name.removesuffix(".gguf")
    for key in ("model", "pretrained", "model_path"):
        value = args.get(key)
        if value:
            text = str(value)
            return PurePath(text).name if text.startswith(("/", "~", ".")) else text
    return name.split("/", 1)[-1] if name.startswith("hf/") else name


# --- lm-eval -----------------------------------------------------------------------------------
def _model_args(config: dict[str, Any]) -> dict[str, Any]:
    args = config.get("model_args") or {}
    if isinstance(args, str):  # "pretrained=...,dtype=..." in some lm-eval versions
        pairs = [part.split("=", 1) for part in args.split(",") if "=" in part]
        args = {key.strip(): value.strip() for key, value in pairs}
    return dict(args)


def _lm_eval_metrics(values: dict[str, Any]) -> dict[str, Metric]:
    """``"E,judged"`` / ``"E_stderr,judged"`` -> metrics; "judged" wins over other filters."""
    by_filter: dict[str, dict[str, Metric]] = {}
    for key, value in values.items():
        name, sep, filter_name = key.partition(",")
        if not sep or name.endswith("_stderr"):
            continue
        stderr = finite_number(values.get(f"{name}_stderr,{filter_name}"))
        by_filter.setdefault(filter_name, {})[name] = Metric(finite_number(value), stderr)
    for preferred in ("judged", "none"):
        if preferred in by_filter:
            return by_filter[preferred]
    return next(iter(by_filter.values()), {})


def read_lm_eval(path: Path, benchmark_of: BenchmarkOf = any_task) -> Run:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        results, config = data["results"], data.get("config") or {}
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as err:
        raise DataFormatError(f"{path}: not an lm-eval results file ({err}).") from err
    args = _model_args(config)
    name = str(data.get("model_name") or config.get("model") or "model")
    details = {
        key: value
        for key, value in {
            "revision": config.get("model_revision"),
            "sha": config.get("model_sha") or None,
            "num_parameters": config.get("model_num_parameters"),
            "dtype": config.get("model_dtype"),
            "transformers_version": data.get("transformers_version"),
        }.items()
        if value not in (None, "")
    }
    model = ModelInfo(model_label(name, args), name, str(config.get("model", "")), args, details)
    run = Run(LM_EVAL, data.get("lm_eval_version"), model, sources=[path])
    run.generation = {
        "gen_kwargs": config.get("gen_kwargs"),
        "chat_template_sha": data.get("chat_template_sha"),
        "fewshot_as_multiturn": data.get("fewshot_as_multiturn"),
        "system_instruction_sha": data.get("system_instruction_sha"),
        "limit": config.get("limit"),
        "random_seed": config.get("random_seed"),
        "batch_size": config.get("batch_size"),
    }
    created = _iso(data.get("date"))
    configs, samples = data.get("configs") or {}, data.get("n-samples") or {}
    for task, values in results.items():
        benchmark = benchmark_of(task)
        if benchmark is None or not isinstance(values, dict):
            continue
        task_config = configs.get(task) or {}
        metadata = dict(task_config.get("metadata") or {})
        options = {
            key: value
            for key, value in metadata.items()
            if key not in _LM_EVAL_META and key not in args
        }
        counts = samples.get(task) or {}
        run.tasks[task] = TaskRun(
            task=task,
            benchmark=benchmark,
            version=version_text((data.get("versions") or {}).get(task, metadata.get("version"))),
            metrics=_lm_eval_metrics(values),
            n_items=counts.get("effective"),
            n_total=counts.get("original"),
            options=options,
            created=created,
            source=path,
            num_fewshot=(data.get("n-shot") or {}).get(task),
            framework_hash=(data.get("task_hashes") or {}).get(task),
        )
        generation = task_config.get("generation_kwargs")
        if generation:
            run.generation.setdefault("task_generation_kwargs", {})[task] = generation
    return run


# --- Inspect -----------------------------------------------------------------------------------
def _inspect_metrics(scores: Iterable[Any]) -> dict[str, Metric]:
    """Per-key scores carry mean/stderr (or our total); corpus metrics are named themselves,
    their standard error ``NAME_stderr`` (`conceptcomb.common.inspect_metrics.means`)."""
    values: dict[str, float | None] = {}
    errors: dict[str, float | None] = {}
    for score in scores:
        for key, metric in score.metrics.items():
            base = key.split("/")[-1]
            if base in ("mean", "total"):
                values[score.name] = finite_number(metric.value)
            elif base == "stderr":
                errors[score.name] = finite_number(metric.value)
            elif base.endswith("_stderr"):
                errors[base.removesuffix("_stderr")] = finite_number(metric.value)
            elif base not in ("std", "var"):
                values[base] = finite_number(metric.value)
    return {name: Metric(value, errors.get(name)) for name, value in values.items()}


def _inspect_judge(log: Any) -> dict[str, Any] | None:
    roles = getattr(log.eval, "model_roles", None) or {}
    grader = roles.get("grader")
    if grader is None:
        return None
    return {"kind": "inspect-grader", "model": grader.model, "base_url": grader.base_url}


def read_inspect(path: Path, benchmark_of: BenchmarkOf = any_task) -> Run:
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path), header_only=True)
    except Exception as err:  # Inspect raises several kinds for a file that is not a log
        raise DataFormatError(f"{path}: not an Inspect log ({type(err).__name__}).") from err
    spec = log.eval
    args = dict(spec.model_args or {})
    model = ModelInfo(model_label(spec.model, args), spec.model, spec.model.split("/")[0], args)
    if spec.model_base_url:
        model.details["base_url"] = spec.model_base_url
    run = Run(INSPECT, (spec.packages or {}).get("inspect_ai"), model, sources=[path])
    config = spec.model_generate_config
    run.generation = {"generate_config": config.model_dump(exclude_none=True) if config else {}}
    task = str((spec.metadata or {}).get("task") or spec.task.split("/")[-1])
    benchmark = benchmark_of(task)
    if benchmark is None:
        return run
    if log.status != "success" or log.results is None:
        run.notes.append(f"{path.name}: the log's status is {log.status!r}; its results skipped")
        return run
    run.tasks[task] = TaskRun(
        task=task,
        benchmark=benchmark,
        version=version_text(spec.task_version),
        metrics=_inspect_metrics(log.results.scores),
        n_items=log.results.completed_samples or log.results.total_samples,
        n_total=spec.dataset.samples,
        options={k: v for k, v in (spec.task_args or {}).items() if v is not None},
        created=str(spec.created),
        source=path,
        judge=_inspect_judge(log),
    )
    return run


# --- conceptcomb score ---------------------------------------------------------------------
def _rescored_model(predictions: Path, source_format: str) -> ModelInfo:
    """The model behind rescored replies: from the lm-eval results or Inspect log beside them."""
    if source_format == "inspect log" and predictions.is_file():
        return read_inspect(predictions).model
    if source_format == "lm-eval samples" and predictions.parent.is_dir():
        for results in sorted(predictions.parent.glob("results_*.json")):
            return read_lm_eval(results).model
    return ModelInfo(predictions.stem, predictions.stem, "")


def _samples_output(path: Path, data: dict[str, Any]) -> Path | None:
    """The --samples-output file: as written, else beside the results by its name."""
    named = data.get("samples_output")
    if not named:
        return None
    written = Path(str(named))
    beside = path.parent / written.name
    return written if written.is_file() else beside if beside.is_file() else written


def read_score_json(path: Path, data: dict[str, Any], benchmark_of: BenchmarkOf = any_task) -> Run:
    try:
        task, results = str(data["task"]), data["results"]
        source_format = str(data.get("predictions_format", ""))
        predictions = Path(str(data.get("predictions", path)))
    except (KeyError, TypeError) as err:
        raise DataFormatError(f"{path}: not a `conceptcomb score` output ({err}).") from err
    name = data.get("model_name")
    model = (
        ModelInfo(str(name), str(name), "") if name else _rescored_model(predictions, source_format)
    )
    run = Run(RESCORED, data.get("conceptcomb_version"), model)
    run.sources.append(path)
    benchmark = benchmark_of(task)
    if benchmark is None:
        return run
    usage = data.get("judge_usage") or {}
    run.tasks[task] = TaskRun(
        task=task,
        benchmark=benchmark,
        version=version_text(data.get("task_version")),
        metrics=value_metrics(results),
        n_items=data.get("n_items"),
        n_total=data.get("n_total") if isinstance(data.get("n_total"), int) else None,
        options=dict(data["options"]) if isinstance(data.get("options"), dict) else {},
        created=str(data.get("created", "")),
        source=path,
        judge={"kind": "rescored", "identity": usage["judge"]} if usage.get("judge") else None,
        samples=_samples_output(path, data),
    )
    return run


# --- finding and merging -----------------------------------------------------------------------
def read_json(
    path: Path, benchmark_of: BenchmarkOf = any_task, others: Sequence[JsonReader] = ()
) -> Run | None:
    """A JSON file of any of the three kinds (or of ``others``), or None if it is none."""
    if path.name.startswith("results_"):
        return read_lm_eval(path, benchmark_of)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        return None
    if not isinstance(data, dict):
        return None
    for reader in others:
        run = reader(path, data)
        if run is not None:
            return run
    if "predictions_format" in data and "results" in data:
        return read_score_json(path, data, benchmark_of)
    if "eval" in data and "version" in data:
        return read_inspect(path, benchmark_of)
    if "results" in data and "configs" in data:
        return read_lm_eval(path, benchmark_of)
    return None


def result_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted([*path.rglob("*.json"), *path.rglob("*.eval")])
    if path.is_file():
        return [path]
    raise DataFormatError(f"{path}: no such file or folder.")


def read_files(
    paths: Iterable[Path],
    benchmark_of: BenchmarkOf = any_task,
    others: Sequence[JsonReader] = (),
    skip: str | None = None,
) -> list[Run]:
    """One run per results file found in the files and folders, not merged. A file named
    explicitly must be a results file; in a folder, other JSON files are passed over, and
    so are files whose name ends with ``skip`` (read by the caller)."""
    runs: list[Run] = []
    for path in paths:
        for file in result_files(Path(path)):
            if skip and file.name.endswith(skip):
                continue
            if file.suffix == ".eval":
                run = read_inspect(file, benchmark_of)
            else:
                run = read_json(file, benchmark_of, others)
            if run is None:
                if file == Path(path):
                    raise DataFormatError(
                        f"{file}: neither lm-eval results, an Inspect log, nor a "
                        "`conceptcomb score` output."
                    )
                continue
            runs.append(run)
    return runs


def read_runs(
    paths: Iterable[Path], benchmark_of: BenchmarkOf = any_task, others: Sequence[JsonReader] = ()
) -> list[Run]:
    """Every run found in the files and folders, merged by (framework, model)."""
    return merge_runs(read_files(paths, benchmark_of, others))


def merge_runs(runs: Iterable[Run]) -> list[Run]:
    """Runs of one model in one framework as one run, unless they differ in a setting the
    results record (`run_differences`): those stay apart, each its own run, with a note
    naming the difference. A task held twice with the same settings and results (the same
    run read twice) is a duplicate: kept once, with a note saying so."""
    merged: list[Run] = []
    for run in runs:
        apart: list[str] = []
        for into in (other for other in merged if other.key == run.key):
            differ = run_differences(into, run)
            if not differ:
                _merge_into(into, run)
                break
            apart = apart or differ
        else:
            merged.append(run)
            if apart:
                run.notes.append(
                    f"{_sources(run)} differ from an earlier run of {run.model.label} "
                    f"({run.framework}) in {'; '.join(apart)}: kept apart (a bundle, a report "
                    "row each)"
                )
    return [run for run in merged if run.tasks or run.notes]


# Task options that say where a run looked, not what it measured.
_LOCATION_OPTIONS = {"judge_cache", "judge_api_key_env"}
# Generation entries of lm-eval that say how much or how fast, not what.
_LOCATION_GENERATION = {"limit", "batch_size"}


def _sources(run: Run) -> str:
    return ", ".join(str(path) for path in run.sources) or run.model.label


def _task_settings(task: TaskRun) -> dict[str, Any]:
    options = {k: v for k, v in task.options.items() if k not in _LOCATION_OPTIONS}
    return {
        "version": task.version,
        "num_fewshot": task.num_fewshot,
        "task hash": task.framework_hash,
        "judge": task.judge,
        **{f"options.{key}": value for key, value in sorted(options.items())},
    }


def _changed(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    """``name (a's vs b's)`` for each entry the two hold differently (missing: "-")."""
    return [
        f"{prefix}{name} ({_shown(a.get(name, '-'))} vs {_shown(b.get(name, '-'))})"
        for name in dict.fromkeys([*a, *b])
        if a.get(name) != b.get(name)
    ]


def _shown(value: Any) -> str:
    """A value in a note: a long one (a hash, a judge record) cut to its start."""
    text = str(value)
    return text if len(text) <= 40 else text[:12] + "..."


def _same_result(a: TaskRun, b: TaskRun) -> bool:
    return (a.metrics, a.n_items, a.n_total) == (b.metrics, b.n_items, b.n_total)


def run_differences(a: Run, b: Run) -> list[str]:
    """What keeps two runs of one model in one framework apart ([] where they merge): the
    framework's version, generation settings, and for each task both hold its settings
    (version, options, judge...) or, with the same settings, its results."""
    found = []
    if a.framework_version != b.framework_version:
        found.append(f"{a.framework} version ({a.framework_version} vs {b.framework_version})")
    generation_a, generation_b = (
        {k: v for k, v in run.generation.items() if k not in _LOCATION_GENERATION} for run in (a, b)
    )
    found += _changed(generation_a, generation_b, "generation.")
    for name in sorted(set(a.tasks) & set(b.tasks)):
        old, new = a.tasks[name], b.tasks[name]
        if old.created == new.created and _same_result(old, new):
            continue  # one run read twice (its results and its bundle, two copies)
        settings = _changed(_task_settings(old), _task_settings(new), f"{name} ")
        if not settings and not _same_result(old, new):
            settings = [f"{name} results (same settings: a rerun)"]
        found += settings
    return found


def _merge_into(into: Run, run: Run) -> None:
    """``run``'s tasks into ``into`` (`run_differences` found none that differ)."""
    into.sources += run.sources
    into.notes += run.notes
    for name, task in run.tasks.items():
        old = into.tasks.get(name)
        if old is not None:
            into.notes.append(
                f"{name}: {old.source} and {task.source} are duplicates (same settings and "
                f"results): merged, {task.source} left out"
            )
            continue
        into.tasks[name] = task
