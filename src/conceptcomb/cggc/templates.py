"""CGGC's prompt templates, rendered on placeholders: every text a model or judge is sent.

A leaderboard bundle records their sha256 (`conceptcomb.leaderboard.bundles.templates`); a
test checks that every string constant of the prompt modules shows up in some rendered text.
"""

from __future__ import annotations

import json


def templates() -> dict[str, str]:
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
    return texts


def judge_templates() -> dict[str, str]:
    from conceptcomb.cggc.relations import TEMPLATES
    from conceptcomb.cggc.verification import statement
    from conceptcomb.scorers.verification import VERDICT_SCHEMA, VerificationQuestion

    relations = [*TEMPLATES, "<OtherRelation>"]  # the last: the bare-triple statement
    templates = {
        f"verifier/{relation}": VerificationQuestion(
            "<sentence>", "<head>", relation, "<tail>", statement("<head>", relation, "<tail>")
        ).prompt
        for relation in relations
    }
    return {**templates, "verifier/schema": json.dumps(VERDICT_SCHEMA, sort_keys=True)}
