"""Inspect adapter: ``inspect eval conceptcomb/mcrae_esslli44`` and ``conceptcomb/mcrae_all``.

Here: builders, datasets, scorers; the `@task` functions: `conceptcomb.mcrae.inspect_tasks`,
written from ``INSPECT`` (below) by ``python -m conceptcomb.frameworks.task_files``.

Options: ``-T data_dir=...``, ``-T tie_rule=norms_order|all_tied``,
``-T senses=tagged|all``. Each sample is one concept; the scorer returns the concept's
metrics and Inspect's ``mean()`` averages them over concepts, as lm-eval does."""

from __future__ import annotations

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from conceptcomb.common.evalcard import card_headline
from conceptcomb.frameworks.inspect_tasks import ItemMetrics, build_task, chat
from conceptcomb.frameworks.task_files import InspectTasks, TaskStub
from conceptcomb.mcrae.data import CITATION, TERMS_OF_USE
from conceptcomb.mcrae.docs import TERMS_LINE, build_docs
from conceptcomb.mcrae.metrics import metric_infos
from conceptcomb.mcrae.scoring import gold_of_doc, score_reply
from conceptcomb.mcrae.tasks import all_specs, spec_by_name, task_version

ITEM_METRICS = ItemMetrics(metric_infos())
# Inspect View's sample list: the concept (the sample's id), its prompt and gold features, the
# ranked list scored, P@k and R@k as the seed counts them and the properties listed (the
# strict matches stay in the score).
SAMPLE_COLUMNS = ITEM_METRICS.columns(
    "mcrae", builtins=("sampleId", "target", "answer")
).without_suffix("_strict")


@scorer(metrics=ITEM_METRICS.metrics(), name="mcrae")
def mcrae_scorer() -> Scorer:
    """Parse the ranked list, match it against the concept's gold features."""

    async def score(state: TaskState, target: Target) -> Score:
        gold = gold_of_doc(state.metadata, origin=f"sample {state.sample_id}")
        result = score_reply(gold, state.output.completion)
        return ITEM_METRICS.score(
            result.metrics,
            answer="\n".join(result.properties),
            metadata={"properties": result.properties},
        )

    return score


def mcrae_task(
    name: str,
    data_dir: str | None = None,
    tie_rule: str | None = None,
    senses: str | None = None,
) -> Task:
    """A McRae task by name: one sample per concept."""
    spec = spec_by_name(name)
    docs = build_docs(spec, data_dir, tie_rule, senses)
    print(TERMS_LINE, flush=True)
    samples = [
        Sample(
            id=doc["concept"],
            input=chat([("user", doc["prompt"])]),
            target=doc["target"],
            metadata=doc,
        )
        for doc in docs
    ]
    return build_task(
        spec.name,
        samples,
        mcrae_scorer(),
        GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens),
        task_version(),
        {
            "benchmark": "mcrae",
            "concepts": spec.concepts,
            "tie_rule": docs[0]["tie_rule"],
            "senses": docs[0]["senses"],
            "terms_of_use": TERMS_OF_USE,
            "citation": CITATION,
        },
        headline=card_headline("conceptcomb.mcrae", spec.name),  # P@10, a per-item mean
        columns=SAMPLE_COLUMNS,
    )


# The parameters of every task's ``@task`` function (Inspect's ``-T`` options).
PARAMS = ("data_dir: str | None = None", "tie_rule: str | None = None", "senses: str | None = None")
# `conceptcomb.mcrae.inspect_tasks`: written by `python -m conceptcomb.frameworks.task_files`.
INSPECT = InspectTasks(
    lambda: [
        TaskStub(spec.name, spec.describe() + ".", mcrae_task, params=PARAMS)
        for spec in all_specs()
    ],
)
