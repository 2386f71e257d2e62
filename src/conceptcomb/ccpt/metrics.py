"""CCPT metrics (paper section 4.3 and Table 5), per item and aggregated.

Per item, from the judge's 0-1 relevances R (R = (rating - 1) / 9):

* ``R_HMP = max(R(head, P), R(modifier, P))``, ``R_NP = R(noun phrase, P)``
* emergence ``E = max(R_NP - R_HMP, 0)``, cancellation ``C = max(R_HMP - R_NP, 0)``

all reported x 100 like Table 3. Undefined values are NaN and left out of means:

* a reply we cannot parse is a *format failure*: counted, E/C = 0 (no emergent or canceled
  property was produced), R_HMP and R_NP undefined; an answer recovered from outside the
  requested dictionary is scored normally and counted as a *non-dict answer*;
* an item whose judge calls failed after retries is a *judge failure*: counted and left
  out of every mean (the paper's script would score it as relevance 1 instead).

Property-type prediction reports accuracy and the row-normalised confusion matrix of
Table 5, both in percent: metric ``cm_<gold>_as_<predicted>`` is defined only on items of
gold type ``<gold>``, so its mean is the Table 5 cell.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from conceptcomb.ccpt.data import PROPERTY_TYPES
from conceptcomb.ccpt.tasks import PI_CANCELED, TYPE_PREDICTION, CcptTaskSpec
from conceptcomb.common.contract import PERCENT, MetricInfo
from conceptcomb.common.results import sem

NAN = float("nan")
SCALE = 100.0
FORMAT_FAILURES = "format_failures"
NON_DICT_ANSWERS = "non_dict_answers"
JUDGE_FAILURES = "judge_failures"


def confusion_key(gold: str, predicted: str) -> str:
    return f"cm_{gold}_as_{predicted}"


CONFUSION_KEYS = tuple(
    confusion_key(gold, predicted) for gold in PROPERTY_TYPES for predicted in PROPERTY_TYPES
)


def metric_infos(spec: CcptTaskSpec) -> list[MetricInfo]:
    """Every metric a task reports, in display order."""
    counts = [MetricInfo(FORMAT_FAILURES, False, "sum"), MetricInfo(NON_DICT_ANSWERS, False, "sum")]
    if spec.kind == TYPE_PREDICTION:
        cells = [
            MetricInfo(confusion_key(gold, predicted), gold == predicted, "mean", scale=PERCENT)
            for gold in PROPERTY_TYPES
            for predicted in PROPERTY_TYPES
        ]
        return [MetricInfo("accuracy", True, "mean", scale=PERCENT), *cells, *counts]
    canceled = spec.kind == PI_CANCELED
    # R (x100) and E / C = max(R_NP - R_HMP, 0) or max(R_HMP - R_NP, 0): 0 to 100.
    return [
        MetricInfo("R_HMP", canceled, "mean", scale=PERCENT, judged=True),
        MetricInfo("R_NP", not canceled, "mean", scale=PERCENT, judged=True),
        MetricInfo(spec.score_name, True, "mean", scale=PERCENT, judged=True),
        *counts,
        MetricInfo(JUDGE_FAILURES, False, "sum", judged=True),
    ]


def relevance_metrics(spec: CcptTaskSpec, r_np: float, r_head: float, r_mod: float) -> dict:
    """E or C with R_HMP and R_NP for one judged item, x 100."""
    r_hmp = max(r_head, r_mod)
    metrics = {"R_HMP": SCALE * r_hmp, "R_NP": SCALE * r_np}
    if spec.kind == PI_CANCELED:
        metrics["C"] = SCALE * max(r_hmp - r_np, 0.0)
    else:
        metrics["E"] = SCALE * max(r_np - r_hmp, 0.0)
    return {**metrics, FORMAT_FAILURES: 0.0, JUDGE_FAILURES: 0.0}


def _unscored(
    spec: CcptTaskSpec, score: float, format_failure: float, judge_failure: float
) -> dict[str, float]:
    """An item without ratings: R_HMP and R_NP undefined, the counts as given."""
    return {
        "R_HMP": NAN,
        "R_NP": NAN,
        spec.score_name: score,
        FORMAT_FAILURES: format_failure,
        JUDGE_FAILURES: judge_failure,
    }


def format_failure_metrics(spec: CcptTaskSpec) -> dict[str, float]:
    """A generative reply we could not parse (type prediction: `type_prediction_metrics`)."""
    return _unscored(spec, 0.0, 1.0, 0.0)


def judge_failure_metrics(spec: CcptTaskSpec) -> dict[str, float]:
    return _unscored(spec, NAN, 0.0, 1.0)


def unjudged_metrics(spec: CcptTaskSpec) -> dict[str, float]:
    """With the judge off (prediction only) just the format count is known."""
    return _unscored(spec, NAN, 0.0, 0.0)


def type_prediction_metrics(gold: str, predicted: str | None) -> dict[str, float]:
    """Accuracy and this item's row of the confusion matrix, in percent."""
    metrics = {"accuracy": SCALE * float(predicted is not None and predicted == gold)}
    for row in PROPERTY_TYPES:
        for column in PROPERTY_TYPES:
            cell = SCALE * float(predicted == column) if row == gold else NAN
            metrics[confusion_key(row, column)] = cell
    metrics[FORMAT_FAILURES] = float(predicted is None)
    return metrics


def is_defined(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class Aggregate:
    value: float
    stderr: float | None
    n: int


def aggregate(
    spec: CcptTaskSpec,
    per_item: Iterable[Mapping[str, float]],
    infos: Iterable[MetricInfo] | None = None,
) -> dict[str, Aggregate]:
    """Means over defined values (sample standard error, as lm-eval) and sums of counts,
    of the task's metrics (or of ``infos``: the multi-oracle's)."""
    rows = list(per_item)
    results: dict[str, Aggregate] = {}
    for info in metric_infos(spec) if infos is None else infos:
        values = [float(row[info.name]) for row in rows if is_defined(row.get(info.name))]
        if info.aggregation == "sum":
            results[info.name] = Aggregate(float(sum(values)), None, len(values))
        elif values:
            results[info.name] = Aggregate(sum(values) / len(values), sem(values), len(values))
    return results
