"""Per-item CGGC scores of a run, and Table 6's pairwise t-tests on the per-item gaps.

lm-eval writes them with ``--log_samples`` (``samples_<task>_<date>.jsonl`` beside the
``results_<date>.json`` file); an Inspect log holds them itself. Only the metrics scored
per item (ROUGE-2, ROUGE-L, Coverage) have them: BLEU, METEOR, CIDEr and SPICE are corpus
metrics.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from pathlib import Path

from conceptcomb.common.evidence import full_inspect_log, lm_eval_samples_path
from conceptcomb.common.runs import TaskRun

PER_ITEM = ("rouge2", "rougeL", "coverage")
# A gap difference is marked (*) below this p-value: the conventional 5% level.
ALPHA = 0.05
ItemScores = dict[str, dict[str, float]]  # item id -> metric -> value


def _from_lm_eval(path: Path) -> ItemScores:
    scores: ItemScores = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line) if line.strip() else None
        if sample is None:
            continue
        item = str(sample["doc"]["item_id"])
        scores[item] = {
            m: float(sample[m]) for m in PER_ITEM if isinstance(sample.get(m), int | float)
        }
    return scores


def _from_inspect(path: Path) -> ItemScores:
    scores: ItemScores = {}
    for sample in full_inspect_log(str(path)).samples or []:
        for score in (sample.scores or {}).values():
            if isinstance(score.value, dict):
                values = {m: float(score.value[m]) for m in PER_ITEM if m in score.value}
                scores[str(sample.id)] = values
                break
    return scores


def item_scores(task: TaskRun) -> ItemScores | None:
    """The task run's per-item scores, or None where they were not kept."""
    if task.source.name.startswith("results_"):
        samples = lm_eval_samples_path(task.source, task.task)
        return _from_lm_eval(samples) if samples else None
    if task.source.suffix in (".eval", ".json"):
        try:
            return _from_inspect(task.source) or None
        except Exception:  # not an Inspect log after all: no per-item scores
            return None
    return None


def dataset_sha256(task: TaskRun) -> str | None:
    """The sha256 of the CGGC dataset the run read, as its bundle, its docs (lm-eval
    samples) or its task metadata (Inspect) record it; None where the run kept none."""
    for record in task.datasets:  # a bundle's records (`conceptcomb.cggc.benchmark`)
        if record.get("key") == "cggc" and isinstance(record.get("dataset_sha256"), str):
            return str(record["dataset_sha256"])
    if task.source.name.startswith("results_"):
        samples = lm_eval_samples_path(task.source, task.task)
        if samples is None:
            return None
        with samples.open(encoding="utf-8") as handle:
            first = handle.readline()
        return json.loads(first)["doc"].get("dataset_sha256") if first.strip() else None
    try:
        metadata = full_inspect_log(str(task.source)).eval.metadata or {}
    except Exception:  # not an Inspect log after all
        return None
    return metadata.get("dataset_sha256")


def item_gaps(id_scores: ItemScores, ood_scores: ItemScores, metric: str) -> list[float]:
    """id - ood per item both settings scored."""
    common = sorted(id_scores.keys() & ood_scores.keys())
    return [
        id_scores[i][metric] - ood_scores[i][metric]
        for i in common
        if metric in id_scores[i] and metric in ood_scores[i]
    ]


def welch_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of Welch's t-test (NaN with fewer than 2 values on a side)."""
    from scipy.stats import ttest_ind

    if len(a) < 2 or len(b) < 2:
        return math.nan
    return float(ttest_ind(a, b, equal_var=False).pvalue)


def gap_ttests(per_type: Mapping[str, tuple[TaskRun, TaskRun]], alpha: float = ALPHA) -> str:
    """One line: per per-item metric, the p-value of each pair of types' per-item gaps."""
    gaps: dict[str, dict[str, list[float]]] = {}
    for kind, (id_task, ood_task) in per_type.items():
        id_scores, ood_scores = item_scores(id_task), item_scores(ood_task)
        if id_scores is None or ood_scores is None:
            return "t-tests: no per-item scores (run lm-eval with --log_samples)"
        gaps[kind] = {m: item_gaps(id_scores, ood_scores, m) for m in PER_ITEM}
    parts = []
    for metric in PER_ITEM:
        tests = []
        for x, y in itertools.combinations(sorted(gaps), 2):
            p = welch_p(gaps[x][metric], gaps[y][metric])
            mark = "*" if p < alpha else ""
            tests.append(f"{x}-{y} p={p:.3g}{mark}")
        parts.append(f"{metric}: " + ", ".join(tests))
    counts = ", ".join(f"{k} n={len(g[PER_ITEM[0]])}" for k, g in sorted(gaps.items()))
    return f"t-tests of the per-item gaps ({counts}): " + "; ".join(parts)
