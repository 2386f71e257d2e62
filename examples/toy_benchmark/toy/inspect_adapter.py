"""The toy's Inspect adapter: the task builder and the scorer behind the ``@task`` functions
of `conceptcomb.toy.inspect_tasks`, which ``python -m conceptcomb.frameworks.task_files``
writes from ``INSPECT`` below (a stub per spec)."""

from __future__ import annotations

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from conceptcomb.frameworks.inspect_tasks import ItemMetrics, build_task, chat
from conceptcomb.frameworks.task_files import InspectTasks, TaskStub
from conceptcomb.toy.docs import task_docs
from conceptcomb.toy.metrics import metric_infos
from conceptcomb.toy.scoring import score
from conceptcomb.toy.tasks import all_specs, spec_by_name

ITEMS = ItemMetrics(metric_infos())


@scorer(metrics=ITEMS.metrics(), name="toy")
def toy_scorer() -> Scorer:
    async def run(state: TaskState, target: Target) -> Score:
        return ITEMS.score(score(state.output.completion, target.text))

    return run


def toy_task(name: str) -> Task:
    """A toy task by name: a sample per word."""
    spec = spec_by_name(name)
    samples = [
        Sample(id=doc["word"], input=chat([("user", doc["prompt"])]), target=doc["target"])
        for doc in task_docs(spec)
    ]
    config = GenerateConfig(temperature=0.0, max_tokens=8)
    return build_task(spec.name, samples, toy_scorer(), config, "1.0", {"benchmark": "toy"})


# The generated `conceptcomb.toy.inspect_tasks`: its docstring and a @task function per spec.
INSPECT = InspectTasks(
    lambda: [TaskStub(spec.name, spec.describe() + ".", toy_task) for spec in all_specs()],
)
