"""AbsPyramid's prompt templates, rendered on placeholders: every text a model or judge is sent.

A leaderboard bundle records their sha256 (`conceptcomb.leaderboard.bundles.templates`); a
test checks that every string constant of the prompt modules shows up in some rendered text.
"""

from __future__ import annotations

import json


def templates() -> dict[str, str]:
    from conceptcomb.abspyramid.data import DetectionItem, GenerationItem
    from conceptcomb.abspyramid.prompts import ANSWERS, detection_prompt, generation_prompt
    from conceptcomb.abspyramid.tasks import DETECTION, TYPES, all_specs

    event = "PersonX sees <instance> today"
    texts = {"abspyramid/answers": json.dumps(ANSWERS)}
    for spec in all_specs():
        if spec.kind != DETECTION:
            continue
        for kind in TYPES:
            item = DetectionItem("<item>", event, "<concept>", 1, kind)
            texts[f"abspyramid/{spec.name}/{kind}"] = detection_prompt(spec, item)
    for kind in TYPES:
        texts[f"abspyramid/generation/{kind}"] = generation_prompt(
            GenerationItem("<item>", event, ("<reference>",), kind)
        )
    return texts
