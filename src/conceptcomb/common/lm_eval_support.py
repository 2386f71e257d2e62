"""Small pieces every lm-eval adapter of this package shares."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import JudgeUsage, preflight_judge

log = logging.getLogger("conceptcomb")

# Judge settings resolved when a task's dataset was built (from --metadata), for the
# judge filter that runs later in the same process: lm-eval gives filters only their YAML
# arguments, while --metadata reaches the dataset builder.
_judge_settings: JudgeSettings | None = None


def total(values: Sequence[float]) -> float:
    """Aggregation for counts (format and judge failures): their sum."""
    return float(sum(values))


def predict_only_requested() -> bool:
    """lm-eval's --predict_only still runs filters: do not pay a judge for nothing."""
    return any(arg.startswith("--predict_only") for arg in sys.argv)


def resolve_judge_settings(metadata: Mapping[str, Any]) -> JudgeSettings:
    """Judge settings from --metadata / environment, checked before any generation: the
    key, then one small request to the judge (`preflight_judge`; once per process)."""
    global _judge_settings
    options = {k: v for k, v in metadata.items() if k in JudgeSettings.option_names()}
    if predict_only_requested() and "judge" not in options:
        log.info("--predict_only: the judge is off (pass judge in --metadata to force it).")
        options["judge"] = "off"
    settings = JudgeSettings.resolve(options)
    settings.check_credentials()
    preflight_judge(settings)
    _judge_settings = settings
    return settings


def report_judge_usage(task: str, usage: JudgeUsage | None) -> None:
    """After a task's judging: the usage line and, when questions failed, a loud warning
    with their share and the last error. Printed, not only logged: lm-eval prints its
    table after every filter has run, so both lines sit above it."""
    if usage is None:
        return
    print(f"[conceptcomb] {task}: {usage.summary()}", flush=True)
    warning = usage.failure_warning()
    if warning:
        print(f"[conceptcomb] {task}: {warning}", flush=True)


def current_judge_settings() -> JudgeSettings:
    return _judge_settings if _judge_settings is not None else JudgeSettings.resolve()
