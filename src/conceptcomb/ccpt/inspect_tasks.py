"""Inspect adapter for CCPT: ``inspect eval conceptcomb/ccpt_pi_emergent`` and friends.

Every task takes ``-T data_dir=...`` and the judge options of
`conceptcomb.scorers.judge_settings` (``-T judge=local`` ...); ``--model-role
grader=MODEL`` makes an Inspect model the judge instead. ``-T npc_modifier=surface`` judges
a noun phrase completion's modifier as written instead of its lemma (the paper's rule,
`conceptcomb.ccpt.modifiers`); other tasks accept and ignore it.

The paper's methods (`method_task`): ``ccpt_<kind>_sa_llm`` / ``_sa_conceptnet`` /
``_sa_both`` / ``_sa_conceptnet_nofilter`` take ``-T sa_iterations=5 -T sa_epsilon=0.1
-T sa_seed=0 -T sa_graph=ccpt|cn100k|ccpt+cn100k``; ``ccpt_<kind>_oracle`` takes
``-T oracle_n=5``.
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
from conceptcomb.ccpt.inspect_methods import oracle_scorer, sample_n, spreading_activation
from conceptcomb.ccpt.metrics import metric_infos
from conceptcomb.ccpt.modifiers import OPTION, task_rule
from conceptcomb.ccpt.oracle import ORACLE_N, ORACLE_TEMPERATURE, ORACLE_TOP_P, base_spec
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, target_of, user_prompt
from conceptcomb.ccpt.sa_prompts import sa_user_prompt
from conceptcomb.ccpt.scoring import ItemScore, plan_item, score_reply
from conceptcomb.ccpt.spreading import SaSettings, load_graph, offline_trace
from conceptcomb.ccpt.tasks import (
    NPC_EMERGENT,
    TASK_VERSION,
    CcptTaskSpec,
    all_specs,
    method_specs,
)
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.inspect_metrics import total
from conceptcomb.scorers.inspect_judge import InspectSessions, judge_preflight
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


def judge_sessions(spec: CcptTaskSpec, settings: JudgeSettings) -> InspectSessions | None:
    """The task's judge sessions; none for type prediction, which needs no judge."""
    return InspectSessions(settings, spec.name) if spec.generative else None


def ccpt_scorer(spec: CcptTaskSpec, sessions: InspectSessions | None, npc_modifier: str) -> Scorer:
    """Parse the reply, ask the judge (grader role or our judge), compute the item metrics."""

    @scorer(metrics=_metrics(spec), name="ccpt")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            item = CcptItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
            reply = state.output.completion
            if sessions is None:
                return _to_score(plan_item(spec, item, reply, npc_modifier), reply)
            result = await score_reply(spec, item, reply, sessions.session(), npc_modifier)
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


def npc_modifier_rule(spec: CcptTaskSpec, value: object) -> tuple[str, dict[str, str]]:
    """The checked ``npc_modifier`` rule and the task metadata that records it (NPC only)."""
    rule = task_rule(spec.kind, value)
    return rule, ({OPTION: rule} if spec.kind == NPC_EMERGENT else {})


def ccpt_task(
    spec: CcptTaskSpec,
    data_dir: str | None = None,
    npc_modifier: str | None = None,
    **judge_options: object,
) -> Task:
    rule, rule_metadata = npc_modifier_rule(spec, npc_modifier)
    settings = JudgeSettings.resolve(judge_options)
    if spec.generative and any(value is not None for value in judge_options.values()):
        settings.check_credentials()  # an explicit judge choice is checked up front
    items = load_items(spec, data_dir)
    sessions = judge_sessions(spec, settings)
    return Task(
        dataset=MemoryDataset(samples(spec, items), name=spec.name),
        setup=judge_preflight(sessions) if sessions else None,
        solver=generate(),
        scorer=ccpt_scorer(spec, sessions, rule),
        # Greedy decoding by default; override with --temperature etc.
        config=GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens),
        version=TASK_VERSION,
        metadata={
            "benchmark": "ccpt",
            "kind": spec.kind,
            "method": spec.method,
            "subset": spec.subset,
            **rule_metadata,
        },
    )


def _define(spec: CcptTaskSpec) -> Callable[..., Task]:
    def run(
        data_dir: str | None = None,
        npc_modifier: str | None = None,
        judge: str | None = None,
        judge_model: str | None = None,
        judge_base_url: str | list[str] | None = None,
        judge_api_key_env: str | None = None,
        judge_concurrency: int | None = None,
        judge_cache: str | None = None,
    ) -> Task:
        return ccpt_task(
            spec,
            data_dir=data_dir,
            npc_modifier=npc_modifier,
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


def _sa_samples(
    spec: CcptTaskSpec, items: list[CcptItem], settings: SaSettings, data_dir: str | None
) -> list[Sample]:
    """Graph-only without filter: C_T is known before generation (as in lm-eval);
    otherwise the solver computes it and the input holds the prompt's template."""
    if spec.needs_model_during_activation:
        return [
            Sample(
                id=item.item_id,
                input=[
                    ChatMessageSystem(content=SYSTEM_PROMPT),
                    ChatMessageUser(content=sa_user_prompt(spec, item, ["<C_T>"])),
                ],
                target=target_of(spec, item),
                metadata={**item.as_doc(), "task": spec.name},
            )
            for item in items
        ]
    graph = load_graph(settings.graph, data_dir)
    samples = []
    for item in items:
        trace = offline_trace(spec, item, settings, graph)
        samples.append(
            Sample(
                id=item.item_id,
                input=[
                    ChatMessageSystem(content=SYSTEM_PROMPT),
                    ChatMessageUser(content=sa_user_prompt(spec, item, trace.relevant)),
                ],
                target=target_of(spec, item),
                metadata={
                    **item.as_doc(),
                    "task": spec.name,
                    "relevant_concepts": trace.relevant,
                    "spreading_activation": trace.to_json(),
                },
            )
        )
    return samples


def method_task(
    spec: CcptTaskSpec,
    data_dir: str | None = None,
    sa_options: dict[str, object] | None = None,
    oracle_n: int = ORACLE_N,
    npc_modifier: str | None = None,
    **judge_options: object,
) -> Task:
    """A spreading-activation or multi-oracle task (section 4.1)."""
    rule, rule_metadata = npc_modifier_rule(spec, npc_modifier)
    settings = JudgeSettings.resolve(judge_options)
    if any(value is not None for value in judge_options.values()):
        settings.check_credentials()
    items = load_items(spec, data_dir)
    metadata = {
        "benchmark": "ccpt",
        "kind": spec.kind,
        "method": spec.method,
        "subset": spec.subset,
        **rule_metadata,
    }
    sessions = InspectSessions(settings, spec.name)
    if spec.oracle:
        if oracle_n < 1:
            raise ConfigError("oracle_n must be at least 1 (the paper's N is 5).")
        return Task(
            setup=judge_preflight(sessions),
            dataset=MemoryDataset(
                [
                    sample.model_copy(update={"metadata": {**sample.metadata, "task": spec.name}})
                    for sample in samples(base_spec(spec), items)
                ],
                name=spec.name,
            ),
            solver=sample_n(oracle_n),
            scorer=oracle_scorer(spec, sessions, rule),
            # Appendix B.1: nucleus sampling with T = 0.7, p = 0.95.
            config=GenerateConfig(
                temperature=ORACLE_TEMPERATURE, top_p=ORACLE_TOP_P, max_tokens=spec.max_tokens
            ),
            version=TASK_VERSION,
            metadata={**metadata, "oracle_n": oracle_n},
        )
    sa = SaSettings.for_spec(spec, sa_options)
    needs_model = spec.needs_model_during_activation
    graph = load_graph(sa.graph, data_dir) if sa.use_graph and needs_model else None
    return Task(
        dataset=MemoryDataset(_sa_samples(spec, items, sa, data_dir), name=spec.name),
        setup=judge_preflight(sessions),
        solver=spreading_activation(spec, sa, graph) if needs_model else generate(),
        scorer=ccpt_scorer(spec, sessions, rule),
        # Greedy by default, activation and filter calls included; override with --temperature.
        config=GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens),
        version=TASK_VERSION,
        metadata={**metadata, "spreading_activation": sa.as_dict()},
    )


def _define_sa(spec: CcptTaskSpec) -> Callable[..., Task]:
    def run(
        data_dir: str | None = None,
        sa_iterations: int | None = None,
        sa_epsilon: float | None = None,
        sa_seed: int | None = None,
        sa_graph: str | None = None,
        npc_modifier: str | None = None,
        judge: str | None = None,
        judge_model: str | None = None,
        judge_base_url: str | list[str] | None = None,
        judge_api_key_env: str | None = None,
        judge_concurrency: int | None = None,
        judge_cache: str | None = None,
    ) -> Task:
        sa_options = {
            "sa_iterations": sa_iterations,
            "sa_epsilon": sa_epsilon,
            "sa_seed": sa_seed,
            "sa_graph": sa_graph,
        }
        return method_task(
            spec,
            data_dir=data_dir,
            sa_options=sa_options,
            npc_modifier=npc_modifier,
            judge=judge,
            judge_model=judge_model,
            judge_base_url=judge_base_url,
            judge_api_key_env=judge_api_key_env,
            judge_concurrency=judge_concurrency,
            judge_cache=judge_cache,
        )

    return _register(spec, run, "spreading activation")


def _define_oracle(spec: CcptTaskSpec) -> Callable[..., Task]:
    def run(
        data_dir: str | None = None,
        oracle_n: int = ORACLE_N,
        npc_modifier: str | None = None,
        judge: str | None = None,
        judge_model: str | None = None,
        judge_base_url: str | list[str] | None = None,
        judge_api_key_env: str | None = None,
        judge_concurrency: int | None = None,
        judge_cache: str | None = None,
    ) -> Task:
        return method_task(
            spec,
            data_dir=data_dir,
            oracle_n=int(oracle_n),
            npc_modifier=npc_modifier,
            judge=judge,
            judge_model=judge_model,
            judge_base_url=judge_base_url,
            judge_api_key_env=judge_api_key_env,
            judge_concurrency=judge_concurrency,
            judge_cache=judge_cache,
        )

    return _register(spec, run, "multi-oracle, best of N")


def _register(spec: CcptTaskSpec, run: Callable[..., Task], what: str) -> Callable[..., Task]:
    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = f"CCPT task {spec.name} ({spec.kind}, {what} ({spec.method}), test items)."
    return task(name=spec.name)(run)


TASKS: dict[str, Callable[..., Task]] = {spec.name: _define(spec) for spec in all_specs()}
TASKS.update({s.name: _define_oracle(s) if s.oracle else _define_sa(s) for s in method_specs()})
globals().update(TASKS)
