"""Reading results: lm-eval ``results_*.json``, Inspect logs, ``conceptcomb score`` JSON.

Everything is read into one shape, `Run`: one model in one framework, with the results
of each of our tasks it ran (`TaskRun`: metrics with standard errors, items evaluated out
of the task's total, the task options the run recorded). Runs of the same model in the
same framework (several lm-eval output folders, one Inspect log per task) are merged; when
a task appears twice the newer result wins and a note says so.

Results of tasks that are not ours are skipped (lm-eval output may hold other tasks).
Leaderboard bundles (``*.bundle.json``) are read too, checked as ``validate-bundle`` checks
them: their tasks carry their verification state (verified, partial, unverified).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

from conceptcomb.common.errors import DataFormatError

LM_EVAL, INSPECT, RESCORED = "lm-eval", "inspect", "conceptcomb score"
BENCHMARKS = ("ccpt", "cggc", "abspyramid", "mcrae")
# lm-eval metadata keys that are not task options: lm-eval's own and the model's arguments.
_LM_EVAL_META = {"version", "config_source"}


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
    # From a bundle: verified / partial / unverified (`conceptcomb.report.verify`), and why.
    verification: str | None = None
    verification_detail: str = ""

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
    def framework_text(self) -> str:
        return (
            f"{self.framework} {self.framework_version}"
            if self.framework_version
            else (self.framework)
        )


# --- task names ------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def known_tasks() -> dict[str, str]:
    """Every task name of this package -> its benchmark."""
    from conceptcomb.abspyramid.tasks import all_specs as abspyramid_specs
    from conceptcomb.ccpt.tasks import all_specs as ccpt_specs
    from conceptcomb.ccpt.tasks import method_specs as ccpt_method_specs
    from conceptcomb.cggc.tasks import all_specs as cggc_specs
    from conceptcomb.cggc.tasks import verified_specs as cggc_verified_specs
    from conceptcomb.mcrae.tasks import all_specs as mcrae_specs

    names = {"cggc": "cggc"}
    for benchmark, specs in (
        ("ccpt", ccpt_specs() + ccpt_method_specs()),
        ("cggc", cggc_specs() + cggc_verified_specs()),
        ("abspyramid", abspyramid_specs()),
        ("mcrae", mcrae_specs()),
    ):
        names.update({spec.name: benchmark for spec in specs})
    return names


def _number(value: Any) -> float | None:
    """A finite float, or None for "N/A", NaN, missing."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _version(value: Any) -> str | None:
    return None if value is None else str(value)


def _iso(value: Any) -> str:
    if isinstance(value, int | float):
        stamp = datetime.datetime.fromtimestamp(float(value), tz=datetime.timezone.utc)
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
        stderr = _number(values.get(f"{name}_stderr,{filter_name}"))
        by_filter.setdefault(filter_name, {})[name] = Metric(_number(value), stderr)
    for preferred in ("judged", "none"):
        if preferred in by_filter:
            return by_filter[preferred]
    return next(iter(by_filter.values()), {})


def read_lm_eval(path: Path) -> Run:
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
        benchmark = known_tasks().get(task)
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
            version=_version((data.get("versions") or {}).get(task, metadata.get("version"))),
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
    """Per-key scores carry mean/stderr (or our total); corpus metrics are named themselves."""
    values: dict[str, float | None] = {}
    errors: dict[str, float | None] = {}
    for score in scores:
        for key, metric in score.metrics.items():
            base = key.split("/")[-1]
            if base in ("mean", "total"):
                values[score.name] = _number(metric.value)
            elif base == "stderr":
                errors[score.name] = _number(metric.value)
            else:
                values[base] = _number(metric.value)
    return {name: Metric(value, errors.get(name)) for name, value in values.items()}


def _inspect_judge(log: Any) -> dict[str, Any] | None:
    roles = getattr(log.eval, "model_roles", None) or {}
    grader = roles.get("grader")
    if grader is None:
        return None
    return {"kind": "inspect-grader", "model": grader.model, "base_url": grader.base_url}


def read_inspect(path: Path) -> Run:
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
    benchmark = known_tasks().get(task)
    if benchmark is None:
        return run
    if log.status != "success" or log.results is None:
        run.notes.append(f"{path.name}: the log's status is {log.status!r}; its results skipped")
        return run
    run.tasks[task] = TaskRun(
        task=task,
        benchmark=benchmark,
        version=_version(spec.task_version),
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


def read_score_json(path: Path, data: dict[str, Any]) -> Run:
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
    benchmark = known_tasks().get(task)
    if benchmark is None:
        return run
    usage = data.get("judge_usage") or {}
    run.tasks[task] = TaskRun(
        task=task,
        benchmark=benchmark,
        version=_version(data.get("task_version")),
        metrics={
            name: Metric(_number(m.get("value")), _number(m.get("stderr")))
            for name, m in results.items()
        },
        n_items=data.get("n_items"),
        n_total=None,
        options={},
        created=str(data.get("created", "")),
        source=path,
        judge={"kind": "rescored", "identity": usage["judge"]} if usage.get("judge") else None,
        samples=_samples_output(path, data),
    )
    return run


# --- bundles -----------------------------------------------------------------------------------
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
            version=_version(record.get("version")),
            metrics={
                name: Metric(_number(m.get("value")), _number(m.get("stderr")))
                for name, m in record["metrics"].items()
            },
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


# --- finding and merging -----------------------------------------------------------------------
def _read_json(path: Path) -> Run | None:
    """A JSON file of any of the three kinds, or None if it is none of them."""
    if path.name.startswith("results_"):
        return read_lm_eval(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        return None
    if not isinstance(data, dict):
        return None
    if str(data.get("schema", "")).startswith("conceptcomb-bundle/"):
        return read_bundle(path, data)
    if "predictions_format" in data and "results" in data:
        return read_score_json(path, data)
    if "eval" in data and "version" in data:
        return read_inspect(path)
    if "results" in data and "configs" in data:
        return read_lm_eval(path)
    return None


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted([*path.rglob("*.json"), *path.rglob("*.eval")])
    if path.is_file():
        return [path]
    raise DataFormatError(f"{path}: no such file or folder.")


def read_runs(paths: Iterable[Path]) -> list[Run]:
    """Every run found in the files and folders, merged by (framework, model)."""
    runs: list[Run] = []
    for path in paths:
        for file in _files(Path(path)):
            run = read_inspect(file) if file.suffix == ".eval" else _read_json(file)
            if run is None:
                if file == path:
                    raise DataFormatError(
                        f"{file}: neither lm-eval results, an Inspect log, nor a "
                        "`conceptcomb score` output."
                    )
                continue
            runs.append(run)
    return merge_runs(runs)


def merge_runs(runs: Iterable[Run]) -> list[Run]:
    merged: dict[tuple[str, str, str], Run] = {}
    for run in runs:
        into = merged.get(run.key)
        if into is None:
            merged[run.key] = run
            continue
        into.sources += run.sources
        into.notes += run.notes
        for name, task in run.tasks.items():
            old = into.tasks.get(name)
            if old is not None:
                newer, older = (task, old) if task.created >= old.created else (old, task)
                into.notes.append(
                    f"{name}: results in {older.source} and {newer.source}; the newer is used"
                )
                task = newer
            into.tasks[name] = task
    return [run for run in merged.values() if run.tasks or run.notes]
