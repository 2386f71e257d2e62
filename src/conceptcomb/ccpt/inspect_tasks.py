"""Inspect adapter for CCPT: ``inspect eval conceptcomb/ccpt_pi_emergent`` and friends.

Every task takes ``-T data_dir=...`` and the judge options of
`conceptcomb.scorers.judge_settings` (``-T judge=local`` ...); ``--model-role
grader=MODEL`` makes an Inspect model the judge instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import Metric, Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.metrics import metric_infos
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, target_of, user_prompt
from conceptcomb.ccpt.scoring import ItemScore, plan_item, score_reply
from conceptcomb.ccpt.tasks import TASK_VERSION, CcptTaskSpec, all_specs
from conceptcomb.common.inspect_metrics import total
from conceptcomb.scorers.inspect_judge import InspectSessions
from conceptcomb.scorers.judge_settings import JudgeSettings


def _metrics(spec: CcptTaskSpec) -> dict[str, list[Metric]]:
    return {
        info.name: [total()] if info.aggregation == "sum" else [mean(), stderr()]
        for info in metric_infos(spec)
    }


def _to_score(result: ItemScore, reply: str) -> Score:
    return Score(
        value=result.metrics,  # NaN marks undefined values; Inspect leaves them out
        answer=json.dumps(result.answer.fields) if result.answer else reply[-200:],
        explanation="; ".join(result.errors) or None,
        metadata=result.to_json(),
    )


def ccpt_scorer(spec: CcptTaskSpec, settings: JudgeSettings) -> Scorer:
    """Parse the reply, ask the judge (grader role or our judge), compute the item metrics."""
    sessions = InspectSessions(settings) if spec.generative else None

    @scorer(metrics=_metrics(spec), name="ccpt")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            item = CcptItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
            reply = state.output.completion
            if sessions is None:
                return _to_score(plan_item(spec, item, reply), reply)
            result = await score_reply(spec, item, reply, sessions.session())
            return _to_score(result, reply)

        return score

    return build()


def samples(spec: CcptTaskSpec, items: list[CcptItem]) -> list[Sample]:
    return [
        Sample(
            id=item.item_id,
            input=[
                ChatMessageSystem(content=SYSTEM_PROMPT),
                ChatMessageUser(content=user_prompt(spec, item)),
            ],
            target=target_of(spec, item),
            metadata={**item.as_doc(), "task": spec.name},
        )
        for item in items
    ]


def ccpt_task(spec: CcptTaskSpec, data_dir: str | None = None, **judge_options: object) -> Task:
    settings = JudgeSettings.resolve(judge_options)
    if spec.generative and any(value is not None for value in judge_options.values()):
        settings.check_credentials()  # an explicit judge choice is checked up front
    items = load_items(spec, data_dir)
    return Task(
        dataset=MemoryDataset(samples(spec, items), name=spec.name),
        solver=generate(),
        scorer=ccpt_scorer(spec, settings),
        # Greedy decoding by default; override with --temperature etc.
        config=GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens),
        version=TASK_VERSION,
        metadata={
            "benchmark": "ccpt",
            "kind": spec.kind,
            "method": spec.method,
            "subset": spec.subset,
        },
    )


def _define(spec: CcptTaskSpec) -> Callable[..., Task]:
    def run(
        data_dir: str | None = None,
        judge: str | None = None,
        judge_model: str | None = None,
        judge_base_url: str | None = None,
        judge_api_key_env: str | None = None,
        judge_concurrency: int | None = None,
        judge_cache: str | None = None,
    ) -> Task:
        return ccpt_task(
            spec,
            data_dir=data_dir,
            judge=judge,
            judge_model=judge_model,
            judge_base_url=judge_base_url,
            judge_api_key_env=judge_api_key_env,
            judge_concurrency=judge_concurrency,
            judge_cache=judge_cache,
        )

    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = f"CCPT task {spec.name} ({spec.kind}, {spec.method} prompt, {spec.subset} items)."
    return task(name=spec.name)(run)


TASKS: dict[str, Callable[..., Task]] = {spec.name: _define(spec) for spec in all_specs()}
globals().update(TASKS)
