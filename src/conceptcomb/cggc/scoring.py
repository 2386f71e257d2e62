"""CGGC's scoring core, the one path from a reply to its metrics for both frameworks.

`score_doc`: a reply -> its cleaned sentence (`prompts.clean_prediction`) -> the item's
`Scored` record -> its per-item metrics (ROUGE, Coverage); lm-eval's ``process_results``
and Inspect's scorer call it with the same document (`docs.item_doc`). `corpus_score`:
one Table 4 metric over the records of all items (BLEU, METEOR, CIDEr, SPICE), which
lm-eval's ``agg_*`` aggregations and Inspect's metrics call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conceptcomb.cggc import metrics
from conceptcomb.cggc.metrics import Scored
from conceptcomb.cggc.prompts import clean_prediction, style_named


@dataclass(frozen=True)
class ScoredReply:
    """One item's reply, scored: its record for the corpus metrics and its own values."""

    scored: Scored
    values: dict[str, float]  # NaN where a value is undefined

    @property
    def prediction(self) -> str:
        return self.scored.prediction

    def defined_values(self) -> dict[str, float]:
        return {name: value for name, value in self.values.items() if not math.isnan(value)}


def prediction_of(doc: Mapping[str, Any], reply: str) -> str:
    """The sentence a reply to the item of ``doc`` generated (the task's prompt style)."""
    return clean_prediction(reply, style_named(doc.get("prompt_style")))


def score_doc(doc: Mapping[str, Any], reply: str) -> ScoredReply:
    """Score a reply to the item of ``doc`` (an lm-eval doc or an Inspect sample's metadata)."""
    prediction = prediction_of(doc, reply)
    metrics.start_meteor()
    scored = Scored(str(doc["item_id"]), prediction, (str(doc["target"]),), tuple(doc["concepts"]))
    return ScoredReply(scored, metrics.item_metrics(scored))


def corpus_score(name: str, records: Sequence[Scored], spice_jars: str | None = None) -> float:
    """One Table 4 metric over the scored items (NaN for none); SPICE reads its jars from
    ``spice_jars`` (the task option) or the environment."""
    if not records:
        return math.nan
    if name == "spice":
        return metrics.spice(records, spice_jars)
    return metrics.corpus_metric(name, records)


def epochs_score(
    name: str, epochs: Mapping[int, Sequence[Scored]], spice_jars: str | None = None
) -> float:
    """One Table 4 metric of a run whose items were answered in several epochs (Inspect's
    ``--epochs``): each epoch's corpus metric, averaged over the epochs. Equal epochs give
    one epoch's value (CIDEr's document frequencies, unlike BLEU's counts, change when the
    corpus is doubled, so the epochs are not pooled); NaN epochs are left out."""
    values = [corpus_score(name, records, spice_jars) for records in epochs.values()]
    defined = [value for value in values if not math.isnan(value)]
    return sum(defined) / len(defined) if defined else math.nan
