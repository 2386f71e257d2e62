"""The judge glue every lm-eval adapter of this package shares.

lm-eval gives a task's filters only their YAML arguments and the docs, while ``--metadata``
reaches the dataset builder: the builder resolves and checks the judge options
(`resolve_judge_settings`) and writes them into every doc (`JUDGE_FIELD`), where the judge
filter reads them (`doc_judge_settings`). No state is kept between the two.
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
from collections.abc import Iterator, Mapping
from types import CodeType, FrameType
from typing import Any

from conceptcomb.scorers.judge_checks import load_local_judge
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.ranks import reporting_process
from conceptcomb.scorers.rating import JudgeUsage, preflight_judge

log = logging.getLogger("conceptcomb")

# The doc field carrying the judge options of --metadata to the judge filter (JSON text:
# names and values the user chose; a key is read from its variable, never written here).
JUDGE_FIELD = "judge_options"


def predict_only_requested() -> bool:
    """Whether the lm-eval run this code is called from only saves predictions
    (``--predict_only``, ``-x``, ``predict_only: true`` in a ``--config`` file, or
    ``simple_evaluate(predict_only=True)``), read from lm-eval's own state on each call (no
    state kept).

    lm-eval 0.4.13 still runs filters under predict-only, so the judge filter would pay for
    ratings nobody reads. Whatever form the user chose, lm-eval's parser and config loader
    end in one value, ``simple_evaluate``'s ``predict_only`` argument: the dataset builder
    runs inside that call (``TaskManager.load``), before lm-eval swaps each task's metrics
    for ``bypass``, so that argument is the one place to learn it there. A filter runs
    inside ``Task.apply_filters`` after the swap: a task whose metrics are ``bypass`` also
    counts (a caller of ``evaluate`` that replaced the metrics itself).
    """
    simple_evaluate = _simple_evaluate_code()
    for frame in _calling_frames():
        if frame.f_code is simple_evaluate:
            return bool(frame.f_locals.get("predict_only"))
        if _metrics_bypassed(frame.f_locals.get("self")):
            return True
    return False


def _calling_frames() -> Iterator[FrameType]:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        yield frame
        frame = frame.f_back


def _simple_evaluate_code() -> CodeType | None:
    """The code of ``lm_eval.evaluator.simple_evaluate`` (under its decorator); None when
    lm-eval's evaluator was never imported (then no run is under way)."""
    evaluator = sys.modules.get("lm_eval.evaluator")
    function = getattr(evaluator, "simple_evaluate", None)
    return getattr(inspect.unwrap(function), "__code__", None) if function else None


def _metrics_bypassed(task: Any) -> bool:
    """An lm-eval task whose metrics were swapped for ``bypass`` (``Task.override_metric``,
    what ``simple_evaluate(predict_only=True)`` does to every task)."""
    api_task = sys.modules.get("lm_eval.api.task")
    if api_task is None or not isinstance(task, api_task.Task):
        return False
    try:
        metrics = task.get_config("metric_list") or []
    except AttributeError:  # a task still being built (its dataset first) has no config yet
        return False
    return any(isinstance(m, Mapping) and m.get("metric") == "bypass" for m in metrics)


def resolve_judge_settings(metadata: Mapping[str, Any]) -> dict[str, str]:
    """Judge settings from --metadata / environment, checked before any generation: the
    key; for ``judge=local`` its model found and loaded; else one small request to the
    judge (`preflight_judge`; once per process). Returns the doc field that carries the
    options to the judge filter."""
    options = _judge_off_if_predict_only(
        {k: v for k, v in metadata.items() if k in JudgeSettings.option_names()}
    )
    settings = JudgeSettings.resolve(options)
    settings.check_credentials()
    load_local_judge(settings)  # judge=local: found, then loaded now (Ctrl-C: one line)
    preflight_judge(settings)
    return {JUDGE_FIELD: json.dumps(options, sort_keys=True)}


def report_judge_usage(task: str, usage: JudgeUsage | None) -> None:
    """After a task's judging: the usage line and, when questions failed, a loud warning
    with their share and the last error. Printed, not only logged: lm-eval prints its
    table after every filter has run, so both lines sit above it. In a data-parallel run
    the usage is the run's total (`conceptcomb.scorers.ranks`), printed by rank 0 alone."""
    if usage is None or not reporting_process():  # a data-parallel run's total, once
        return
    print(f"[conceptcomb] {task}: {usage.summary()}", flush=True)
    warning = usage.failure_warning()
    if warning:
        print(f"[conceptcomb] {task}: {warning}", flush=True)


def doc_judge_settings(doc: Mapping[str, Any]) -> JudgeSettings:
    """The judge settings a doc was built with (docs of older runs carry none: the
    environment's and the defaults); off when the task runs predict-only and the doc names
    no judge."""
    raw = doc.get(JUDGE_FIELD)
    return JudgeSettings.resolve(_judge_off_if_predict_only(json.loads(raw) if raw else {}))


def _judge_off_if_predict_only(options: dict[str, Any]) -> dict[str, Any]:
    """The options with ``judge=off`` under predict-only, unless they name a judge."""
    if "judge" not in options and predict_only_requested():
        log.info("predict-only run: the judge is off (pass judge in --metadata to force it).")
        return {**options, "judge": "off"}
    return options
