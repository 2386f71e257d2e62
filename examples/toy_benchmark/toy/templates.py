"""Every prompt the toy sends, rendered on a placeholder (a bundle records their sha256)."""

from __future__ import annotations

from conceptcomb.toy.prompts import prompt
from conceptcomb.toy.tasks import all_specs


def templates() -> dict[str, str]:
    return {f"toy/{spec.name}": prompt(spec, "<word>") for spec in all_specs()}
