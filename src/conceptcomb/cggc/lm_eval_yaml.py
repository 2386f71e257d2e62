"""CGGC's lm-eval YAML: a template per prompt style, each extended by its relation-verified
kind (section 5.3), a leaf per task, the ``cggc`` group."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from conceptcomb.cggc.metrics import METRICS
from conceptcomb.cggc.prompts import MAX_NEW_TOKENS
from conceptcomb.cggc.tasks import (
    DEFAULT_K,
    FIG4_GROUP,
    GROUP_NAME,
    TABLE6_GROUP,
    CggcTaskSpec,
    all_specs,
    fig4_specs,
    table6_specs,
    task_version,
    verified_specs,
)
from conceptcomb.cggc.verification import SUFFIX, VERIFIED_SHARE, VERIFIER_FAILURES
from conceptcomb.common.contract import MetricInfo
from conceptcomb.frameworks import lm_eval_yaml
from conceptcomb.frameworks.lm_eval_yaml import FlowList, Function, Group, Leaf, TaskYaml, Template

YAML_DIR = Path(__file__).parent / "task_yaml"
HOOKS = "conceptcomb.cggc.lm_eval_hooks"
VERIFY_HOOKS = "conceptcomb.cggc.verify_hooks"
BASE = "_cggc_template_yaml"

# Shared by every CGGC task.
BASE_TEMPLATE = Template(
    BASE,
    lm_eval_yaml.hooked(
        HOOKS,
        {
            "fewshot_split": "demonstrations",
            "output_type": "generate_until",
            "num_fewshot": DEFAULT_K,
            "fewshot_config": {"sampler": Function(f"{HOOKS}.CggcSampler")},
            "description": "instruction",
            "doc_to_text": "prompt",
            "doc_to_target": "target",
            "target_delimiter": " ",
        },
        {"metadata": {"version": float(task_version())}},
    ),
    comments={
        "fewshot_split": "Candidates: the pool (ood) or the other test items (id).",
        "description": "The instruction and each item's block are rendered by "
        "conceptcomb.cggc.prompts.",
    },
)
# Relation verification (section 5.3): a judge answers one yes/no question per edge, and
# every metric is reported again on the verified graphs.
VERIFIED_INFOS = [
    *METRICS,
    *(replace(info, name=info.name + SUFFIX) for info in METRICS),
    MetricInfo(VERIFIED_SHARE, True, "mean"),
    MetricInfo(VERIFIER_FAILURES, False, "sum"),
]


def _corpus(info: MetricInfo) -> str:
    return f"{HOOKS}.agg_{info.name.removesuffix(SUFFIX)}"


def _kind(spec: CggcTaskSpec) -> str:
    """A prompt style (delimiters, stop sequences), with or without relation verification."""
    return f"_cggc_{spec.style}{'_verified' if spec.verify else ''}_yaml"


def tags(spec: CggcTaskSpec) -> tuple[str, ...]:
    """The lm-eval tags of a task's variant families: ``cggc_script`` (the authors' released
    prompt layout), ``cggc_verified`` (relation verification, section 5.3), ``cggc_order``
    (Table 7 "order": easy-to-hard, hard-to-easy) and ``cggc_level`` (Table 7 "level": all
    demonstrations of one structure type)."""
    found = []
    if spec.style == "script":
        found.append("cggc_script")
    if spec.verify:
        found.append("cggc_verified")
    elif spec.order != "random":
        found.append("cggc_order")
    if spec.structure is not None:
        found.append("cggc_level")
    return tuple(found)


def _template(spec: CggcTaskSpec) -> Template:
    if spec.verify:
        keys = {
            "custom_dataset": Function(f"{VERIFY_HOOKS}.load_dataset"),
            "filter_list": [
                {
                    "name": "verified",
                    "filter": [{"function": Function(f"{VERIFY_HOOKS}.VerifyFilter")}],
                }
            ],
            "process_results": Function(f"{VERIFY_HOOKS}.process_results"),
            "metric_list": lm_eval_yaml.metric_list(VERIFIED_INFOS, _corpus),
        }
        return Template(_kind(spec), keys, include=_kind(replace(spec, verify=False)))
    style = spec.prompt_style
    keys = {
        "fewshot_delimiter": style.fewshot_delimiter,
        "generation_kwargs": {
            "until": FlowList(style.until),
            "max_gen_toks": MAX_NEW_TOKENS,
            "do_sample": False,
        },
        "metric_list": lm_eval_yaml.metric_list(METRICS, _corpus),
    }
    return Template(_kind(spec), keys, include=BASE)


def declaration() -> TaskYaml:
    specs = [*all_specs(), *verified_specs()]
    plain = [replace(spec, verify=False) for spec in specs]  # a verified kind extends its style
    kinds = lm_eval_yaml.one_per_kind(map(_template, [*plain, *specs]))
    leaves = [Leaf(spec.name, _kind(spec), tags=tags(spec)) for spec in specs]
    version = {"version": float(task_version())}
    groups = [
        Group(GROUP_NAME, ["cggc_id", "cggc_ood"], version),
        Group(TABLE6_GROUP, [spec.name for spec in table6_specs()], version),
        Group(FIG4_GROUP, [spec.name for spec in fig4_specs()], version),
    ]
    return TaskYaml(
        "conceptcomb.cggc.lm_eval_yaml", [BASE_TEMPLATE, *kinds], leaves, "cggc_task", groups
    )


_COMMANDS = lm_eval_yaml.Commands(declaration, YAML_DIR)
render_all, stale_files, main = _COMMANDS.render_all, _COMMANDS.stale_files, _COMMANDS.main

if __name__ == "__main__":
    sys.exit(main())
