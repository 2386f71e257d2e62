"""McRae's lm-eval YAML: one template (every task is of one kind) and a leaf per task."""

from __future__ import annotations

import sys
from pathlib import Path

from conceptcomb.frameworks import lm_eval_yaml
from conceptcomb.frameworks.lm_eval_yaml import Leaf, TaskYaml, Template
from conceptcomb.mcrae.data import CITATION, TERMS_OF_USE
from conceptcomb.mcrae.metrics import metric_infos
from conceptcomb.mcrae.tasks import McraeTaskSpec, all_specs, task_version

YAML_DIR = Path(__file__).parent / "task_yaml"
HOOKS = "conceptcomb.mcrae.lm_eval_hooks"
TEMPLATE = "_mcrae_template_yaml"


def _template(spec: McraeTaskSpec) -> Template:
    """Every McRae task is of one kind (same prompt, metrics and budget)."""
    generation = {"until": [], "max_gen_toks": spec.max_tokens, "do_sample": False}
    # The metadata lands in the results file's task config.
    metadata = {
        "version": float(task_version()),
        "terms_of_use": TERMS_OF_USE,
        "citation": CITATION,
    }
    keys = lm_eval_yaml.hooked(
        HOOKS,
        {
            "output_type": "generate_until",
            "num_fewshot": 0,
            "doc_to_text": "prompt",
            "doc_to_target": "target",
        },
        {
            "generation_kwargs": generation,
            "metric_list": lm_eval_yaml.metric_list(metric_infos()),
            "metadata": metadata,
        },
    )
    comments = {
        "doc_to_text": "The prompt is rendered by conceptcomb.mcrae.prompts (one user turn, "
        "no system prompt).",
        "generation_kwargs": 'No stop sequence: lm-eval\'s default ("\\n\\n") would cut a list '
        "at its first blank line.",
    }
    return Template(TEMPLATE, keys, comments=comments)


def declaration() -> TaskYaml:
    specs = all_specs()
    templates = lm_eval_yaml.one_per_kind(map(_template, specs))
    leaves = [Leaf(spec.name, TEMPLATE) for spec in specs]
    return TaskYaml("conceptcomb.mcrae.lm_eval_yaml", templates, leaves, "mcrae_task")


_COMMANDS = lm_eval_yaml.Commands(declaration, YAML_DIR)
render_all, stale_files, main = _COMMANDS.render_all, _COMMANDS.stale_files, _COMMANDS.main

if __name__ == "__main__":
    sys.exit(main())
