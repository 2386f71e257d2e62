"""The CCPT task names, shared by lm-eval and Inspect.

``ccpt_<kind>[_full][_cot]``: ``kind`` is one of the paper's four tasks, ``_full`` runs
every item of that property type instead of the paper's test subset, ``_cot`` uses the
chain-of-thought instructions (generative tasks only).

The paper's other methods (section 4.1), on the test subsets of the three generative tasks:
``ccpt_<kind>_sa_llm`` / ``_sa_conceptnet`` / ``_sa_both`` (spreading activation with the
model, ConceptNet or both as the activator, and the model as the filter),
``_sa_conceptnet_nofilter`` (Table 7's ablation: ConceptNet activation, no filter, so no
extra model call) and ``_oracle`` (multi-oracle: best of N sampled replies, an upper bound
reported under its own metric names). See `conceptcomb.ccpt.methods.spreading` and
`conceptcomb.ccpt.methods.oracle`.
"""

from __future__ import annotations

from dataclasses import dataclass

from conceptcomb.common.errors import UnknownTaskError
from conceptcomb.common.evalcard import load_card, version_reader
from conceptcomb.common.lookup import find_named

PI_EMERGENT = "pi_emergent"
PI_CANCELED = "pi_canceled"
NPC_EMERGENT = "npc_emergent"
TYPE_PREDICTION = "tp"
GENERATIVE_KINDS = (PI_EMERGENT, PI_CANCELED, NPC_EMERGENT)
KINDS = (*GENERATIVE_KINDS, TYPE_PREDICTION)
METHODS = ("base", "cot")
# The paper's methods beyond base and CoT (section 4.1); names follow Table 3's rows.
SA_LLM = "sa_llm"
SA_CONCEPTNET = "sa_conceptnet"
SA_BOTH = "sa_both"
SA_CONCEPTNET_NOFILTER = "sa_conceptnet_nofilter"
SA_METHODS = (SA_LLM, SA_CONCEPTNET, SA_BOTH, SA_CONCEPTNET_NOFILTER)
ORACLE = "oracle"
SUBSETS = ("test", "full")
GROUP_NAME = "ccpt"
# What a task's one-line description (its Inspect docstring) says of its kind and method.
KIND_TITLES = {
    PI_EMERGENT: "property induction, emergent",
    PI_CANCELED: "property induction, canceled",
    NPC_EMERGENT: "noun phrase completion",
    TYPE_PREDICTION: "property type prediction",
}
METHOD_TITLES = {
    "base": "base prompt",
    "cot": "chain-of-thought prompt",
    SA_LLM: "spreading activation by the model",
    SA_CONCEPTNET: "ConceptNet spreading activation, model filter",
    SA_BOTH: "spreading activation by the model and ConceptNet",
    SA_CONCEPTNET_NOFILTER: "spreading activation on ConceptNet, no filter",
    ORACLE: "multi-oracle, best of N replies",
}


task_version = version_reader("conceptcomb.ccpt")


def headline_metric(task: str) -> str:
    """The metric that sums a task up (Inspect's log listings, leaderboards): the card's."""
    return load_card(__package__ or "conceptcomb.ccpt").task(task).headline_metric


@dataclass(frozen=True)
class CcptTaskSpec:
    kind: str
    method: str = "base"
    subset: str = "test"

    @property
    def name(self) -> str:
        full = "_full" if self.subset == "full" else ""
        if self.method in METHODS:
            suffix = "_cot" if self.method == "cot" else ""
        else:
            suffix = f"_{self.method}"
        return f"ccpt_{self.kind}{full}{suffix}"

    def describe(self) -> str:
        """One line: ``CCPT noun phrase completion: base prompt, test items``."""
        text = f"CCPT {KIND_TITLES[self.kind]}: {METHOD_TITLES[self.method]}"
        if self.method in METHODS:  # the other methods run on the test items only
            text += ", all items" if self.subset == "full" else ", test items"
        return text

    @property
    def spreading(self) -> bool:
        """Spreading activation (Algorithm 1) before the answer."""
        return self.method in SA_METHODS

    @property
    def oracle(self) -> bool:
        return self.method == ORACLE

    @property
    def needs_model_during_activation(self) -> bool:
        """True when spreading activation calls the model (activator or filter)."""
        return self.spreading and self.method != SA_CONCEPTNET_NOFILTER

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


def method_specs() -> list[CcptTaskSpec]:
    """Spreading activation and multi-oracle variants, on the paper's test items."""
    return [
        CcptTaskSpec(kind, method) for kind in GENERATIVE_KINDS for method in (*SA_METHODS, ORACLE)
    ]


def lm_eval_method_specs() -> list[CcptTaskSpec]:
    """The variants lm-eval can run: one generation per item (or N repeats for the oracle).

    lm-eval makes one model call per request, so the spreading-activation variants whose
    Activate or Filter step calls the model exist in Inspect only; the no-filter
    ConceptNet variant computes its concept sets when the dataset is built.
    """
    return [spec for spec in method_specs() if not spec.needs_model_during_activation]


def spec_by_name(name: str) -> CcptTaskSpec:
    return find_named(
        [*all_specs(), *method_specs()],
        name,
        lambda known: UnknownTaskError(f"{name!r} is not a CCPT task; the tasks are: {known}"),
    )
