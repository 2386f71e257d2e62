"""Inspect pieces for the paper's methods: the spreading-activation solver, the oracle.

* `spreading_activation` runs Algorithm 1 (`conceptcomb.ccpt.methods.spreading`) with the evaluated
  model as activator and/or filter, puts C_T into the answer prompt (Tables 12, 15) and
  generates. Each sample's log holds the concept set of every iteration (metadata
  ``spreading_activation`` and an info event in its transcript).
* `sample_n` draws N replies per sample (multi-oracle); `oracle_scorer` judges all of them
  and reports the best values (``E_oracle`` ...), as `conceptcomb.ccpt.methods.oracle` defines.
"""

from __future__ import annotations

import asyncio
import json

from inspect_ai.log import transcript
from inspect_ai.model import GenerateConfig, Model, ModelOutput, get_model
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.methods.oracle import OracleScore, base_spec, best_of, oracle_metric_infos
from conceptcomb.ccpt.methods.spreading import (
    FILTER_ATTEMPTS,
    ConceptGraph,
    SaSettings,
    initial_concepts,
    item_rng,
    objective,
    parse_concept_list,
    spread,
)
from conceptcomb.ccpt.methods.spreading_prompts import (
    activation_prompt,
    filter_prompt,
    sa_user_prompt,
)
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT
from conceptcomb.ccpt.scoring import score_reply
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.common.inspect_internals import run_seed
from conceptcomb.frameworks.inspect_tasks import ItemMetrics, chat
from conceptcomb.scorers.inspect_judge import InspectSessions

TRACE_KEY = "spreading_activation"


class _Activations:
    """The model's activations per concept, asked once per run (the script caches them)."""

    def __init__(self) -> None:
        self._tasks: dict[tuple[int, str], asyncio.Task[list[str]]] = {}

    async def get(self, model: Model, concept: str) -> list[str]:
        key = (id(asyncio.get_running_loop()), concept)
        if key not in self._tasks:
            self._tasks[key] = asyncio.ensure_future(self._ask(model, concept))
        return await asyncio.shield(self._tasks[key])

    @staticmethod
    async def _ask(model: Model, concept: str) -> list[str]:
        output = await model.generate(activation_prompt(concept))
        try:
            return parse_concept_list(output.completion) or []
        except ValueError:
            return []  # an unreadable list activates nothing


async def _filter(model: Model, nodes: list[str], goal: str) -> list[str] | None:
    """The model's kept nodes; an unreadable list is asked again (the script's retry)."""
    for _ in range(FILTER_ATTEMPTS):
        output = await model.generate(filter_prompt(nodes, goal))
        try:
            return parse_concept_list(output.completion)
        except ValueError:
            continue
    return None


@solver
def spreading_activation(
    spec: CcptTaskSpec, settings: SaSettings, graph: ConceptGraph | None
) -> Solver:
    """Algorithm 1 with the evaluated model, then the answer with C_T in the prompt."""
    activations = _Activations()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        item = CcptItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
        model = get_model()  # the evaluated model activates and filters

        async def activate(concept: str) -> list[str]:
            return await activations.get(model, concept)

        async def keep(nodes: list[str], goal: str) -> list[str] | None:
            return await _filter(model, nodes, goal)

        trace = await spread(
            initial_concepts(spec, item),
            objective(spec, item),
            settings,
            item_rng(settings, item.item_id),
            graph=graph,
            activate=activate if settings.use_llm else None,
            keep=keep if settings.use_filter else None,
        )
        record = trace.to_json()
        state.metadata[TRACE_KEY] = record
        state.metadata["relevant_concepts"] = trace.relevant
        transcript().info(json.loads(json.dumps(record)), source="spreading activation")
        state.messages = chat(
            [("system", SYSTEM_PROMPT), ("user", sa_user_prompt(spec, item, trace.relevant))]
        )
        return await generate(state)

    return solve


def _call_seed(index: int, n: int) -> int | None:
    """Seed of the index-th of n draws when the run has a seed, so that the n draws differ
    (the same seed would give n identical replies) and runs with seeds 0, 1, 2 never share
    a draw (the run's seed: `conceptcomb.common.inspect_internals.run_seed`)."""
    seed = run_seed()
    return None if seed is None else seed * n + index


@solver
def sample_n(n: int) -> Solver:
    """N replies to the sample's prompt; all are kept as the output's choices."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        outputs = await asyncio.gather(
            *(
                model.generate(state.messages, config=GenerateConfig(seed=_call_seed(k, n)))
                for k in range(n)
            )
        )
        state.output = ModelOutput(
            model=outputs[0].model, choices=[output.choices[0] for output in outputs]
        )
        state.messages.append(outputs[0].message)
        state.metadata["replies"] = [output.completion for output in outputs]
        return state

    return solve


def oracle_scorer(spec: CcptTaskSpec, sessions: InspectSessions, npc_modifier: str) -> Scorer:
    """Judge each of the N replies; the Score holds the best values (``E_oracle`` ...)."""
    scored_spec = base_spec(spec)
    items = ItemMetrics(oracle_metric_infos(spec))

    @scorer(metrics=items.metrics(), name="ccpt_oracle")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            item = CcptItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
            replies = [choice.message.text for choice in state.output.choices]
            session = sessions.session()
            scored = await asyncio.gather(
                *(score_reply(scored_spec, item, reply, session, npc_modifier) for reply in replies)
            )
            result = OracleScore(
                item.item_id, list(scored), best_of(spec, [s.metrics for s in scored])
            )
            return items.score(
                result.metrics,  # NaN marks undefined values
                answer=json.dumps([s.answer.fields if s.answer else None for s in scored]),
                explanation=f"best of {len(replies)} replies",
                metadata=result.to_json(),
            )

        return score

    return build()
