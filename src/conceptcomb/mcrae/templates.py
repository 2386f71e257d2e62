"""McRae's prompt templates, rendered on placeholders: every text a model or judge is sent.

A leaderboard bundle records their sha256 (`conceptcomb.leaderboard.bundles.templates`); a
test checks that every string constant of the prompt modules shows up in some rendered text.
"""

from __future__ import annotations


def templates() -> dict[str, str]:
    from conceptcomb.mcrae.prompts import user_prompt

    return {"mcrae/user": user_prompt("<concept_(sense)>")}
