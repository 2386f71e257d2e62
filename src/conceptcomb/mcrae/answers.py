"""Reading a model's ranked list of properties out of its reply.

The prompt asks for one property per line, best first. Replies also come numbered
(``1. red``), bulleted (``- red``, ``* **Red**``), with a preamble ("Here are the
properties of a cherry:"), with explanations (``Red: cherries are usually red``), or as
one comma-separated line. The rules, in order:

1. if at least two lines are list items (numbered or bulleted), only list items count
   (preambles and closing remarks are dropped); otherwise every non-empty line counts and
   a line with commas is split at them (``red, round, sweet``);
2. markdown emphasis and code marks are removed; a line ending in ``:`` is a heading;
3. text after the first ``:``, `` - ``, `` – `` or `` — `` is kept when short (at most
   four words: ``Colour: red`` is the property "Colour red") and dropped as an
   explanation otherwise (``Red: cherries are usually a deep red``); parenthesised
   remarks are dropped;
4. semicolons separate properties; items with no letter are dropped.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"^\s*(?:\d{1,3}\s*[.)\]:-]|[-*•·‣◦+]|\(\d{1,3}\)|[a-z][.)])\s+", re.I)
_EMPHASIS = re.compile(r"\*\*|__|`|\*(?=\S)|(?<=\S)\*")
_SEPARATOR = re.compile(r":|\s[-–—]\s")
_SHORT = 4
_PARENTHESES = re.compile(r"\s*\([^)]*\)")


def _is_list_item(line: str) -> bool:
    return bool(_MARKER.match(line))


def _clean(item: str) -> str:
    item = _EMPHASIS.sub("", item).strip()
    item = _PARENTHESES.sub("", item)
    parts = _SEPARATOR.split(item, maxsplit=1)
    if len(parts) == 2:
        head, rest = parts
        item = " ".join(f"{head} {rest}".split()) if len(rest.split()) <= _SHORT else head
    return item.strip(" \t.,;!?\"'“”‘’")


def parse_properties(reply: str) -> list[str]:
    """The ranked properties in a reply, best first (see the module docstring)."""
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    listed = [line for line in lines if _is_list_item(line)]
    from_list = len(listed) >= 2
    properties: list[str] = []
    for line in listed if from_list else lines:
        text = _MARKER.sub("", line, count=1).strip()
        if _EMPHASIS.sub("", text).strip().endswith(":"):
            continue  # a heading ("**Appearance:**", "Here are 30 properties:")
        parts = re.split(r";" if from_list else r"[;,]", text)
        for part in parts:
            item = _clean(part)
            if re.search(r"[A-Za-z]", item):
                properties.append(item)
    return properties
