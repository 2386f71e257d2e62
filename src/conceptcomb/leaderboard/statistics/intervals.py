"""Each run's own 95% interval per metric, from its per-item evidence: what a bundle records
(``tasks[].metrics[m].interval``), ``validate-bundle`` recomputes and the Every Eval Ever
export writes as ``score_details.uncertainty``.

A metric that is a mean over items gets `stats.mean_interval` (t, clustered by the items'
unit where they share one); a corpus metric `stats.bootstrap_interval` over
`stats.N_RESAMPLES` resamples with the fixed seed `stats.SEED`, so that anyone recomputes
the same bounds; a count ("sum": failures) gets none.
"""

from __future__ import annotations

import math
from typing import Any

from conceptcomb.benchmarks import evidence_adapter, get
from conceptcomb.leaderboard.statistics import stats
from conceptcomb.leaderboard.statistics.corpus import corpus_metrics

# Intervals recomputed by validate-bundle agree with the recorded ones up to this (the
# bootstrap sums in numpy's order, which may round differently on another machine).
TOLERANCE = 1e-6


def _claimed(record: dict[str, Any], metric: str) -> bool:
    entry = (record.get("metrics") or {}).get(metric)
    value = entry.get("value") if isinstance(entry, dict) else None
    return isinstance(value, int | float) and not isinstance(value, bool)


def _score(item: dict[str, Any], metric: str) -> float:
    scores = item.get("scores") if isinstance(item.get("scores"), dict) else {}
    value = scores.get(metric)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def task_intervals(
    record: dict[str, Any],
    items: list[dict[str, Any]],
    data_dir: str | None = None,
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
) -> tuple[dict[str, stats.Interval], dict[str, str]]:
    """A bundle task's intervals from its evidence items, and why a metric has none."""
    task, benchmark = str(record["task"]), str(record["benchmark"])
    infos = get(benchmark).tasks().get(task, [])
    units = [item.get("unit") for item in items]
    shared = units if units and all(isinstance(u, str) for u in units) else None
    unit = getattr(evidence_adapter(benchmark), "UNIT", None) if shared else None
    found: dict[str, stats.Interval] = {}
    missing: dict[str, str] = {}
    corpus_wanted = []
    for info in infos:
        if not _claimed(record, info.name):
            continue
        if info.aggregation == "mean":
            interval = stats.mean_interval([_score(i, info.name) for i in items], shared, unit)
            if interval is None:
                missing[info.name] = "fewer than two items with a value"
            else:
                found[info.name] = interval
        elif info.aggregation == "corpus":
            corpus_wanted.append(info.name)
    metrics, skipped = corpus_metrics(benchmark, record, items, corpus_wanted, data_dir)
    missing.update(skipped)
    for name, metric in metrics.items():
        try:
            values = stats.bootstrap_distribution(metric, metric.n, n_resamples, seed)
            found[name] = stats.bootstrap_interval(metric.value(), values, metric.n)
        except Exception as err:  # an item the computation does not take: named, not raised
            missing[name] = f"cannot be resampled ({type(err).__name__}: {err})"
    return found, missing


def record_intervals(
    record: dict[str, Any], items: list[dict[str, Any]], data_dir: str | None = None
) -> None:
    """Each metric of a bundle's task record gets its ``interval`` (where it has one)."""
    found, _ = task_intervals(record, items, data_dir)
    for name, interval in found.items():
        numbers = (interval.value, interval.lower, interval.upper, interval.stderr)
        if all(v is not None and math.isfinite(v) for v in numbers):
            record["metrics"][name]["interval"] = interval.to_json()


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def interval_problems(
    name: str, record: dict[str, Any], items: list[dict[str, Any]], data_dir: str | None
) -> tuple[list[str], dict[str, str]]:
    """Each recorded interval against the one its items give (``validate-bundle``); and the
    metrics whose interval cannot be recomputed here (their tool missing), with why."""
    recorded = {
        metric: entry["interval"]
        for metric, entry in (record.get("metrics") or {}).items()
        if isinstance(entry, dict) and isinstance(entry.get("interval"), dict)
    }
    if not recorded:
        return [], {}
    found, missing = task_intervals(record, items, data_dir)
    problems, not_rechecked = [], {}
    for metric, claimed in sorted(recorded.items()):
        ours = found.get(metric)
        if ours is None:
            not_rechecked[f"{metric} interval"] = missing.get(metric, "no interval here")
            continue
        for key in ("lower", "upper", "stderr", "value"):
            if not _close(claimed.get(key), getattr(ours, key)):
                problems.append(
                    f"evidence: {name} metric {metric}: the bundle claims the interval's {key} "
                    f"{claimed.get(key)}, its per-item scores give {getattr(ours, key)}"
                )
                break
        else:
            for key in ("method", "n", "clusters", "resamples"):
                if claimed.get(key) != getattr(ours, key):
                    problems.append(
                        f"evidence: {name} metric {metric}: the bundle claims the interval's "
                        f"{key} {claimed.get(key)!r}, its per-item scores give "
                        f"{getattr(ours, key)!r}"
                    )
                    break
    return problems, not_rechecked


def method_text(interval: dict[str, Any]) -> str:
    """How an interval was made, in words (``t, clustered by noun phrase (166 clusters)``)."""
    method = str(interval.get("method") or "")
    if interval.get("clusters"):
        method += f" by {interval.get('unit') or 'unit'} ({interval['clusters']} clusters)"
    if interval.get("resamples"):
        method += f" ({interval['resamples']} resamples, seed {stats.SEED})"
    return method


def eee_uncertainty(entry: dict[str, Any], items: Any) -> dict[str, Any]:
    """Every Eval Ever's ``score_details.uncertainty`` of a bundle's metric: its interval
    in full where it has one, else the framework's standard error."""
    interval = entry.get("interval") if isinstance(entry.get("interval"), dict) else None
    stderr = entry.get("stderr")
    found: dict[str, Any] = {}
    if interval is not None and isinstance(interval.get("stderr"), int | float):
        kind = str(interval.get("stderr_method") or "analytic")
        if interval.get("clusters"):
            kind += f" (by {interval.get('unit') or 'unit'}, {interval['clusters']} clusters)"
        found["standard_error"] = {"value": float(interval["stderr"]), "method": kind}
    elif isinstance(stderr, int | float) and not isinstance(stderr, bool):
        found["standard_error"] = {"value": float(stderr), "method": "analytic"}
    if interval is not None and isinstance(interval.get("lower"), int | float):
        found["confidence_interval"] = {
            "lower": float(interval["lower"]),
            "upper": float(interval["upper"]),
            "confidence_level": float(interval.get("level") or stats.LEVEL),
            "method": method_text(interval),
        }
    count = interval.get("n") if interval is not None else items
    if isinstance(count, int) and not isinstance(count, bool):
        found["num_samples"] = count
    if interval is not None and interval.get("resamples"):
        found["num_bootstrap_samples"] = int(interval["resamples"])
    return found
