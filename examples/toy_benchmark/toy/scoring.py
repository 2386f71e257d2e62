"""Reply -> metrics, the same in both frameworks."""

from __future__ import annotations


def score(reply: str, target: str) -> dict[str, float]:
    return {"exact_match": float(" ".join(reply.split()).lower() == target)}
