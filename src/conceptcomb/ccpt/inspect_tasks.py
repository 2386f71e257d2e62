"""Inspect adapter for CCPT: ``inspect eval conceptcomb/ccpt_pi_emergent`` and friends.

Every task takes ``-T data_dir=...`` and the judge options
(`conceptcomb.frameworks.inspect_tasks.JudgeOptions`: ``-T judge=local`` ...), which
describe the judge, an Inspect model in the ``grader`` role (`conceptcomb.scorers.
inspect_judge`); ``--model-role grader=MODEL`` names any Inspect model instead. ``-T
npc_modifier=surface`` judges a noun phrase completion's modifier as written instead of
its lemma (the paper's rule, `conceptcomb.ccpt.modifiers`); other tasks accept and ignore it.

The paper's methods (`sa_task`, `oracle_task`): ``ccpt_<kind>_sa_llm`` / ``_sa_conceptnet`` /
``_sa_both`` / ``_sa_conceptnet_nofilter`` take ``-T sa_iterations=5 -T sa_epsilon=0.1
-T sa_seed=0 -T sa_graph=ccpt|cn100k|ccpt+cn100k``; ``ccpt_<kind>_oracle`` takes
``-T oracle_n=5``.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Task, task
from typing_extensions import Unpack

from conceptcomb.ccpt.inspect_adapter import (
    CcptOptions,
    OracleOptions,
    SaOptions,
    ccpt_task,
    oracle_task,
    sa_task,
)
from conceptcomb.ccpt.tasks import all_specs, method_specs

# One @task per task name, each a call into a builder of `inspect_adapter`.


@task
def ccpt_pi_emergent(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, emergent: base prompt, test items."""
    return ccpt_task("ccpt_pi_emergent", options)


@task
def ccpt_pi_emergent_cot(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, emergent: chain-of-thought prompt, test items."""
    return ccpt_task("ccpt_pi_emergent_cot", options)


@task
def ccpt_pi_emergent_full(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, emergent: base prompt, all items."""
    return ccpt_task("ccpt_pi_emergent_full", options)


@task
def ccpt_pi_emergent_full_cot(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, emergent: chain-of-thought prompt, all items."""
    return ccpt_task("ccpt_pi_emergent_full_cot", options)


@task
def ccpt_pi_canceled(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, canceled: base prompt, test items."""
    return ccpt_task("ccpt_pi_canceled", options)


@task
def ccpt_pi_canceled_cot(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, canceled: chain-of-thought prompt, test items."""
    return ccpt_task("ccpt_pi_canceled_cot", options)


@task
def ccpt_pi_canceled_full(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, canceled: base prompt, all items."""
    return ccpt_task("ccpt_pi_canceled_full", options)


@task
def ccpt_pi_canceled_full_cot(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property induction, canceled: chain-of-thought prompt, all items."""
    return ccpt_task("ccpt_pi_canceled_full_cot", options)


@task
def ccpt_npc_emergent(**options: Unpack[CcptOptions]) -> Task:
    """CCPT noun phrase completion: base prompt, test items."""
    return ccpt_task("ccpt_npc_emergent", options)


@task
def ccpt_npc_emergent_cot(**options: Unpack[CcptOptions]) -> Task:
    """CCPT noun phrase completion: chain-of-thought prompt, test items."""
    return ccpt_task("ccpt_npc_emergent_cot", options)


@task
def ccpt_npc_emergent_full(**options: Unpack[CcptOptions]) -> Task:
    """CCPT noun phrase completion: base prompt, all items."""
    return ccpt_task("ccpt_npc_emergent_full", options)


@task
def ccpt_npc_emergent_full_cot(**options: Unpack[CcptOptions]) -> Task:
    """CCPT noun phrase completion: chain-of-thought prompt, all items."""
    return ccpt_task("ccpt_npc_emergent_full_cot", options)


@task
def ccpt_tp(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property type prediction: base prompt, test items."""
    return ccpt_task("ccpt_tp", options)


@task
def ccpt_tp_full(**options: Unpack[CcptOptions]) -> Task:
    """CCPT property type prediction: base prompt, all items."""
    return ccpt_task("ccpt_tp_full", options)


@task
def ccpt_pi_emergent_sa_llm(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, emergent: spreading activation by the model."""
    return sa_task("ccpt_pi_emergent_sa_llm", options)


@task
def ccpt_pi_emergent_sa_conceptnet(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, emergent: ConceptNet spreading activation, model filter."""
    return sa_task("ccpt_pi_emergent_sa_conceptnet", options)


@task
def ccpt_pi_emergent_sa_both(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, emergent: spreading activation by the model and ConceptNet."""
    return sa_task("ccpt_pi_emergent_sa_both", options)


@task
def ccpt_pi_emergent_sa_conceptnet_nofilter(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, emergent: spreading activation on ConceptNet, no filter."""
    return sa_task("ccpt_pi_emergent_sa_conceptnet_nofilter", options)


@task
def ccpt_pi_emergent_oracle(**options: Unpack[OracleOptions]) -> Task:
    """CCPT property induction, emergent: multi-oracle, best of N replies."""
    return oracle_task("ccpt_pi_emergent_oracle", options)


@task
def ccpt_pi_canceled_sa_llm(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, canceled: spreading activation by the model."""
    return sa_task("ccpt_pi_canceled_sa_llm", options)


@task
def ccpt_pi_canceled_sa_conceptnet(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, canceled: ConceptNet spreading activation, model filter."""
    return sa_task("ccpt_pi_canceled_sa_conceptnet", options)


@task
def ccpt_pi_canceled_sa_both(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, canceled: spreading activation by the model and ConceptNet."""
    return sa_task("ccpt_pi_canceled_sa_both", options)


@task
def ccpt_pi_canceled_sa_conceptnet_nofilter(**options: Unpack[SaOptions]) -> Task:
    """CCPT property induction, canceled: spreading activation on ConceptNet, no filter."""
    return sa_task("ccpt_pi_canceled_sa_conceptnet_nofilter", options)


@task
def ccpt_pi_canceled_oracle(**options: Unpack[OracleOptions]) -> Task:
    """CCPT property induction, canceled: multi-oracle, best of N replies."""
    return oracle_task("ccpt_pi_canceled_oracle", options)


@task
def ccpt_npc_emergent_sa_llm(**options: Unpack[SaOptions]) -> Task:
    """CCPT noun phrase completion: spreading activation by the model."""
    return sa_task("ccpt_npc_emergent_sa_llm", options)


@task
def ccpt_npc_emergent_sa_conceptnet(**options: Unpack[SaOptions]) -> Task:
    """CCPT noun phrase completion: ConceptNet spreading activation, model filter."""
    return sa_task("ccpt_npc_emergent_sa_conceptnet", options)


@task
def ccpt_npc_emergent_sa_both(**options: Unpack[SaOptions]) -> Task:
    """CCPT noun phrase completion: spreading activation by the model and ConceptNet."""
    return sa_task("ccpt_npc_emergent_sa_both", options)


@task
def ccpt_npc_emergent_sa_conceptnet_nofilter(**options: Unpack[SaOptions]) -> Task:
    """CCPT noun phrase completion: spreading activation on ConceptNet, no filter."""
    return sa_task("ccpt_npc_emergent_sa_conceptnet_nofilter", options)


@task
def ccpt_npc_emergent_oracle(**options: Unpack[OracleOptions]) -> Task:
    """CCPT noun phrase completion: multi-oracle, best of N replies."""
    return oracle_task("ccpt_npc_emergent_oracle", options)


# Every task by name, from the functions above (a task missing its function fails here).
TASKS: dict[str, Callable[..., Task]] = {
    spec.name: globals()[spec.name] for spec in [*all_specs(), *method_specs()]
}
