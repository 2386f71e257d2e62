"""The McRae task names, shared by lm-eval and Inspect.

``mcrae_esslli44``: the ESSLLI 2008 property-generation task (44 concrete nouns).
``mcrae_all``: the same task over all 541 concepts of the McRae norms (beyond the seed).
"""

from __future__ import annotations

from dataclasses import dataclass

from conceptcomb.common.errors import UnknownTaskError
from conceptcomb.common.evalcard import version_reader
from conceptcomb.common.lookup import find_named

ESSLLI44 = "esslli44"
ALL = "all"
CONCEPT_SETS = {
    ESSLLI44: "the 44 ESSLLI 2008 nouns (the seed's evaluation)",
    ALL: "every concept of the norms",
}


task_version = version_reader("conceptcomb.mcrae")


@dataclass(frozen=True)
class McraeTaskSpec:
    concepts: str  # ESSLLI44 or ALL

    @property
    def name(self) -> str:
        return f"mcrae_{self.concepts}"

    def describe(self) -> str:
        """One line: which concepts the task asks about."""
        return f"McRae property generation on {CONCEPT_SETS[self.concepts]}"

    @property
    def max_tokens(self) -> int:
        # 30+ properties of a few words each, one per line, with room for numbering.
        return 512


def all_specs() -> list[McraeTaskSpec]:
    return [McraeTaskSpec(ESSLLI44), McraeTaskSpec(ALL)]


def spec_by_name(name: str) -> McraeTaskSpec:
    return find_named(
        all_specs(),
        name,
        lambda known: UnknownTaskError(f"{name!r} is not a McRae task; the tasks are: {known}"),
    )
