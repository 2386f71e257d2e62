"""Multi-oracle (paper section 4.1, Table 3's gray rows): the best of N sampled replies.

Each item gets N = 5 replies sampled with temperature 0.7 and top-p 0.95 (Appendix B.1)
from the base prompt. Every reply is judged as usual; per item the best value of each
metric is kept, each on its own, as the authors' ``eval_property.py`` does: the highest
E or C, the highest R_NP for emergence (lowest for cancellation) and the lowest R_HMP for
emergence (highest for cancellation). The means over items are an upper bound, reported
under their own names (``E_oracle`` ...), never as the task's E or C.

A reply we cannot read counts as E = C = 0 with undefined relevances, as in the main
tasks; an item with a reply the judge failed on is left out (``judge_failures``), so that
an outage cannot lower or raise the bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.metrics import (
    FORMAT_FAILURES,
    JUDGE_FAILURES,
    NAN,
    NON_DICT_ANSWERS,
)
from conceptcomb.ccpt.modifiers import LEMMA
from conceptcomb.ccpt.tasks import PI_CANCELED, CcptTaskSpec
from conceptcomb.common.contract import PERCENT, MetricInfo
from conceptcomb.scorers.judge_settings import JudgeSettings

if TYPE_CHECKING:  # scoring imports the judges' HTTP client: not to list the tasks' metrics
    from conceptcomb.ccpt.scoring import ItemScore
    from conceptcomb.scorers.rating import JudgeUsage

ORACLE_N = 5
ORACLE_TEMPERATURE = 0.7
ORACLE_TOP_P = 0.95
SUFFIX = "_oracle"


def base_spec(spec: CcptTaskSpec) -> CcptTaskSpec:
    """The task whose prompt and scoring the oracle samples (the base method)."""
    return replace(spec, method="base")


def _directions(spec: CcptTaskSpec) -> dict[str, bool]:
    """Metric -> True when the best value is the highest."""
    canceled = spec.kind == PI_CANCELED
    return {"R_HMP": canceled, "R_NP": not canceled, spec.score_name: True}


def oracle_metric_infos(spec: CcptTaskSpec) -> list[MetricInfo]:
    """The oracle task's metrics: best-of-N means, then counts (replies, items)."""
    best = [
        MetricInfo(name + SUFFIX, up, "mean", scale=PERCENT, judged=True)
        for name, up in _directions(spec).items()
    ]
    return [
        *best,
        MetricInfo(FORMAT_FAILURES, False, "sum"),  # replies, over all N per item
        MetricInfo(NON_DICT_ANSWERS, False, "sum"),  # replies
        MetricInfo(JUDGE_FAILURES, False, "sum", judged=True),  # items left out
    ]


def best_of(spec: CcptTaskSpec, samples: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """One item's oracle metrics from the metrics of its N scored replies."""
    counts = {
        FORMAT_FAILURES: float(sum(s.get(FORMAT_FAILURES, 0.0) for s in samples)),
        NON_DICT_ANSWERS: float(sum(s.get(NON_DICT_ANSWERS, 0.0) for s in samples)),
    }
    failed = any(s.get(JUDGE_FAILURES, 0.0) for s in samples)
    values: dict[str, float] = {}
    for name, up in _directions(spec).items():
        defined = [float(s[name]) for s in samples if not math.isnan(s.get(name, NAN))]
        pick = max if up else min
        values[name + SUFFIX] = NAN if failed or not defined else pick(defined)
    return {**values, **counts, JUDGE_FAILURES: float(failed)}


@dataclass
class OracleScore:
    """One item: its N scored replies and the best values."""

    item_id: str
    samples: list[ItemScore]
    metrics: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "metrics": {k: (None if math.isnan(v) else v) for k, v in self.metrics.items()},
            "samples": [score.to_json() for score in self.samples],
        }


def oracle_scores(
    spec: CcptTaskSpec, items: Sequence[CcptItem], samples: Sequence[Sequence[ItemScore]]
) -> list[OracleScore]:
    return [
        OracleScore(item.item_id, list(scored), best_of(spec, [s.metrics for s in scored]))
        for item, scored in zip(items, samples, strict=True)
    ]


def score_oracle_replies(
    spec: CcptTaskSpec,
    items: Sequence[CcptItem],
    replies: Sequence[Sequence[str]],
    settings: JudgeSettings,
    npc_modifier: str = LEMMA,
) -> tuple[list[OracleScore], JudgeUsage | None]:
    """Judge all N replies of every item in one batch, then keep the best per item."""
    from conceptcomb.ccpt.scoring import score_replies

    flat_items = [item for item, group in zip(items, replies, strict=True) for _ in group]
    flat_replies = [reply for group in replies for reply in group]
    scored, usage = score_replies(base_spec(spec), flat_items, flat_replies, settings, npc_modifier)
    grouped, start = [], 0
    for group in replies:
        grouped.append(scored[start : start + len(group)])
        start += len(group)
    return oracle_scores(spec, items, grouped), usage
