"""CCPT items -> docs: every item of a task with its prompts and target, for both frameworks.

`task_docs` is the one items -> docs function: lm-eval's dataset hooks take its docs and add
their own fields (the NPC modifier rule, the judge settings; the spreading-activation trace
as a JSON string for Arrow), Inspect makes a sample of each (`sample_parts`: the system and
user prompts as its input, the target, the rest as metadata). So both frameworks send the
same prompts and keep the same fields, in the same order (lm-eval hashes docs as they are).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.methods.oracle import base_spec
from conceptcomb.ccpt.methods.spreading import (
    ConceptGraph,
    SaSettings,
    SaTrace,
    load_graph,
    offline_trace,
)
from conceptcomb.ccpt.methods.spreading_prompts import sa_user_prompt
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, target_of, user_prompt
from conceptcomb.ccpt.tasks import CcptTaskSpec, spec_by_name
from conceptcomb.common.collector import collector_paused

# What a doc holds beyond the item, the task and its method's fields: Inspect's sample
# takes these as its input and target rather than as metadata.
PROMPT_FIELDS = ("system_prompt", "prompt", "target")
# Spreading activation with the model: the solver computes C_T, the input shows the template.
C_T_PLACEHOLDER = "<C_T>"


def make_doc(spec: CcptTaskSpec, item: CcptItem, prompt: str, **extra: Any) -> dict[str, Any]:
    """One item as a doc: its fields, the task, the prompts and the target."""
    return {
        **item.as_doc(),
        "task": spec.name,
        "system_prompt": SYSTEM_PROMPT,
        "prompt": prompt,
        "target": target_of(spec, item),
        **extra,
    }


@collector_paused()  # a large build (common.collector)
def task_docs(
    spec: CcptTaskSpec, items: list[CcptItem], options: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The docs of a task's items. ``options`` (lm-eval's --metadata, Inspect's -T) set the
    spreading activation (``sa_*``) and where its graph is (``data_dir``).

    The oracle asks the base prompt; spreading activation without the model knows C_T
    before generation (computed here from the graph, the trace kept in the doc), with the
    model only the solver does (the prompt holds a placeholder)."""
    if spec.oracle:
        return [make_doc(spec, item, user_prompt(base_spec(spec), item)) for item in items]
    if not spec.spreading:
        return [make_doc(spec, item, user_prompt(spec, item)) for item in items]
    if spec.needs_model_during_activation:
        placeholder = [C_T_PLACEHOLDER]
        return [make_doc(spec, item, sa_user_prompt(spec, item, placeholder)) for item in items]
    options = options or {}
    settings = SaSettings.for_spec(spec, options)
    graph = load_graph(settings.graph, options.get("data_dir"))
    docs = []
    for item in items:
        trace = copy.deepcopy(_offline_trace(spec, item, settings, graph))
        prompt = sa_user_prompt(spec, item, trace.relevant)
        extra = {"relevant_concepts": trace.relevant, "spreading_activation": trace.to_json()}
        docs.append(make_doc(spec, item, prompt, **extra))
    return docs


# An item's graph-only trace, computed once per process: lm-eval's and Inspect's builds of
# a task (a run's, a bundle's evidence) compute the same ones, ~15 ms an item. The graph
# hashes by identity (`load_graph` keeps one per file). Callers get a deep copy to change.
@lru_cache(maxsize=4096)
def _offline_trace(
    spec: CcptTaskSpec, item: CcptItem, settings: SaSettings, graph: ConceptGraph
) -> SaTrace:
    return offline_trace(spec, item, settings, graph)


def sample_parts(doc: dict[str, Any]) -> tuple[str, str, str, dict[str, Any]]:
    """(system prompt, user prompt, target, metadata) of a doc: an Inspect sample's parts."""
    metadata = {key: value for key, value in doc.items() if key not in PROMPT_FIELDS}
    return doc["system_prompt"], doc["prompt"], doc["target"], metadata


def chat_messages(
    task: str, doc: Mapping[str, Any], options: Mapping[str, Any] | None = None
) -> list[tuple[str, str]] | None:
    """The chat the task sends for a doc, as both frameworks send it: the system prompt
    (Table 9), then the user prompt. The doc's own prompts where it carries them (lm-eval's
    docs), else rendered from its item fields (Inspect's sample metadata, the JSONL lines of
    `conceptcomb score`); None for spreading activation whose concepts the doc lacks (with
    the model, the solver finds them during the run)."""
    if isinstance(doc.get("prompt"), str) and isinstance(doc.get("system_prompt"), str):
        return [("system", doc["system_prompt"]), ("user", doc["prompt"])]
    spec = spec_by_name(task)
    item = CcptItem.from_doc(dict(doc))
    if spec.spreading:
        relevant = doc.get("relevant_concepts")
        if not isinstance(relevant, list):
            return None
        prompt = sa_user_prompt(spec, item, [str(concept) for concept in relevant])
    else:
        prompt = user_prompt(base_spec(spec) if spec.oracle else spec, item)
    return [("system", SYSTEM_PROMPT), ("user", prompt)]
