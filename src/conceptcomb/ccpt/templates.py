"""CCPT's prompt templates, rendered on placeholders: every text a model or judge is sent.

A leaderboard bundle records their sha256 (`conceptcomb.leaderboard.bundles.templates`); a
test checks that every string constant of the prompt modules shows up in some rendered text.
"""

from __future__ import annotations

import json


def templates() -> dict[str, str]:
    from conceptcomb.ccpt.data import CcptItem
    from conceptcomb.ccpt.methods.spreading import objective
    from conceptcomb.ccpt.methods.spreading_prompts import (
        activation_prompt,
        filter_prompt,
        sa_user_prompt,
    )
    from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, target_of, user_prompt
    from conceptcomb.ccpt.tasks import all_specs, method_specs

    item = CcptItem(
        "<item>", "<noun phrase>", "<head>", "<modifier>", "<property>", "<type>", "<sentence>"
    )
    texts = {"ccpt/system": SYSTEM_PROMPT}
    for spec in all_specs():
        texts[f"ccpt/{spec.name}"] = user_prompt(spec, item)
        texts[f"ccpt/{spec.name}/target"] = target_of(spec, item)
    for spec in method_specs():
        if spec.spreading:
            texts[f"ccpt/{spec.name}"] = sa_user_prompt(spec, item, ["<c1>", "<c2>"])
            texts[f"ccpt/{spec.name}/objective"] = str(objective(spec, item))
    texts["ccpt/sa_activation"] = activation_prompt("<concept>")
    texts["ccpt/sa_filter"] = filter_prompt(["<n1>", "<n2>"], "<objective>")
    return texts


def judge_templates() -> dict[str, str]:
    from conceptcomb.scorers.api_judge import RELEVANCE_SCHEMA
    from conceptcomb.scorers.relevance import relevance_prompt

    # The answer's schema too: with judge_response_format it constrains what the judge writes.
    return {
        "judge/relevance": relevance_prompt("<concept>", "<property>"),
        "judge/relevance_schema": json.dumps(RELEVANCE_SCHEMA, sort_keys=True),
    }
