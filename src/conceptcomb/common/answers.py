"""Pull the dictionary answer (``{"property": "..."}``) out of free model text.

The papers ask models to answer in a Python/JSON dictionary. Models wrap it in reasoning,
code fences, single or typographic quotes, or forget the closing brace. Like the authors'
parser we take the *last* dictionary that has the keys we need (reasoning comes first),
and we lower-case the values as their scripts do; unlike it we also accept unquoted values
and keys in any case.

Small models often ignore the format (``The correct answer is "unstable"``). `find_value`
then falls back, in this order, to a ``key: value`` line, to ``answer is X``, and to a
reply of a few words; callers count such non-dictionary answers separately so that a
reader sees how many answers were recovered this way. Anything else is a format failure.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence

_DICT_SPAN = re.compile(r"\{[^{}]*\}")
_PAIR = re.compile(
    r"""["']?(?P<key>[A-Za-z_][A-Za-z_ ]*?)["']?\s*:\s*"""
    r"""(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^,}]*))"""
)
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "'"})


def _normalise(text: str) -> str:
    text = text.translate(_QUOTES)
    # A reply cut off (or ended) before its closing brace: close it, as the authors' parser does.
    last_open, last_close = text.rfind("{"), text.rfind("}")
    if last_open > last_close:
        text = text + "}"
    return text


def _parse_span(span: str) -> dict[str, object] | None:
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(span)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return {str(key): item for key, item in value.items()}
    pairs = {
        match["key"].strip(): (match["dq"] or match["sq"] or match["bare"] or "")
        for match in _PAIR.finditer(span[1:-1])
    }
    return pairs or None


def extract_dicts(text: str) -> list[dict[str, object]]:
    """Every dictionary-looking span in ``text`` that parses, in order of appearance."""
    found = []
    for span in _DICT_SPAN.findall(_normalise(text or "")):
        parsed = _parse_span(span)
        if parsed:
            found.append(parsed)
    return found


def _clean_value(value: object) -> str:
    return str(value).strip().strip("\"'").strip().lower()


def find_answer(
    text: str, keys: Sequence[str], optional: Sequence[str] = ()
) -> dict[str, str] | None:
    """The last dictionary in ``text`` holding every key in ``keys`` (case-insensitive).

    Returns lower-cased, stripped string values for those keys (and for the ``optional``
    keys the dictionary has), or None when no dictionary has them all or one is empty.
    """
    wanted = [key.lower() for key in keys]
    extra = [key.lower() for key in optional]
    for candidate in reversed(extract_dicts(text)):
        lowered = {key.strip().lower(): value for key, value in candidate.items()}
        if not all(key in lowered for key in wanted):
            continue
        answer = {key: _clean_value(lowered[key]) for key in wanted}
        if not all(answer.values()):
            continue
        answer.update({key: _clean_value(lowered[key]) for key in extra if key in lowered})
        return answer
    return None


_ANSWER_IS = re.compile(
    r"""answer(?:[ \t]+to[ \t]+the[ \t]+question)?[ \t]*(?:is|would[ \t]+be|:)[ \t]*:?[ \t]*"""
    r"""(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<bare>[^\n.]+))""",
    re.IGNORECASE,
)
SHORT_REPLY_WORDS = 6


def _key_line(text: str, key: str) -> str | None:
    pattern = re.compile(
        rf"""^[\s\-*]*["']?{re.escape(key)}["']?\s*[:=]\s*(?P<value>.+?)\s*$""",
        re.IGNORECASE | re.MULTILINE,
    )
    found = pattern.findall(text)
    return found[-1] if found else None


def _answer_is(text: str) -> str | None:
    found = list(_ANSWER_IS.finditer(text))
    if not found:
        return None
    last = found[-1]
    return last["dq"] or last["sq"] or last["bare"]


def _short_reply(text: str) -> str | None:
    """A reply of a few words is the answer itself, unless it only announces one."""
    stripped = text.strip()
    if stripped.endswith(":") or "answer" in stripped.lower() or "{" in stripped:
        return None
    return stripped if 0 < len(stripped.split()) <= SHORT_REPLY_WORDS else None


def find_value(text: str, key: str) -> tuple[str, bool] | None:
    """The value for ``key`` and whether it came from a dictionary (True) or a fallback."""
    answer = find_answer(text, [key])
    if answer:
        return answer[key], True
    normalised = (text or "").translate(_QUOTES)
    for fallback in (_key_line(normalised, key), _answer_is(normalised), _short_reply(normalised)):
        if fallback:
            value = _clean_value(fallback.rstrip(".!"))
            if re.search(r"[a-z0-9]", value):
                return value, False
    return None
