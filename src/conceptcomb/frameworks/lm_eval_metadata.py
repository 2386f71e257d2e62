"""lm-eval's ``--metadata`` keys of our tasks, checked when a task builds its docs
(`start_task`, the first call of every ``custom_dataset`` of ours).

lm-eval hands a task's ``custom_dataset`` one dict: the task YAML's ``metadata``, every
``--model_args`` key and every ``--metadata`` key, so a key we do not know may well be the
model's (``pretrained``, ``max_retries``...) and cannot be refused as such. A key close to
one of ours (``judge_url``, ``judgemodel``, ``npc_modifer``) is a misspelling, though: it
would be dropped without a word and the run go on with the default (OpenAI's gpt-4o as the
judge, asking for $OPENAI_API_KEY). `check_metadata` refuses it with "did you mean".
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.judge_settings import JudgeSettings

# Every option an lm-eval task of this package reads from --metadata (tests/frameworks/
# test_lm_eval_metadata.py checks it against the options of the Inspect tasks).
TASK_OPTIONS = frozenset(
    {
        "data_dir",
        # CCPT
        "npc_modifier",
        "sa_iterations",
        "sa_epsilon",
        "sa_seed",
        "sa_graph",
        "oracle_n",
        # CGGC
        "k",
        "seed",
        "packaging",
        "test_type",
        "spice_jars",
        # AbsPyramid
        "split",
        # McRae
        "tie_rule",
        "senses",
    }
)
# No model argument of lm-eval's runners starts with it: any such key is meant for us.
JUDGE_PREFIX = "judge"
CUTOFF = 0.8  # difflib's similarity above which a key is taken for a misspelling of ours


def our_options() -> frozenset[str]:
    return TASK_OPTIONS | frozenset(JudgeSettings.option_names())


def near_miss(key: str, known: Iterable[str] | None = None) -> str | None:
    """The option of ours ``key`` misspells, or None when it is ours or far from all."""
    names = sorted(our_options() if known is None else known)
    if key in names:
        return None
    folded = key.lower().replace("-", "_")
    if folded in names:
        return folded
    if folded.startswith(JUDGE_PREFIX):
        judge = [name for name in names if name.startswith(JUDGE_PREFIX)]
        if "key" in folded and "judge_api_key_env" in judge:  # the key's variable
            return "judge_api_key_env"
        return difflib.get_close_matches(folded, judge, n=1, cutoff=0.0)[0]
    close = difflib.get_close_matches(folded, names, n=1, cutoff=CUTOFF)
    return close[0] if close else None


def check_metadata(task: str, metadata: Mapping[str, Any]) -> None:
    """ConfigError (one line) for a ``--metadata`` key that misspells one of our options."""
    for key in metadata:
        meant = near_miss(str(key))
        if meant is not None:
            raise ConfigError(
                f"{task}: --metadata has {key!r}, which is not an option of ours: did you mean "
                f"{meant!r}? (lm-eval passes unknown keys on without a word, so the run would "
                "go on without it.)"
            )


def start_task(task: str, metadata: Mapping[str, Any]) -> None:
    """What every lm-eval task of ours does first when lm-eval builds it: refuse a
    misspelt ``--metadata`` key, and have lm-eval's warning about unequal metric counts
    explained in our words (`UnequalCounts`)."""
    check_metadata(task, metadata)
    _STARTED.add(task)
    logger = logging.getLogger(LM_EVAL_AGGREGATION_LOGGER)
    if not any(isinstance(known, UnequalCounts) for known in logger.filters):
        logger.addFilter(UnequalCounts())


# The tasks of ours this process built (`start_task`).
_STARTED: set[str] = set()
# lm-eval 0.4.13 (evaluator_utils.consolidate_results) warns when a task's metrics were
# aggregated over different numbers of documents: ours are, by design.
LM_EVAL_AGGREGATION_LOGGER = "lm_eval.evaluator_utils"
_UNEQUAL = re.compile(
    r"^\[(?P<task>[^\]]+)\] Metrics were not scored on the same number of documents "
    r"\((?P<counts>[^)]*)\)"
)


class UnequalCounts(logging.Filter):
    """lm-eval's "Metrics were not scored on the same number of documents" about a task of
    ours becomes one line of ours saying why: an item whose reply gave no usable answer (or
    whose judge question failed) is left out of the means it has no value for and counted
    in the failure counts, as the papers do. Other tasks' warnings pass unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        found = _UNEQUAL.match(record.getMessage())
        if found is None or found["task"] not in _STARTED:
            return True
        counts = ", ".join(
            f"{key.split(',')[0]} {n}"
            for key, n in (part.strip().split("=", 1) for part in found["counts"].split(", "))
        )
        print(
            f"[conceptcomb] {found['task']}: each metric is over the items it is defined for "
            f"({counts}): an item whose reply gave no usable answer, or whose judge question "
            "failed, is left out of those means and counted in the failure counts.",
            flush=True,
        )
        return False
