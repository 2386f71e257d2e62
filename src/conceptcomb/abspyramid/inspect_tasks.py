"""Inspect adapter for AbsPyramid: ``inspect eval conceptcomb/abspyramid_det_noun`` and friends.

Every task takes ``-T data_dir=...`` (a folder with the hub files) and ``-T split=valid``.

The log-likelihood detection tasks need the probability of "Yes" against "No". Inspect has
no log-likelihood call that most providers serve, so they ask for one token with
``logprobs`` and read P(Yes) from the first token's top 20 alternatives (providers that
return logprobs: OpenAI, vLLM and other OpenAI-compatible servers, Inspect's ``hf``, ...).
With ``--apply_chat_template`` and single-token answers lm-eval scores the same token; it
uses the full log-likelihoods, we the top alternatives, so the numbers agree closely, not
exactly. A model that returns no logprobs stops the task with an error naming the
generative alternatives (``_zs``, ``_icl``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.scorer import stderr as stderr_metric
from inspect_ai.solver import TaskState, generate

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.scoring import (
    build_docs,
    p_yes_from_top_logprobs,
    score_detection_reply,
    score_generation_reply,
)
from conceptcomb.abspyramid.tasks import DETECTION, ICL, TASK_VERSION, AbsTaskSpec, all_specs
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.inspect_metrics import total

TOP_LOGPROBS = 20


@metric
def detection_corpus() -> Metric:
    """Macro-F1 and ROC-AUC over all samples (from each score's label, prediction, P(Yes))."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [score.score.value for score in scores if isinstance(score.score.value, dict)]
        labels = [int(v["label"]) for v in values]
        result = {m.MACRO_F1: m.macro_f1(labels, [int(v["pred"]) for v in values])}
        if any("p_yes" in v for v in values):
            result[m.AUC] = m.roc_auc(labels, [float(v["p_yes"]) for v in values])
        return result

    return compute


@metric
def corpus_bleu() -> Metric:
    """BLEU-1/2 (and the brevity penalty) over all samples' predictions and references."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        meta = [score.score.metadata or {} for score in scores]
        return m.bleu_metrics([d["prediction"] for d in meta], [d["references"] for d in meta])

    return compute


def _item_metrics(spec: AbsTaskSpec) -> dict[str, list[Metric]]:
    return {
        info.name: [total()] if info.aggregation == "sum" else [mean(), stderr_metric()]
        for info in m.metric_infos(spec)
        if info.aggregation != "corpus"
    }


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
    @scorer(metrics=[_item_metrics(spec), detection_corpus()], name="abspyramid")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            doc = state.metadata
            if spec.generative:
                reply = state.output.completion
                result = score_detection_reply(spec, doc, reply)
                value: dict[str, Any] = {}
            else:
                p_yes = p_yes_from_top_logprobs(_first_token_alternatives(state))
                result = m.from_probability(int(doc["label"]), p_yes)
                reply, value = f"P(Yes)={p_yes:.4f}", {"p_yes": result.p_yes}
            value.update(result.item_metrics(), label=result.label, pred=result.pred)
            return Score(value=value, answer=reply[-200:], metadata={"parsed": result.pred})

        return score

    return build()


def generation_scorer(spec: AbsTaskSpec) -> Scorer:
    @scorer(metrics=[_item_metrics(spec), corpus_bleu()], name="abspyramid")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            references = list(state.metadata["references"])
            prediction, values = score_generation_reply(state.metadata, state.output.completion)
            return Score(
                value=values,
                answer=prediction,
                metadata={"prediction": prediction, "references": references},
            )

        return score

    return build()


def sample_input(spec: AbsTaskSpec, doc: dict[str, Any]) -> list[ChatMessage]:
    """The messages of one sample: the whole prompt, or instruction + demonstrations + question."""
    if spec.kind == DETECTION and spec.method == ICL:
        messages: list[ChatMessage] = [ChatMessageSystem(content=doc["instruction"])]
        for demo in doc["demos"]:
            messages.append(ChatMessageUser(content=demo["question"]))
            messages.append(ChatMessageAssistant(content=demo["answer"]))
        return [*messages, ChatMessageUser(content=doc["question"])]
    return [ChatMessageUser(content=doc["prompt"])]


def generate_config(spec: AbsTaskSpec) -> GenerateConfig:
    # Greedy by default (override with --temperature etc.).
    if not spec.generative:
        return GenerateConfig(
            temperature=0.0, max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS
        )
    return GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens)


def abspyramid_task(spec: AbsTaskSpec, data_dir: str | None = None, split: str = "test") -> Task:
    docs = build_docs(spec, split, data_dir)
    samples = [
        Sample(id=doc["item_id"], input=sample_input(spec, doc), target=doc["answer"], metadata=doc)
        for doc in docs
    ]
    return Task(
        dataset=MemoryDataset(samples, name=spec.name),
        solver=generate(),
        scorer=detection_scorer(spec) if spec.kind == DETECTION else generation_scorer(spec),
        config=generate_config(spec),
        version=TASK_VERSION,
        metadata={"benchmark": "abspyramid", "kind": spec.kind, "relation": spec.relation},
    )


def _define(spec: AbsTaskSpec) -> Callable[..., Task]:
    def run(data_dir: str | None = None, split: str = "test") -> Task:
        return abspyramid_task(spec, data_dir=data_dir, split=split)

    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = f"{spec.describe()}."
    return task(name=spec.name)(run)


TASKS: dict[str, Callable[..., Task]] = {spec.name: _define(spec) for spec in all_specs()}
globals().update(TASKS)
