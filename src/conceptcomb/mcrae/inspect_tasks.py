"""Inspect adapter: ``inspect eval conceptcomb/mcrae_esslli44`` and ``conceptcomb/mcrae_all``.

Options: ``-T data_dir=...``, ``-T tie_rule=norms_order|all_tied``,
``-T senses=tagged|all``. Each sample is one concept; the scorer returns the concept's
metrics and Inspect's ``mean()`` averages them over concepts, as lm-eval does.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, GenerateConfig
from inspect_ai.scorer import Metric, Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from conceptcomb.mcrae.answers import parse_properties
from conceptcomb.mcrae.data import CITATION, TERMS_OF_USE
from conceptcomb.mcrae.metrics import concept_metrics, metric_infos
from conceptcomb.mcrae.scoring import TERMS_LINE, build_docs, gold_of_doc
from conceptcomb.mcrae.tasks import TASK_VERSION, McraeTaskSpec, all_specs


def _metrics() -> dict[str, list[Metric]]:
    return {info.name: [mean(), stderr()] for info in metric_infos()}


@scorer(metrics=_metrics(), name="mcrae")
def mcrae_scorer() -> Scorer:
    """Parse the ranked list, match it against the concept's gold features."""

    async def score(state: TaskState, target: Target) -> Score:
        gold = gold_of_doc(state.metadata, origin=f"sample {state.sample_id}")
        properties = parse_properties(state.output.completion)
        return Score(
            value=concept_metrics(gold, properties),
            answer="\n".join(properties),
            metadata={"properties": properties},
        )

    return score


def mcrae_task(
    spec: McraeTaskSpec,
    data_dir: str | None = None,
    tie_rule: str | None = None,
    senses: str | None = None,
) -> Task:
    docs = build_docs(spec, data_dir, tie_rule, senses)
    print(TERMS_LINE, flush=True)
    samples = [
        Sample(
            id=doc["concept"],
            input=[ChatMessageUser(content=doc["prompt"])],
            target=doc["target"],
            metadata=doc,
        )
        for doc in docs
    ]
    return Task(
        dataset=MemoryDataset(samples, name=spec.name),
        solver=generate(),
        scorer=mcrae_scorer(),
        # Greedy decoding by default; override with --temperature etc.
        config=GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens),
        version=TASK_VERSION,
        metadata={
            "benchmark": "mcrae",
            "concepts": spec.concepts,
            "tie_rule": docs[0]["tie_rule"],
            "senses": docs[0]["senses"],
            "terms_of_use": TERMS_OF_USE,
            "citation": CITATION,
        },
    )


def _define(spec: McraeTaskSpec) -> Callable[..., Task]:
    def run(
        data_dir: str | None = None, tie_rule: str | None = None, senses: str | None = None
    ) -> Task:
        return mcrae_task(spec, data_dir=data_dir, tie_rule=tie_rule, senses=senses)

    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = f"McRae property generation, task {spec.name}."
    return task(name=spec.name)(run)


TASKS: dict[str, Callable[..., Task]] = {spec.name: _define(spec) for spec in all_specs()}
globals().update(TASKS)
