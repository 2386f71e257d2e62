"""Items -> docs: what lm-eval's dataset hook returns and Inspect's samples are made of."""

from __future__ import annotations

from typing import Any

from conceptcomb.toy.data import WORDS
from conceptcomb.toy.prompts import prompt
from conceptcomb.toy.tasks import ToySpec


def task_docs(spec: ToySpec) -> list[dict[str, Any]]:
    return [
        {"word": word, "prompt": prompt(spec, word), "target": " ".join([word] * spec.times)}
        for word in WORDS
    ]
