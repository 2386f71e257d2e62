"""CCPT: conceptual combination with property type (Song et al., NAACL 2025)."""

# The @task functions, exported (written by `python -m conceptcomb.frameworks.task_files`):
# on first use, so that importing the benchmark does not import Inspect.
__all__ = [
    "ccpt_npc_emergent",
    "ccpt_npc_emergent_cot",
    "ccpt_npc_emergent_full",
    "ccpt_npc_emergent_full_cot",
    "ccpt_npc_emergent_oracle",
    "ccpt_npc_emergent_sa_both",
    "ccpt_npc_emergent_sa_conceptnet",
    "ccpt_npc_emergent_sa_conceptnet_nofilter",
    "ccpt_npc_emergent_sa_llm",
    "ccpt_pi_canceled",
    "ccpt_pi_canceled_cot",
    "ccpt_pi_canceled_full",
    "ccpt_pi_canceled_full_cot",
    "ccpt_pi_canceled_oracle",
    "ccpt_pi_canceled_sa_both",
    "ccpt_pi_canceled_sa_conceptnet",
    "ccpt_pi_canceled_sa_conceptnet_nofilter",
    "ccpt_pi_canceled_sa_llm",
    "ccpt_pi_emergent",
    "ccpt_pi_emergent_cot",
    "ccpt_pi_emergent_full",
    "ccpt_pi_emergent_full_cot",
    "ccpt_pi_emergent_oracle",
    "ccpt_pi_emergent_sa_both",
    "ccpt_pi_emergent_sa_conceptnet",
    "ccpt_pi_emergent_sa_conceptnet_nofilter",
    "ccpt_pi_emergent_sa_llm",
    "ccpt_tp",
    "ccpt_tp_full",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        from conceptcomb.ccpt import inspect_tasks

        return getattr(inspect_tasks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
