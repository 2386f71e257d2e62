"""AbsPyramid's lm-eval YAML: log-likelihood, detection and generation templates, CoT and
10-shot ICL extending detection, CoT + 10-shot extending ICL, a leaf per task, the
``abspyramid`` group."""

from __future__ import annotations

import sys
from pathlib import Path

from conceptcomb.abspyramid.metrics import metric_infos
from conceptcomb.abspyramid.prompts import ANSWERS
from conceptcomb.abspyramid.tasks import (
    COT,
    DETECTION,
    GROUP_NAME,
    ICL,
    ICL_COT,
    ICL_SHOTS,
    ZERO_SHOT,
    AbsTaskSpec,
    all_specs,
    default_specs,
    task_version,
)
from conceptcomb.common.contract import MetricInfo
from conceptcomb.frameworks import lm_eval_yaml
from conceptcomb.frameworks.lm_eval_yaml import (
    FlowList,
    Function,
    Group,
    Leaf,
    TaskYaml,
    Template,
)

YAML_DIR = Path(__file__).parent / "task_yaml"
HOOKS = "conceptcomb.abspyramid.lm_eval_hooks"
BASE = "_abspyramid_base_yaml"

# Shared by every task.
BASE_TEMPLATE = Template(
    BASE,
    lm_eval_yaml.hooked(
        HOOKS, {"doc_to_target": "answer"}, {"metadata": {"version": float(task_version())}}
    ),
)
# 10-shot: the instruction as description (system message with --apply_chat_template), then
# each doc's own demonstrations as question / answer turns, then the doc's query (its
# question; for CoT + 10-shot followed by the CoT steps).
ICL_KEYS = {
    "class": Function(f"{HOOKS}.InContextTask"),
    "description": "{{instruction}}\n\n",
    "doc_to_text": "query",
    "target_delimiter": " ",
    "fewshot_delimiter": "\n\n",
    "fewshot_split": "test",
    "num_fewshot": ICL_SHOTS,
    "fewshot_config": {"sampler": Function(f"{HOOKS}.DemoSampler"), "doc_to_text": "question"},
}
COMMENTS = {
    "doc_to_choice": "Log-likelihood of the answers after the zero-shot prompt "
    "(choice index = label).",
    "generation_kwargs": "No stop sequence: generation keeps the first non-empty line, "
    "detection the first Yes/No\n(the last one after reasoning), both read from the whole reply.",
    "class": "The instruction as a chat's system message without the trailing few-shot delimiter "
    "that\nthe plain-text layout needs after it (lm-eval joins the two with nothing between).",
    "description": "lm-eval renders a description with no separator after it: add the few-shot "
    "delimiter.",
    "fewshot_config": "Each doc carries its own 10 demonstrations (drawn per item, --metadata "
    "seed); they show\nthe bare question and answer, the doc its query.",
}


def _kind(spec: AbsTaskSpec) -> str:
    if not spec.generative:
        return "_abspyramid_ll_yaml"
    if spec.method in (COT, ICL, ICL_COT):
        return f"_abspyramid_{spec.method}_yaml"
    # Zero-shot detection (both prompts) or generation, rendered whole by prompts.py.
    return "_abspyramid_det_yaml" if spec.kind == DETECTION else "_abspyramid_gen_yaml"


def _parent(spec: AbsTaskSpec) -> str:
    """CoT and ICL detection extend zero-shot detection (its metrics, ICL its budget); CoT +
    10-shot extends ICL (its layout) with the CoT budget."""
    if spec.method == ICL_COT:
        return _kind(AbsTaskSpec(spec.kind, spec.relation, ICL))
    if spec.generative and spec.method in (COT, ICL):
        return _kind(AbsTaskSpec(spec.kind, spec.relation, ZERO_SHOT))
    return BASE


def _corpus(info: MetricInfo) -> str:
    return f"{HOOKS}.{info.name}"  # macro_f1, auc, bleu1, ...: the hook of the same name


def tags(spec: AbsTaskSpec) -> tuple[str, ...]:
    """The lm-eval tag of a task's method: its four relations (noun, verb, event, all) in that
    method, ``abspyramid_<ll|zs|cot|icl|icl_cot|nli|nli_cot>`` for detection (``ll``:
    log-likelihood of Yes/No) and ``abspyramid_gen`` for generation."""
    if spec.kind != DETECTION:
        return ("abspyramid_gen",)
    variant = spec.name.removeprefix(f"abspyramid_det_{spec.relation}")
    return (f"abspyramid{variant or '_ll'}",)


def _template(spec: AbsTaskSpec) -> Template:
    if spec.generative:
        keys: dict = {"output_type": "generate_until", "num_fewshot": 0, "doc_to_text": "prompt"}
        keys |= ICL_KEYS if spec.in_context else {}
        keys["generation_kwargs"] = {
            "until": [],
            "max_gen_toks": spec.max_tokens,
            "do_sample": False,
        }
    else:
        keys = {
            "output_type": "multiple_choice",
            "num_fewshot": 0,
            "doc_to_text": "prompt",
            "doc_to_choice": FlowList(ANSWERS),
            "doc_to_target": "label",
        }
    keys["metric_list"] = lm_eval_yaml.metric_list(metric_infos(spec), _corpus)
    return Template(_kind(spec), keys, include=_parent(spec), comments=COMMENTS)


def declaration() -> TaskYaml:
    specs = all_specs()
    kinds = map(_template, specs)
    leaves = [Leaf(spec.name, _kind(spec), tags=tags(spec)) for spec in specs]
    group = Group(GROUP_NAME, [s.name for s in default_specs()], {"version": float(task_version())})
    return TaskYaml(
        "conceptcomb.abspyramid.lm_eval_yaml",
        [BASE_TEMPLATE, *lm_eval_yaml.one_per_kind(kinds)],
        leaves,
        "abspyramid_task",
        [group],
    )


_COMMANDS = lm_eval_yaml.Commands(declaration, YAML_DIR)
render_all, stale_files, main = _COMMANDS.render_all, _COMMANDS.stale_files, _COMMANDS.main

if __name__ == "__main__":
    sys.exit(main())
