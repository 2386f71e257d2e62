"""The judge glue every lm-eval adapter of this package shares.

lm-eval gives a task's filters only their YAML arguments and the docs, while ``--metadata``
reaches the dataset builder: the builder resolves and checks the judge options
(`resolve_judge_settings`) and writes them into every doc (`JUDGE_FIELD`), where the judge
filter reads them (`doc_judge_settings`). No state is kept between the two.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from typing import Any

from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import JudgeUsage, preflight_judge

log = logging.getLogger("conceptcomb")

# The doc field carrying the judge options of --metadata to the judge filter (JSON text:
# names and values the user chose; a key is read from its variable, never written here).
JUDGE_FIELD = "judge_options"


def predict_only_requested() -> bool:
    """Whether this process runs ``lm_eval --predict_only``, read from the command line on
    each call (no state kept).

    lm-eval 0.4.13 still runs filters under --predict_only, so the judge filter would pay
    for ratings nobody reads. The flag reaches neither the task config nor the filters:
    ``simple_evaluate`` only swaps each task's metrics for ``bypass`` after the dataset is
    built, and a filter sees only its YAML arguments, the replies and the docs. The command
    line is therefore the one place to learn it (a Python caller of ``simple_evaluate``
    passes ``judge=off`` in the metadata instead).
    """
    return any(arg.startswith("--predict_only") for arg in sys.argv)


def resolve_judge_settings(metadata: Mapping[str, Any]) -> dict[str, str]:
    """Judge settings from --metadata / environment, checked before any generation: the
    key, then one small request to the judge (`preflight_judge`; once per process). Returns
    the doc field that carries the options to the judge filter."""
    options = {k: v for k, v in metadata.items() if k in JudgeSettings.option_names()}
    if predict_only_requested() and "judge" not in options:
        log.info("--predict_only: the judge is off (pass judge in --metadata to force it).")
        options["judge"] = "off"
    settings = JudgeSettings.resolve(options)
    settings.check_credentials()
    preflight_judge(settings)
    return {JUDGE_FIELD: json.dumps(options, sort_keys=True)}


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


def doc_judge_settings(doc: Mapping[str, Any]) -> JudgeSettings:
    """The judge settings a doc was built with (docs of older runs carry none: the
    environment's and the defaults)."""
    raw = doc.get(JUDGE_FIELD)
    return JudgeSettings.resolve(json.loads(raw) if raw else {})
