"""Scoring CGGC replies made elsewhere (``conceptcomb score cggc_... --predictions``).

The replies come from lm-eval samples, an Inspect log or a JSONL of ``{"doc": ...,
"response": ...}`` lines whose docs are the task's (`docs.item_doc`: the item's fields,
its ``setting``, ``seed``, ``prompt_style`` and ``demonstration_ids``). Each reply is scored
by the tasks' core (`scoring.score_doc`), the corpus metrics over all of them
(`metrics.all_metrics`); ``_verified`` tasks ask the judge about every edge
(`verification.verify_predictions`) and report the metrics again on the verified items.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from conceptcomb.cggc import metrics
from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.docs import chat_messages
from conceptcomb.cggc.scoring import ScoredReply, score_doc
from conceptcomb.cggc.tasks import DEFAULT_K, CggcTaskSpec, spec_by_name, task_version
from conceptcomb.cggc.verification import (
    SUFFIX,
    VERIFIED_SHARE,
    VERIFIER_FAILURES,
    Verification,
    verify_predictions,
    with_verified,
)
from conceptcomb.common.errors import ConfigError, DataFormatError
from conceptcomb.common.evalcard import load_card
from conceptcomb.common.predictions import Prediction, read_predictions
from conceptcomb.common.results import MetricValue, ScoreReport, sem
from conceptcomb.scorers.judge_settings import JudgeSettings


def rescore(
    task: str, predictions_path: Path, settings: JudgeSettings, samples_output: Path | None
) -> ScoreReport:
    spec = spec_by_name(task)
    predictions = read_predictions(predictions_path)
    if predictions.task and predictions.task != task:
        raise ConfigError(
            f"{predictions_path} holds replies of {predictions.task}, not {task}: "
            f"run `conceptcomb score {predictions.task} --predictions {predictions_path}`."
        )
    items = [_item(p) for p in predictions.items]
    scored = [score_doc(p.doc, p.response) for p in predictions.items]
    verifications: list[Verification | None] = [None] * len(items)
    usage = None
    if spec.verify:
        if not settings.enabled:
            raise ConfigError(f"{task} verifies relations with a judge: name one (--judge ...).")
        found, usage = verify_predictions(settings, items, [s.prediction for s in scored])
        verifications = list(found)
    jars = _spice_jars(predictions.items)
    values = _metrics(scored, jars, "")
    if spec.verify:
        values.update(_verification_metrics(scored, verifications, jars))
    options = scoring_options(predictions.items)
    if samples_output is not None:
        _write_samples(samples_output, task, predictions.items, scored, verifications, options)
    return ScoreReport(
        task=task,
        version=task_version(),
        filter_name="verified" if spec.verify else "none",
        metrics={
            name: MetricValue(value, stderr, n, name != VERIFIER_FAILURES)
            for name, (value, stderr, n) in values.items()
        },
        predictions=str(predictions_path),
        source_format=predictions.source_format,
        n_items=len(items),
        usage=usage.as_dict() if usage else None,
        samples_output=str(samples_output) if samples_output else None,
        options=options,
        n_total=card_samples(spec, options),
    )


def card_samples(spec: CggcTaskSpec, options: dict[str, Any]) -> int | None:
    """The card's test-set size where the options are the defaults it counts (k, seed;
    packaging and test_type only as the task's name fixes them), else None: other options
    change which items the pool can serve."""
    card = load_card("conceptcomb.cggc")
    named = spec.name if spec.name in card.tasks else None
    fixed = {"packaging": spec.packaging or None, "test_type": spec.test_type or None}
    default = options.get("k", DEFAULT_K) == DEFAULT_K and options.get("seed", 0) == 0
    for name, value in fixed.items():
        default = default and options.get(name) in (None, value)
    return card.tasks[named].dataset_samples if named and default else None


def scoring_options(predictions: list[Prediction]) -> dict[str, Any]:
    """The options the replies' docs were made with, as a run records them (`TaskOptions`):
    what decides the items and their demonstrations (``k``, ``seed``; ``packaging`` and
    ``test_type`` where the docs set them). The docs must agree: one run's replies."""
    found: dict[str, set[Any]] = {"k": set(), "seed": set(), "packaging": set(), "test_type": set()}
    for prediction in predictions:
        doc = prediction.doc
        if isinstance(doc.get("demonstration_ids"), list):
            found["k"].add(len(doc["demonstration_ids"]))
        if doc.get("seed") is not None:
            found["seed"].add(int(doc["seed"]))
        for name in ("packaging", "test_type"):
            if doc.get(name):
                found[name].add(str(doc[name]))
    mixed = sorted(name for name, values in found.items() if len(values) > 1)
    if mixed:
        raise DataFormatError(
            f"the replies' docs disagree on {', '.join(mixed)}: they come from several runs; "
            "score each run's replies on their own."
        )
    return {name: values.pop() for name, values in found.items() if values}


def _spice_jars(predictions: list[Prediction]) -> str | None:
    """SPICE's jar folder, as the run's docs carried it (lm-eval --metadata spice_jars)."""
    return next((str(p.doc["spice_jars"]) for p in predictions if p.doc.get("spice_jars")), None)


def _item(prediction: Prediction) -> CggcItem:
    try:
        return CggcItem.from_doc(prediction.doc, origin=prediction.origin)
    except (KeyError, TypeError) as err:
        raise DataFormatError(
            f"{prediction.origin}: the doc lacks the CGGC item field {err}: use the docs the "
            "task logs (lm-eval --log_samples, an Inspect log)."
        ) from err


Values = dict[str, tuple[float, float | None, int]]  # metric -> (value, stderr, n)


def _metrics(scored: list[ScoredReply], jars: str | None, suffix: str) -> Values:
    """Table 4 over the replies: the per-item means with lm-eval's standard error."""
    if not scored:
        return {}
    corpus = metrics.all_metrics([s.scored for s in scored], jars)
    values: Values = {}
    for name in metrics.METRIC_NAMES:
        per_item = [s.values[name] for s in scored if not math.isnan(s.values.get(name, math.nan))]
        stderr = sem(per_item) if name in ("rouge2", "rougeL", "coverage") else None
        values[name + suffix] = (corpus[name], stderr, len(scored))
    return values


def _verification_metrics(
    scored: list[ScoredReply], verifications: list[Verification | None], jars: str | None
) -> Values:
    known = [100.0 * float(v.verified) for v in verifications if v and v.verified is not None]
    failures = float(sum(bool(v and v.failed) for v in verifications))
    values: Values = {VERIFIER_FAILURES: (failures, None, len(scored))}
    if known:
        values[VERIFIED_SHARE] = (sum(known) / len(known), sem(known), len(known))
    kept = [s for s, v in zip(scored, verifications, strict=True) if v and v.verified]
    return {**values, **_metrics(kept, jars, SUFFIX)}


def _write_samples(
    path: Path,
    task: str,
    predictions: list[Prediction],
    scored: list[ScoredReply],
    verifications: list[Verification | None],
    options: dict[str, Any],
) -> None:
    """Per item: the doc, the raw reply, the per-item values, the verifier's answers and
    the chat the task would have sent it, demonstrations included (leaderboard bundles read
    them as the evidence)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for prediction, score, verification in zip(predictions, scored, verifications, strict=True):
            values: dict[str, Any] = score.defined_values()
            if verification is not None:
                values = with_verified(values, verification)
            line = {
                "doc": prediction.doc,
                "response": prediction.response,
                "prediction": score.prediction,
                "metrics": values,
                "verification": verification.to_json() if verification else None,
                "messages": chat_messages(task, prediction.doc, options),
            }
            handle.write(json.dumps(line) + "\n")
