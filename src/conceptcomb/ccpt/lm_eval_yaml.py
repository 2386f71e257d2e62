"""CCPT's lm-eval YAML: a template per kind of task (emergent, canceled, type prediction)
and one for the multi-oracle, a leaf per task, the ``ccpt`` group."""

from __future__ import annotations

import sys
from pathlib import Path

from conceptcomb.ccpt.methods.oracle import (
    ORACLE_N,
    ORACLE_TEMPERATURE,
    ORACLE_TOP_P,
    oracle_metric_infos,
)
from conceptcomb.ccpt.metrics import metric_infos
from conceptcomb.ccpt.tasks import (
    GROUP_NAME,
    PI_CANCELED,
    TYPE_PREDICTION,
    CcptTaskSpec,
    all_specs,
    default_specs,
    lm_eval_method_specs,
    task_version,
)
from conceptcomb.frameworks import lm_eval_yaml
from conceptcomb.frameworks.lm_eval_yaml import Function, Group, Leaf, TaskYaml, Template

YAML_DIR = Path(__file__).parent / "task_yaml"
HOOKS = "conceptcomb.ccpt.lm_eval_hooks"
METHOD_HOOKS = "conceptcomb.ccpt.methods.lm_eval_hooks"
BASE = "_ccpt_template_yaml"
ORACLE = "_ccpt_oracle_yaml"

# Shared by every CCPT task.
BASE_TEMPLATE = Template(
    BASE,
    lm_eval_yaml.hooked(
        HOOKS,
        {"output_type": "generate_until", "num_fewshot": 0, "description": "system_prompt"}
        | {"doc_to_text": "prompt", "doc_to_target": "target"},
        {"metadata": {"version": float(task_version())}},
    ),
    comments={
        "description": "The system prompt (paper Table 9) and the user prompt are rendered by "
        "conceptcomb.ccpt.prompts."
    },
)
# Multi-oracle (appendix B.1): N sampled replies per item, the best values under their own
# names. Its leaves spell out the sampling and the metrics.
ORACLE_TEMPLATE = Template(
    ORACLE,
    {
        "custom_dataset": Function(f"{METHOD_HOOKS}.load_dataset"),
        "filter_list": [
            {
                "name": "oracle",
                "filter": [{"function": Function(f"{METHOD_HOOKS}.OracleJudgeFilter")}],
            }
        ],
        "process_results": Function(f"{METHOD_HOOKS}.process_oracle_results"),
    },
    include=BASE,
)


def _kind(spec: CcptTaskSpec) -> str:
    """Tasks of one kind report the same metrics: emergence E, cancellation C, or types."""
    if spec.kind == TYPE_PREDICTION:
        return "_ccpt_tp_yaml"
    return "_ccpt_canceled_yaml" if spec.kind == PI_CANCELED else "_ccpt_emergent_yaml"


def _template(spec: CcptTaskSpec) -> Template:
    keys: dict = {
        "generation_kwargs": {"until": [], "max_gen_toks": spec.max_tokens, "do_sample": False}
    }
    if spec.generative:
        judge = Function(f"{HOOKS}.JudgeFilter")
        keys["filter_list"] = [{"name": "judged", "filter": [{"function": judge}]}]
    keys["metric_list"] = lm_eval_yaml.metric_list(metric_infos(spec))
    return Template(_kind(spec), keys, include=BASE)


def tags(spec: CcptTaskSpec) -> tuple[str, ...]:
    """The lm-eval tag of a variant: the ``ccpt`` group's tasks in that variant (``ccpt_cot``,
    ``ccpt_full``, ``ccpt_full_cot``, ``ccpt_oracle``, ``ccpt_sa_conceptnet_nofilter``); the
    group's own tasks (test items, base prompts) carry none."""
    variant = spec.name.removeprefix(f"ccpt_{spec.kind}")
    return (f"ccpt{variant}",) if variant else ()


def _method_leaf(spec: CcptTaskSpec) -> Leaf:
    if not spec.oracle:
        # Spreading activation without filter: C_T is computed when the dataset is built.
        keys = {"custom_dataset": Function(f"{METHOD_HOOKS}.load_dataset")}
        return Leaf(spec.name, _kind(spec), keys, tags(spec))
    sampling = {"do_sample": True, "temperature": ORACLE_TEMPERATURE, "top_p": ORACLE_TOP_P}
    keys = {
        "generation_kwargs": {"until": [], "max_gen_toks": spec.max_tokens, **sampling},
        "repeats": ORACLE_N,
        "metric_list": lm_eval_yaml.metric_list(oracle_metric_infos(spec)),
    }
    return Leaf(spec.name, ORACLE, keys, tags(spec))


def declaration() -> TaskYaml:
    specs = all_specs()
    templates = [BASE_TEMPLATE, *lm_eval_yaml.one_per_kind(map(_template, specs)), ORACLE_TEMPLATE]
    leaves = [Leaf(spec.name, _kind(spec), tags=tags(spec)) for spec in specs]
    leaves += [_method_leaf(spec) for spec in lm_eval_method_specs()]
    group = Group(GROUP_NAME, [s.name for s in default_specs()], {"version": float(task_version())})
    return TaskYaml("conceptcomb.ccpt.lm_eval_yaml", templates, leaves, "ccpt_task", [group])


_COMMANDS = lm_eval_yaml.Commands(declaration, YAML_DIR)
render_all, stale_files, main = _COMMANDS.render_all, _COMMANDS.stale_files, _COMMANDS.main

if __name__ == "__main__":
    sys.exit(main())
