"""The toy's one prompt."""

from __future__ import annotations

from conceptcomb.toy.tasks import ToySpec


def prompt(spec: ToySpec, word: str) -> str:
    if spec.times == 1:
        return f"Repeat the word {word}."
    return f"Repeat the word {word} {spec.times} times."
