"""The AbsPyramid task names, shared by lm-eval and Inspect.

Detection, ``abspyramid_det_<relation><variant>``:

* no suffix: log-likelihood of " Yes" / " No" after the paper's zero-shot prompt (Table 12a);
  the only variant that yields ROC-AUC from a probability, like the fine-tuned rows of Table 4;
* ``_zs``, ``_cot``, ``_icl``, ``_icl_cot``: generated answers with the paper's zero-shot,
  chain-of-thought (Table 12b), 10-shot in-context and CoT + 10-shot prompts, like the
  ChatGPT rows of Table 4;
* ``_nli``, ``_nli_cot``: the NLI-format prompt of Table 11 (zero-shot, CoT), Table 10.

Generation, ``abspyramid_gen_<relation>``: the prompt of the authors' generator (Tables 7,
19-21). ``<relation>`` is noun, verb, event or all (the authors' merged files, Table 5).
"""

from __future__ import annotations

from dataclasses import dataclass

from conceptcomb.common.errors import UnknownTaskError
from conceptcomb.common.evalcard import version_reader
from conceptcomb.common.lookup import find_named

RELATIONS = ("noun", "verb", "event", "all")
TYPES = ("noun", "verb", "event")
# Folder of each relation in the hub repository ("all" is their merged_dataset).
FOLDERS = {"noun": "noun_dataset", "verb": "verb_dataset", "event": "event_dataset"}
FOLDERS["all"] = "merged_dataset"
SPLITS = ("train", "valid", "test")

DETECTION = "detection"
GENERATION = "generation"
LOGLIKELIHOOD, ZERO_SHOT, COT, ICL, ICL_COT = "ll", "zs", "cot", "icl", "icl_cot"
ABS_PROMPT, NLI_PROMPT = "abs", "nli"
# (method, prompt) -> task-name suffix; the NLI prompt is published for zero-shot and CoT only.
DETECTION_VARIANTS = {
    (LOGLIKELIHOOD, ABS_PROMPT): "",
    (ZERO_SHOT, ABS_PROMPT): "_zs",
    (COT, ABS_PROMPT): "_cot",
    (ICL, ABS_PROMPT): "_icl",
    (ICL_COT, ABS_PROMPT): "_icl_cot",
    (ZERO_SHOT, NLI_PROMPT): "_nli",
    (COT, NLI_PROMPT): "_nli_cot",
}
ICL_SHOTS = 10
GROUP_NAME = "abspyramid"


task_version = version_reader("conceptcomb.abspyramid")


@dataclass(frozen=True)
class AbsTaskSpec:
    kind: str  # DETECTION or GENERATION
    relation: str
    method: str = LOGLIKELIHOOD
    prompt: str = ABS_PROMPT

    @property
    def name(self) -> str:
        if self.kind == GENERATION:
            return f"abspyramid_gen_{self.relation}"
        return f"abspyramid_det_{self.relation}{DETECTION_VARIANTS[(self.method, self.prompt)]}"

    @property
    def generative(self) -> bool:
        """True when the model generates text (every task but log-likelihood detection)."""
        return not (self.kind == DETECTION and self.method == LOGLIKELIHOOD)

    @property
    def in_context(self) -> bool:
        """True for the 10-shot variants (``_icl``, ``_icl_cot``)."""
        return self.method in (ICL, ICL_COT)

    @property
    def reasoning(self) -> bool:
        """True for the chain-of-thought variants (``_cot``, ``_nli_cot``, ``_icl_cot``)."""
        return self.method in (COT, ICL_COT)

    @property
    def max_tokens(self) -> int:
        if self.kind == GENERATION:
            return 10  # the authors' max_target_length
        # Reasoning needs room; a bare Yes/No answer does not (first Yes/No is read).
        return 512 if self.reasoning else 32

    def describe(self) -> str:
        if self.kind == GENERATION:
            return f"AbsPyramid abstraction generation ({self.relation})"
        prompt = "NLI-format" if self.prompt == NLI_PROMPT else "abstraction"
        return f"AbsPyramid abstraction detection ({self.relation}, {prompt} prompt, {self.method})"


def all_specs() -> list[AbsTaskSpec]:
    specs = [
        AbsTaskSpec(DETECTION, relation, method, prompt)
        for relation in RELATIONS
        for method, prompt in DETECTION_VARIANTS
    ]
    return specs + [AbsTaskSpec(GENERATION, relation) for relation in RELATIONS]


def default_specs() -> list[AbsTaskSpec]:
    """The group: log-likelihood detection and generation, each relation and all."""
    detection = [AbsTaskSpec(DETECTION, relation) for relation in RELATIONS]
    return detection + [AbsTaskSpec(GENERATION, relation) for relation in RELATIONS]


def spec_by_name(name: str) -> AbsTaskSpec:
    return find_named(
        all_specs(),
        name,
        lambda known: UnknownTaskError(
            f"{name!r} is not an AbsPyramid task; the tasks are: {known}"
        ),
    )
