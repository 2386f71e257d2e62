"""Reading Yes/No out of a detection reply, and the one-line prediction of a generation reply."""

from __future__ import annotations

import re

_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(reply: str, reasoning_first: bool = False) -> int | None:
    """1 for Yes, 0 for No, None when the reply holds neither word.

    A direct answer is read from its first Yes/No word. A chain-of-thought reply reasons
    before it answers ("Step 2: ..."), so there the last line holding Yes or No is read
    (its first Yes/No word), as the authors' parser reads lines from the last one
    (AbsInstruct ``utils.parse_label``); unlike it, we match whole words ("not", "know"
    and "nothing" are not "no").
    """
    text = reply or ""
    lines = reversed(text.splitlines()) if reasoning_first else [text]
    for line in lines:
        found = _YES_NO.search(line)
        if found:
            return int(found.group(1).lower() == "yes")
    return None


def first_line(reply: str) -> str:
    """The generated concept: the first non-empty line, stripped (the authors' post-processing)."""
    for line in (reply or "").split("\n"):
        if line.strip():
            return line.strip()
    return ""
