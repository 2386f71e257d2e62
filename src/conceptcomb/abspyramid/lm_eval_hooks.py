"""lm-eval adapter for AbsPyramid: the functions the YAML in ``task_yaml/`` points at.

* `load_dataset` builds the docs with their rendered prompts (``custom_dataset``; options
  ``data_dir``, ``split`` and ``seed`` come from ``--metadata``),
* `DemoSampler` hands lm-eval each doc's own in-context demonstrations (``_icl`` and
  ``_icl_cot`` tasks), and `InContextTask` (their ``class``) sends the instruction as the
  system message with no trailing delimiter, as Inspect does,
* `process_results` scores one doc; macro-F1, ROC-AUC and BLEU are corpus-level, so each
  doc passes its (label, prediction) or (prediction, references) to the aggregations below.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import datasets
from lm_eval.api.samplers import ContextSampler
from lm_eval.api.task import ConfigurableTask

from conceptcomb.abspyramid import metrics as m
from conceptcomb.abspyramid.docs import build_docs
from conceptcomb.abspyramid.scoring import (
    score_detection_reply,
    score_generation_reply,
    score_loglikelihoods,
)
from conceptcomb.abspyramid.tasks import DETECTION, spec_by_name
from conceptcomb.common.errors import ConfigError
from conceptcomb.frameworks.lm_eval_metadata import start_task


def load_dataset(abspyramid_task: str, **metadata: Any) -> datasets.DatasetDict:
    """``custom_dataset``: lm-eval passes --metadata and --model_args as keywords."""
    start_task(abspyramid_task, metadata)
    spec = spec_by_name(abspyramid_task)
    split = str(metadata.get("split") or "test")
    docs = build_docs(spec, split, metadata.get("data_dir"), metadata.get("seed"))
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


class DemoSampler(ContextSampler):
    """The demonstrations stored in the evaluated doc (drawn per item by `build_docs`, seeded
    by the ``seed`` option and the item's id; lm-eval's own few-shot seed plays no part).

    lm-eval hands a sampler the evaluated doc only when the few-shot split is the test
    split, which the in-context YAML declares; the pool lm-eval builds from it is not used.
    """

    def sample(self, n: int, eval_doc: dict[str, Any] | None = None, **kwargs: Any) -> list:
        if eval_doc is None or "demos" not in eval_doc:
            raise ConfigError(
                "AbsPyramid in-context tasks need fewshot_split equal to test_split (the "
                "demonstrations travel with each doc); do not override them."
            )
        return list(eval_doc["demos"])[:n]


class InContextTask(ConfigurableTask):
    """The in-context tasks: the instruction is lm-eval's ``description``, which the
    plain-text layout joins to the first demonstration with nothing between, so it ends
    with the few-shot delimiter ("\\n\\n"); with ``--apply_chat_template`` it is the system
    message, sent without that delimiter, the same text as Inspect's system message."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        # lm-eval builds a YAML ``class`` with the whole config, that key included.
        super().__init__(config={k: v for k, v in (config or {}).items() if k != "class"})

    def fewshot_context(self, doc: Any, num_fewshot: int, **kwargs: Any) -> Any:
        template = kwargs.get("chat_template")
        if kwargs.get("apply_chat_template") and template is not None:
            kwargs["chat_template"] = _system_trimmed(template, self.config.fewshot_delimiter)
        return super().fewshot_context(doc, num_fewshot, **kwargs)


def _system_trimmed(template: Callable[..., Any], delimiter: str) -> Callable[..., Any]:
    """``template`` given the messages with ``delimiter`` cut from the end of the system
    message."""

    def render(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        if messages and messages[0].get("role") == "system":
            system = {**messages[0], "content": messages[0]["content"].removesuffix(delimiter)}
            messages = [system, *messages[1:]]
        return template(messages, **kwargs)

    return render


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    spec = spec_by_name(str(doc["task"]))
    if spec.kind != DETECTION:
        prediction, item = score_generation_reply(doc, str(results[0]))
        pair = (prediction, list(doc["references"]))
        return {m.BLEU1: pair, m.BLEU2: pair, m.BLEU_BP: pair, **item}
    if spec.generative:
        detection = score_detection_reply(spec, doc, str(results[0]))
    else:
        # multiple_choice over ["No", "Yes"]: one (loglikelihood, is_greedy) per choice.
        (ll_no, _), (ll_yes, _) = results
        detection = score_loglikelihoods(doc, ll_no, ll_yes)
    values: dict[str, Any] = {
        **detection.item_metrics(),
        m.MACRO_F1: (detection.label, detection.pred),
    }
    if not spec.generative:
        values[m.AUC] = (detection.label, detection.p_yes)
    return values


def macro_f1(pairs: Sequence[Sequence[float]]) -> float:
    # A prediction may be a share of Yes (`m.macro_f1`): read it as a float.
    return m.macro_f1([int(y) for y, _ in pairs], [float(p) for _, p in pairs])


def auc(pairs: Sequence[Sequence[float]]) -> float:
    return m.roc_auc([int(y) for y, _ in pairs], [float(p) for _, p in pairs])


def _bleu(pairs: Sequence[Sequence[Any]]) -> dict[str, float]:
    return m.bleu_metrics([str(p) for p, _ in pairs], [list(refs) for _, refs in pairs])


def bleu1(pairs: Sequence[Sequence[Any]]) -> float:
    return _bleu(pairs)[m.BLEU1]


def bleu2(pairs: Sequence[Sequence[Any]]) -> float:
    return _bleu(pairs)[m.BLEU2]


def bleu_bp(pairs: Sequence[Sequence[Any]]) -> float:
    return _bleu(pairs)[m.BLEU_BP]
