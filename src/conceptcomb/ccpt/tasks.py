"""The CCPT task names, shared by lm-eval and Inspect.

``ccpt_<kind>[_full][_cot]``: ``kind`` is one of the paper's four tasks, ``_full`` runs
every item of that property type instead of the paper's test subset, ``_cot`` uses the
chain-of-thought instructions (generative tasks only).
"""

from __future__ import annotations

from dataclasses import dataclass

PI_EMERGENT = "pi_emergent"
PI_CANCELED = "pi_canceled"
NPC_EMERGENT = "npc_emergent"
TYPE_PREDICTION = "tp"
GENERATIVE_KINDS = (PI_EMERGENT, PI_CANCELED, NPC_EMERGENT)
KINDS = (*GENERATIVE_KINDS, TYPE_PREDICTION)
METHODS = ("base", "cot")
SUBSETS = ("test", "full")
GROUP_NAME = "ccpt"
TASK_VERSION = "1.0"


@dataclass(frozen=True)
class CcptTaskSpec:
    kind: str
    method: str = "base"
    subset: str = "test"

    @property
    def name(self) -> str:
        full = "_full" if self.subset == "full" else ""
        cot = "_cot" if self.method == "cot" else ""
        return f"ccpt_{self.kind}{full}{cot}"

    @property
    def generative(self) -> bool:
        return self.kind in GENERATIVE_KINDS

    @property
    def score_name(self) -> str:
        """The paper's headline score: emergence E or cancellation C."""
        return "C" if self.kind == PI_CANCELED else "E"

    @property
    def max_tokens(self) -> int:
        # The authors generate with max_new_tokens=1024 for every method.
        return 1024 if self.generative else 256


def all_specs() -> list[CcptTaskSpec]:
    specs = [
        CcptTaskSpec(kind, method, subset)
        for kind in GENERATIVE_KINDS
        for subset in SUBSETS
        for method in METHODS
    ]
    specs += [CcptTaskSpec(TYPE_PREDICTION, "base", subset) for subset in SUBSETS]
    return specs


def default_specs() -> list[CcptTaskSpec]:
    """The four tasks of the paper on its test items: the members of the ``ccpt`` group."""
    return [CcptTaskSpec(kind) for kind in KINDS]


def spec_by_name(name: str) -> CcptTaskSpec:
    for spec in all_specs():
        if spec.name == name:
            return spec
    known = ", ".join(spec.name for spec in all_specs())
    raise KeyError(f"{name!r} is not a CCPT task; the tasks are: {known}")
