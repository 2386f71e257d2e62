"""Every prompt template of a benchmark, rendered, and the hashes a bundle records.

A template is found by what sends it, not by how it is named: each benchmark lists the
functions that build its prompts (the model's prompts of every task and method, the
spreading-activation prompts, the judge's and the verifier's prompts) and they are called
on placeholder items. The rendered texts cover every constant, f-string and join those
functions use, so changing any of them changes the hash; a test checks that every string
constant of the prompt modules shows up in some rendered text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

# Placeholder values the templates are rendered with.
CONCEPT, PROPERTY, HEAD, MODIFIER = "<concept>", "<property>", "<head>", "<modifier>"


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# --- the judges ------------------------------------------------------------------------------
def relevance_judge_templates() -> dict[str, str]:
    from conceptcomb.scorers.judges import RELEVANCE_SCHEMA
    from conceptcomb.scorers.relevance import relevance_prompt

    # The answer's schema too: with judge_response_format it constrains what the judge writes.
    return {
        "judge/relevance": relevance_prompt(CONCEPT, PROPERTY),
        "judge/relevance_schema": json.dumps(RELEVANCE_SCHEMA, sort_keys=True),
    }


def verifier_templates() -> dict[str, str]:
    from conceptcomb.cggc.relations import TEMPLATES
    from conceptcomb.cggc.verification import statement
    from conceptcomb.scorers.verification import VERDICT_SCHEMA, VerificationQuestion

    relations = [*TEMPLATES, "<OtherRelation>"]  # the last: the bare-triple statement
    templates = {
        f"verifier/{relation}": VerificationQuestion(
            "<sentence>", HEAD, relation, "<tail>", statement(HEAD, relation, "<tail>")
        ).prompt
        for relation in relations
    }
    return {**templates, "verifier/schema": json.dumps(VERDICT_SCHEMA, sort_keys=True)}


# --- the benchmarks --------------------------------------------------------------------------
def ccpt_templates() -> dict[str, str]:
    from conceptcomb.ccpt.data import CcptItem
    from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, target_of, user_prompt
    from conceptcomb.ccpt.sa_prompts import activation_prompt, filter_prompt, sa_user_prompt
    from conceptcomb.ccpt.spreading import objective
    from conceptcomb.ccpt.tasks import all_specs, method_specs

    item = CcptItem("<item>", "<noun phrase>", HEAD, MODIFIER, PROPERTY, "<type>", "<sentence>")
    texts = {"ccpt/system": SYSTEM_PROMPT}
    for spec in all_specs():
        texts[f"ccpt/{spec.name}"] = user_prompt(spec, item)
        texts[f"ccpt/{spec.name}/target"] = target_of(spec, item)
    for spec in method_specs():
        if spec.spreading:
            texts[f"ccpt/{spec.name}"] = sa_user_prompt(spec, item, ["<c1>", "<c2>"])
            texts[f"ccpt/{spec.name}/objective"] = str(objective(spec, item))
    texts["ccpt/sa_activation"] = activation_prompt(CONCEPT)
    texts["ccpt/sa_filter"] = filter_prompt(["<n1>", "<n2>"], "<objective>")
    return {**texts, **relevance_judge_templates()}


def mcrae_templates() -> dict[str, str]:
    from conceptcomb.mcrae.prompts import user_prompt

    return {"mcrae/user": user_prompt("<concept_(sense)>")}


def cggc_templates() -> dict[str, str]:
    from conceptcomb.cggc.data import CggcItem
    from conceptcomb.cggc.prompts import STYLES, chat_turns, plain_prompt

    def item(name: str) -> CggcItem:
        edges = ((f"/c/en/<{name}_a>", f"/c/en/<{name}_b>", "/r/AtLocation", "left"),)
        return CggcItem(f"<{name}>", "0", (f"<{name}_a>", f"<{name}_b>"), f"<{name}>", "", edges)

    texts = {}
    for name, style in STYLES.items():
        texts[f"cggc/{name}/plain"] = plain_prompt(item("item"), [item("demo")], style, 0)
        turns = chat_turns(item("item"), [item("demo")], style, 0)
        texts[f"cggc/{name}/chat"] = json.dumps(turns)
        texts[f"cggc/{name}/style"] = json.dumps([style.until, style.stop])
    return {**texts, **verifier_templates()}


def abspyramid_templates() -> dict[str, str]:
    from conceptcomb.abspyramid.data import DetectionItem, GenerationItem
    from conceptcomb.abspyramid.prompts import ANSWERS, detection_prompt, generation_prompt
    from conceptcomb.abspyramid.tasks import DETECTION, TYPES, all_specs

    event = "PersonX sees <instance> today"
    texts = {"abspyramid/answers": json.dumps(ANSWERS)}
    for spec in all_specs():
        if spec.kind != DETECTION:
            continue
        for kind in TYPES:
            item = DetectionItem("<item>", event, CONCEPT, 1, kind)
            texts[f"abspyramid/{spec.name}/{kind}"] = detection_prompt(spec, item)
    for kind in TYPES:
        texts[f"abspyramid/generation/{kind}"] = generation_prompt(
            GenerationItem("<item>", event, ("<reference>",), kind)
        )
    return texts


RENDERERS: dict[str, Callable[[], dict[str, str]]] = {
    "ccpt": ccpt_templates,
    "mcrae": mcrae_templates,
    "cggc": cggc_templates,
    "abspyramid": abspyramid_templates,
}


def rendered_templates(benchmark: str) -> dict[str, str]:
    """Name -> rendered text of every template a benchmark's tasks and judges use."""
    return RENDERERS[benchmark]()


def templates_sha256(benchmark: str) -> str:
    return _digest(rendered_templates(benchmark))


def judge_prompt_sha256(benchmark: str) -> str | None:
    """sha256 of the judge's own template(s) for the benchmark (None: no judge)."""
    if benchmark == "ccpt":
        return _digest(relevance_judge_templates())
    if benchmark == "cggc":
        return _digest(verifier_templates())
    return None
