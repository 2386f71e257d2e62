"""Reading a yes/no verdict from a verifier's answer (`conceptcomb.scorers.verification`).

A module of its own, without the judges' HTTP clients: a bundle's checker reads the stored
answers of CGGC's verifier with it (`conceptcomb.cggc.evidence`).
"""

from __future__ import annotations

from conceptcomb.common.answers import extract_dicts


def parse_verdict(reply: str) -> bool | None:
    """yes/no from ``{"answer": "yes"}`` (the last such dictionary), or a reply that
    starts with yes or no; None when there is no verdict."""
    for candidate in reversed(extract_dicts(reply)):
        lowered = {str(k).strip().lower(): v for k, v in candidate.items()}
        verdict = _yes_no(str(lowered.get("answer", "")))
        if verdict is not None:
            return verdict
    words = reply.strip().lower().split()
    return _yes_no(words[0]) if words else None


def _yes_no(text: str) -> bool | None:
    word = text.strip().strip(".,!\"'").lower()
    if word in ("yes", "true"):
        return True
    if word in ("no", "false"):
        return False
    return None
