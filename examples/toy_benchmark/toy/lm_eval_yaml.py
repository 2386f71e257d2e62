"""The toy's lm-eval YAML: one template (every task is of one kind), a leaf per spec.

Written to ``task_yaml/`` by ``python -m conceptcomb.frameworks.task_files`` (with the
Inspect tasks) or ``python -m conceptcomb.toy.lm_eval_yaml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conceptcomb.frameworks import lm_eval_yaml
from conceptcomb.frameworks.lm_eval_yaml import Leaf, TaskYaml, Template
from conceptcomb.toy.metrics import metric_infos
from conceptcomb.toy.tasks import all_specs

YAML_DIR = Path(__file__).parent / "task_yaml"
HOOKS = "conceptcomb.toy.lm_eval_hooks"
TEMPLATE = "_toy_yaml"


def declaration() -> TaskYaml:
    keys = lm_eval_yaml.hooked(
        HOOKS,
        {"output_type": "generate_until", "doc_to_text": "prompt", "doc_to_target": "target"},
        {
            "generation_kwargs": {"until": ["\n"], "max_gen_toks": 8, "do_sample": False},
            "metric_list": lm_eval_yaml.metric_list(metric_infos()),
            "metadata": {"version": 1.0},
        },
    )
    leaves = [Leaf(spec.name, TEMPLATE) for spec in all_specs()]
    return TaskYaml("conceptcomb.toy.lm_eval_yaml", [Template(TEMPLATE, keys)], leaves, "toy_task")


main = lm_eval_yaml.Commands(declaration, YAML_DIR).main

if __name__ == "__main__":
    sys.exit(main())
