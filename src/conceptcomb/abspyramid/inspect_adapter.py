"""Inspect adapter for AbsPyramid: ``inspect eval conceptcomb/abspyramid_det_noun`` and friends.

Here: builders, datasets, scorers; the `@task` functions: `conceptcomb.abspyramid.inspect_tasks`,
written from ``INSPECT`` (below) by ``python -m conceptcomb.frameworks.task_files``.

Every task takes ``-T data_dir=...`` (a folder with the hub files), ``-T split=valid`` and
``-T seed=N`` (the draw of the in-context demonstrations of ``_icl`` and ``_icl_cot``,
default 0; the same seed shows an item the same demonstrations as lm-eval's ``--metadata``).

The log-likelihood detection tasks need the probability of "Yes" against "No". Inspect has
no log-likelihood call that most providers serve, so they ask for one token with
``logprobs`` and read P(Yes) from the first token's top 20 alternatives (providers that
return logprobs: OpenAI, vLLM and other OpenAI-compatible servers, Inspect's ``hf``, ...).
With ``--apply_chat_template`` and single-token answers lm-eval scores the same token; it
uses the full log-likelihoods, we the top alternatives, so the numbers agree closely, not
exactly. A model that returns no logprobs stops the task with an error naming the
generative alternatives (``_zs``, ``_icl``)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.docs import build_docs, doc_turns
from conceptcomb.abspyramid.scoring import (
    score_detection_reply,
    score_generation_reply,
    score_top_logprobs,
)
from conceptcomb.abspyramid.tasks import (
    DETECTION,
    AbsTaskSpec,
    all_specs,
    spec_by_name,
    task_version,
)
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.evalcard import card_headline
from conceptcomb.frameworks.inspect_tasks import ItemMetrics, SampleColumns, build_task, chat
from conceptcomb.frameworks.task_files import InspectTasks, TaskStub

TOP_LOGPROBS = 20


@metric
def detection_corpus() -> Metric:
    """Macro-F1 and ROC-AUC over all samples (from each score's label, prediction, P(Yes)).

    Read as the epoch reducer leaves them: under ``mean`` (the default) a sample's
    prediction is its share of Yes over the epochs, so a sample right in one of two epochs
    is half right (`conceptcomb.abspyramid.metrics.macro_f1`), and P(Yes) its mean; under
    ``mode`` one verdict per sample (the first epoch's on a tie). The gold label is the
    same in every epoch.
    """

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [score.score.value for score in scores if isinstance(score.score.value, dict)]
        labels = [_gold(v["label"]) for v in values]
        result = {m.MACRO_F1: m.macro_f1(labels, [float(v["pred"]) for v in values])}
        if any("p_yes" in v for v in values):
            result[m.AUC] = m.roc_auc(labels, [float(v.get("p_yes", m.NAN)) for v in values])
        return result

    return compute


def _gold(label: object) -> int:
    """A score's gold label (1 Yes, 0 No), whichever reducer left it."""
    return 1 if float(label) >= 0.5 else 0  # type: ignore[arg-type]


@metric(scores="unreduced")
def corpus_bleu() -> Metric:
    """BLEU-1/2 (and the brevity penalty) over every epoch's prediction and its references,
    pooled (the reducer keeps only the first epoch's record): equal epochs give one epoch's
    values, as BLEU's n-gram and length counts only scale."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        meta = [score.score.metadata or {} for score in scores]
        return m.bleu_metrics([d["prediction"] for d in meta], [d["references"] for d in meta])

    return compute


def _first_token_alternatives(state: TaskState) -> list[tuple[str, float]]:
    choice = state.output.choices[0] if state.output.choices else None
    content = choice.logprobs.content if choice and choice.logprobs else None
    if not content:
        raise ConfigError(
            f"{state.model} returned no log probabilities, which the log-likelihood "
            "AbsPyramid tasks need: use a provider that returns logprobs, or the generative "
            "variants (abspyramid_det_<relation>_zs, _icl, _cot)."
        )
    first = content[0]
    alternatives = [(top.token, top.logprob) for top in first.top_logprobs or []]
    return alternatives or [(first.token, first.logprob)]


def detection_scorer(spec: AbsTaskSpec) -> Scorer:
    items = ItemMetrics(m.metric_infos(spec), extra=[detection_corpus()])

    @scorer(metrics=items.metrics(), name="abspyramid")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            doc = state.metadata
            metadata: dict[str, Any] = {}
            if spec.generative:
                reply = state.output.completion
                result = score_detection_reply(spec, doc, reply)
                value: dict[str, Any] = {}
            else:
                # The alternatives P(Yes) was read from: a bundle's evidence re-reads them.
                top = _first_token_alternatives(state)
                result = score_top_logprobs(doc, top)
                reply, value = f"P(Yes)={result.p_yes:.4f}", {"p_yes": result.p_yes}
                metadata["top_logprobs"] = [[token, logprob] for token, logprob in top]
            value.update(result.item_metrics(), label=result.label, pred=result.pred)
            metadata["parsed"] = result.pred
            return items.score(value, answer=reply[-200:], metadata=metadata)

        return score

    return build()


def generation_scorer(spec: AbsTaskSpec) -> Scorer:
    items = ItemMetrics(m.metric_infos(spec), extra=[corpus_bleu()])

    @scorer(metrics=items.metrics(), name="abspyramid")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            references = list(state.metadata["references"])
            prediction, values = score_generation_reply(state.metadata, state.output.completion)
            return items.score(
                values,
                answer=prediction,
                metadata={"prediction": prediction, "references": references},
            )

        return score

    return build()


def sample_input(spec: AbsTaskSpec, doc: dict[str, Any]) -> list[ChatMessage]:
    """The messages of one sample: the whole prompt, or instruction + demonstrations + query
    (`conceptcomb.abspyramid.docs.doc_turns`, what bundles record as sent)."""
    return chat(doc_turns(spec, doc))


def generate_config(spec: AbsTaskSpec) -> GenerateConfig:
    # Greedy by default (override with --temperature etc.).
    if not spec.generative:
        return GenerateConfig(
            temperature=0.0, max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS
        )
    return GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens)


def abspyramid_task(
    name: str, data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """An AbsPyramid task by name, on the items of ``split``."""
    spec = spec_by_name(name)
    samples = [
        Sample(id=doc["item_id"], input=sample_input(spec, doc), target=doc["answer"], metadata=doc)
        for doc in build_docs(spec, split, data_dir, seed)
    ]
    return build_task(
        spec.name,
        samples,
        detection_scorer(spec) if spec.kind == DETECTION else generation_scorer(spec),
        generate_config(spec),
        task_version(),
        {"benchmark": "abspyramid", "kind": spec.kind, "relation": spec.relation},
        headline=_headline(spec),
        columns=sample_columns(spec),
    )


def sample_columns(spec: AbsTaskSpec) -> SampleColumns:
    """AbsPyramid in Inspect View's sample list: the item (relation, split, row), the prompt,
    the gold answer, the reply, and detection's accuracy with the gold label and the
    prediction (1 valid, 0 not) or generation's ROUGE and METEOR per item (the event, the
    concept and the entity type: the sample's metadata, ``event``, ``concept``, ``type``)."""
    items = ItemMetrics(m.metric_infos(spec))
    extra = ("label", "pred") if spec.kind == DETECTION else ()
    return items.columns("abspyramid", *extra)


def _headline(spec: AbsTaskSpec) -> str | HeadlineMetric | None:
    """The card's headline: detection's macro-F1 is a corpus metric (`detection_corpus`),
    generation's ROUGE-L a per-item mean."""
    name = card_headline("conceptcomb.abspyramid", spec.name)
    if name is None:
        return None
    return HeadlineMetric(metric=name) if spec.kind == DETECTION else name


# The parameters of every task's ``@task`` function (Inspect's ``-T`` options).
PARAMS = ("data_dir: str | None = None", 'split: str = "test"', "seed: int = 0")
# `conceptcomb.abspyramid.inspect_tasks`: written by `python -m conceptcomb.frameworks.task_files`.
INSPECT = InspectTasks(
    lambda: [
        TaskStub(spec.name, spec.describe() + ".", abspyramid_task, params=PARAMS)
        for spec in all_specs()
    ],
)
