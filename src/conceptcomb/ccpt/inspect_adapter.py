"""Inspect adapter for CCPT: ``inspect eval conceptcomb/ccpt_pi_emergent`` and friends.

Here: builders, datasets, scorers; the `@task` functions: `conceptcomb.ccpt.inspect_tasks`,
written from ``INSPECT`` (below) by ``python -m conceptcomb.frameworks.task_files``.

Every task takes ``-T data_dir=...`` and the judge options
(`conceptcomb.frameworks.inspect_tasks.JudgeOptions`: ``-T judge=local`` ...), which
describe the judge, an Inspect model in the ``grader`` role (`conceptcomb.scorers.
inspect_judge`); ``--model-role grader=MODEL`` names any Inspect model instead. ``-T
npc_modifier=surface`` judges a noun phrase completion's modifier as written instead of
its lemma (the paper's rule, `conceptcomb.ccpt.modifiers`); other tasks accept and ignore it.

The paper's methods (`sa_task`, `oracle_task`): ``ccpt_<kind>_sa_llm`` / ``_sa_conceptnet`` /
``_sa_both`` / ``_sa_conceptnet_nofilter`` take ``-T sa_iterations=5 -T sa_epsilon=0.1
-T sa_seed=0 -T sa_graph=ccpt|cn100k|ccpt+cn100k``; ``ccpt_<kind>_oracle`` takes
``-T oracle_n=5``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.docs import sample_parts, task_docs
from conceptcomb.ccpt.methods.inspect_solvers import oracle_scorer, sample_n, spreading_activation
from conceptcomb.ccpt.methods.oracle import (
    ORACLE_N,
    ORACLE_TEMPERATURE,
    ORACLE_TOP_P,
    oracle_metric_infos,
)
from conceptcomb.ccpt.methods.spreading import SaSettings, load_graph
from conceptcomb.ccpt.metrics import CONFUSION_KEYS, metric_infos
from conceptcomb.ccpt.modifiers import OPTION, task_rule
from conceptcomb.ccpt.scoring import ItemScore, plan_item, score_reply
from conceptcomb.ccpt.tasks import (
    NPC_EMERGENT,
    CcptTaskSpec,
    all_specs,
    headline_metric,
    method_specs,
    spec_by_name,
    task_version,
)
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.inspect_internals import register_scorer
from conceptcomb.frameworks.inspect_tasks import (
    ItemMetrics,
    JudgeOptions,
    SampleColumns,
    build_task,
    chat,
    check_options,
    judge_settings,
)
from conceptcomb.frameworks.task_files import InspectTasks, TaskStub
from conceptcomb.scorers.inspect_judge import InspectSessions, chosen_options, preflight_setup
from conceptcomb.scorers.judge_settings import JudgeSettings


class CcptOptions(JudgeOptions, total=False):
    """The ``-T`` options of every CCPT task."""

    data_dir: str | None
    """The CCPT data folder (default: the packaged or fetched data)."""
    npc_modifier: str | None
    """``lemma`` (the paper's rule) or ``surface``: how an NPC modifier is judged."""


class SaOptions(CcptOptions, total=False):
    """A spreading-activation task's options: Algorithm 1's settings (paper's defaults)."""

    sa_iterations: int | None
    """Iterations T (5)."""
    sa_epsilon: float | None
    """Jaccard distance below which the concept set has converged (0.1)."""
    sa_seed: int | None
    """Seed of the sampled neighbours (0)."""
    sa_graph: str | None
    """``ccpt``, ``cn100k`` or ``ccpt+cn100k`` (``ccpt``)."""


class OracleOptions(CcptOptions, total=False):
    """A multi-oracle task's options."""

    oracle_n: int
    """Replies per item, the best of which counts (the paper's N, 5)."""


def ccpt_scorer(spec: CcptTaskSpec, sessions: InspectSessions | None, npc_modifier: str) -> Scorer:
    """Parse the reply, ask the judge (grader role or our judge), compute the item metrics."""
    # ccpt_tp's confusion-matrix cells are one metric (`conceptcomb.common.inspect_metrics.means`)
    infos = metric_infos(spec)
    items = ItemMetrics(infos, together=[i.name for i in infos if i.name in CONFUSION_KEYS])

    def to_score(result: ItemScore, reply: str) -> Score:
        return items.score(
            result.metrics,  # NaN marks undefined values; Inspect leaves them out
            answer=json.dumps(result.answer.fields) if result.answer else reply[-200:],
            explanation="; ".join(result.errors) or None,
            metadata=result.to_json(),
        )

    @scorer(metrics=items.metrics(), name="ccpt")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            item = CcptItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
            reply = state.output.completion
            if sessions is None:
                return to_score(plan_item(spec, item, reply, npc_modifier), reply)
            result = await score_reply(spec, item, reply, sessions.session(), npc_modifier)
            return to_score(result, reply)

        return score

    return build()


RESCORER = "ccpt_judge"


def ccpt_judge(task: str, npc_modifier: str | None = None) -> Scorer:
    """``inspect score LOG --scorer conceptcomb/ccpt_judge -S task=ccpt_pi_emergent
    --model-role grader=MODEL``: the scorer of a judged CCPT task (its metrics too), whose
    judge is the ``grader`` role only (``--model-role grader``, or the log's own): the same
    ratings and metrics as ``conceptcomb score`` of that log with that judge. ``-S
    npc_modifier=surface`` as the task's option (``lemma`` by default)."""
    spec = spec_by_name(task)
    if not spec.generative:
        raise ConfigError(f"{task} has no judge: its scorer needs none (-S task=...).")
    rule = task_rule(spec.kind, npc_modifier)
    settings = JudgeSettings.resolve({})  # the cache and decoding options (CONCEPTCOMB_JUDGE_*)
    sessions = InspectSessions(settings, required=f"conceptcomb/{RESCORER}")
    if spec.oracle:
        return oracle_scorer(spec, sessions, rule)
    return ccpt_scorer(spec, sessions, rule)


register_scorer(ccpt_judge, RESCORER)


@collector_paused()  # a large build (common.collector)
def samples(
    spec: CcptTaskSpec, items: list[CcptItem], options: Mapping[str, Any] | None = None
) -> list[Sample]:
    """A sample per doc of `conceptcomb.ccpt.docs.task_docs` (lm-eval's docs, the same
    prompts): the prompts as its input, the other fields as its metadata."""
    result = []
    for doc in task_docs(spec, items, options):
        system, prompt, target, metadata = sample_parts(doc)
        messages = chat([("system", system), ("user", prompt)])
        result.append(Sample(id=doc["item_id"], input=messages, target=target, metadata=metadata))
    return result


class _Setup:
    """What every CCPT task resolves from its options before loading anything."""

    def __init__(self, name: str, options: CcptOptions, accepted: type) -> None:
        check_options(name, options, accepted)
        self.spec = spec_by_name(name)
        self.data_dir = options.get("data_dir")
        self.rule = task_rule(self.spec.kind, options.get("npc_modifier"))
        self.settings = judge_settings(options, needs_judge=self.spec.generative)
        self.chosen = chosen_options(options)  # conflict with --model-role grader
        self.metadata: dict[str, object] = {
            "benchmark": "ccpt",
            "kind": self.spec.kind,
            "method": self.spec.method,
            "subset": self.spec.subset,
            **({OPTION: self.rule} if self.spec.kind == NPC_EMERGENT else {}),
        }

    def items(self) -> list[CcptItem]:
        return load_items(self.spec, self.data_dir)

    def sessions(self) -> InspectSessions:
        return InspectSessions(self.settings, self.spec.name, self.chosen)


def sample_columns(spec: CcptTaskSpec) -> SampleColumns:
    """CCPT in Inspect View's sample list: the item (its file and row), the prompt, the
    parsed answer (the property, or the noun phrase and modifier) and the judged E, R_HMP,
    R_NP (type prediction: accuracy; the multi-oracle: its best-of-N values). The property,
    its type and the judge's ratings: the sample's metadata (``property``, ``label``) and
    the score's (``judged``)."""
    builtins = ("sampleId", "input", "answer")
    if spec.oracle:
        return ItemMetrics(oracle_metric_infos(spec)).columns("ccpt_oracle", builtins=builtins)
    infos = metric_infos(spec)
    together = [i.name for i in infos if i.name in CONFUSION_KEYS]  # as `ccpt_scorer` groups
    return ItemMetrics(infos, together=together).columns("ccpt", builtins=builtins)


def ccpt_task(name: str, options: CcptOptions) -> Task:
    """A CCPT task as the paper runs it (base or chain-of-thought prompt)."""
    setup = _Setup(name, options, CcptOptions)
    spec, items = setup.spec, setup.items()
    sessions = setup.sessions() if spec.generative else None  # type prediction: no judge
    return build_task(
        spec.name,
        samples(spec, items),
        ccpt_scorer(spec, sessions, setup.rule),
        GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens),
        task_version(),
        setup.metadata,
        setup=preflight_setup(sessions),
        headline=headline_metric(spec.name),
        columns=sample_columns(spec),
    )


def sa_task(name: str, options: SaOptions) -> Task:
    """A spreading-activation task (section 4.1, Algorithm 1)."""
    setup = _Setup(name, options, SaOptions)
    spec, items, sessions = setup.spec, setup.items(), setup.sessions()
    sa = SaSettings.for_spec(spec, options)
    needs_model = spec.needs_model_during_activation
    graph = load_graph(sa.graph, setup.data_dir) if sa.use_graph and needs_model else None
    return build_task(
        spec.name,
        samples(spec, items, options),
        ccpt_scorer(spec, sessions, setup.rule),
        # Greedy by default, activation and filter calls included.
        GenerateConfig(temperature=0.0, max_tokens=spec.max_tokens),
        task_version(),
        {**setup.metadata, "spreading_activation": sa.as_dict()},
        solver=spreading_activation(spec, sa, graph) if needs_model else None,
        setup=preflight_setup(sessions),
        headline=headline_metric(spec.name),
        columns=sample_columns(spec),
    )


def oracle_task(name: str, options: OracleOptions) -> Task:
    """A multi-oracle task (section 4.1): the best of N sampled replies per item."""
    setup = _Setup(name, options, OracleOptions)
    oracle_n = int(options.get("oracle_n", ORACLE_N))
    if oracle_n < 1:
        raise ConfigError("oracle_n must be at least 1 (the paper's N is 5).")
    spec, items, sessions = setup.spec, setup.items(), setup.sessions()
    return build_task(
        spec.name,
        samples(spec, items),  # the base prompt (`task_docs`), under the oracle's name
        oracle_scorer(spec, sessions, setup.rule),
        # Appendix B.1: nucleus sampling with T = 0.7, p = 0.95.
        GenerateConfig(
            temperature=ORACLE_TEMPERATURE, top_p=ORACLE_TOP_P, max_tokens=spec.max_tokens
        ),
        task_version(),
        {**setup.metadata, "oracle_n": oracle_n},
        solver=sample_n(oracle_n),
        setup=preflight_setup(sessions),
        headline=headline_metric(spec.name),
        columns=sample_columns(spec),
    )


def _stub(spec: CcptTaskSpec) -> TaskStub:
    """A task's ``@task`` function: its builder and options follow from its method."""
    if spec.spreading:
        return TaskStub(spec.name, spec.describe() + ".", sa_task, SaOptions)
    if spec.oracle:
        return TaskStub(spec.name, spec.describe() + ".", oracle_task, OracleOptions)
    return TaskStub(spec.name, spec.describe() + ".", ccpt_task, CcptOptions)


# `conceptcomb.ccpt.inspect_tasks`: written by `python -m conceptcomb.frameworks.task_files`.
INSPECT = InspectTasks(lambda: [_stub(s) for s in [*all_specs(), *method_specs()]])
