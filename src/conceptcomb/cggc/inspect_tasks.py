"""Inspect adapter for CGGC.

``inspect eval conceptcomb/cggc -T setting=ood -T order=easy_to_hard`` (options: setting
id|ood, order random|easy_to_hard|hard_to_easy, structure A|B|C, k, packaging 1&3|2&2,
test_type A|B|C, prompt_style paper|script, seed, data_dir, spice_jars), and the lm-eval
names as fixed tasks (``conceptcomb/cggc_ood_easy2hard`` ...).

Each sample's input is the instruction (system message) and the item; the shared
few-shot solver (`conceptcomb.frameworks.inspect_fewshot`, with CGGC's rule and the shared
order) puts the demonstrations between them as user blocks answered by their sentences,
the chat the lm-eval multi-turn rendering gives. Every reply is scored by
`conceptcomb.cggc.scoring`, as in lm-eval; the corpus
metrics (BLEU, METEOR, CIDEr, SPICE) are computed over all samples from the (prediction,
reference) record each score carries.

``conceptcomb/cggc_id_verified`` and ``cggc_ood_verified`` add relation verification by a
judge (section 5.3; `conceptcomb.cggc.verification`): the judge options
(`conceptcomb.frameworks.inspect_tasks.JudgeOptions`: ``-T judge=...``, or ``--model-role
grader=MODEL``), ``verified_share``, ``verifier_failures`` and every metric again on the
verified items (``<metric>_verified``).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Task, task
from typing_extensions import Unpack

from conceptcomb.cggc.inspect_adapter import (
    AnyCggcOptions,
    CggcOptions,
    VerifiedOptions,
    any_task,
    named_task,
    verified_task,
)
from conceptcomb.cggc.tasks import all_specs, verified_specs


@task(name="cggc")
def cggc(**options: Unpack[AnyCggcOptions]) -> Task:
    """CGGC with every option: -T setting=ood -T order=easy_to_hard ... (a misspelt option
    is refused, as by the named tasks)."""
    return any_task(options)


# One @task per task name, each a call into a builder of `inspect_adapter`.


@task
def cggc_id(**options: Unpack[CggcOptions]) -> Task:
    """CGGC in-distribution."""
    return named_task("cggc_id", options)


@task
def cggc_ood(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization."""
    return named_task("cggc_ood", options)


@task
def cggc_ood_easy2hard(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, demonstrations ordered easy_to_hard."""
    return named_task("cggc_ood_easy2hard", options)


@task
def cggc_ood_hard2easy(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, demonstrations ordered hard_to_easy."""
    return named_task("cggc_ood_hard2easy", options)


@task
def cggc_ood_typeA(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, type A demonstrations."""
    return named_task("cggc_ood_typeA", options)


@task
def cggc_ood_typeB(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, type B demonstrations."""
    return named_task("cggc_ood_typeB", options)


@task
def cggc_ood_typeC(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, type C demonstrations."""
    return named_task("cggc_ood_typeC", options)


@task
def cggc_id_script(**options: Unpack[CggcOptions]) -> Task:
    """CGGC in-distribution."""
    return named_task("cggc_id_script", options)


@task
def cggc_ood_script(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization."""
    return named_task("cggc_ood_script", options)


@task
def cggc_id_test_typeA(**options: Unpack[CggcOptions]) -> Task:
    """CGGC in-distribution, type A test items (Table 6)."""
    return named_task("cggc_id_test_typeA", options)


@task
def cggc_ood_test_typeA(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, type A test items (Table 6)."""
    return named_task("cggc_ood_test_typeA", options)


@task
def cggc_id_test_typeB(**options: Unpack[CggcOptions]) -> Task:
    """CGGC in-distribution, type B test items (Table 6)."""
    return named_task("cggc_id_test_typeB", options)


@task
def cggc_ood_test_typeB(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, type B test items (Table 6)."""
    return named_task("cggc_ood_test_typeB", options)


@task
def cggc_id_test_typeC(**options: Unpack[CggcOptions]) -> Task:
    """CGGC in-distribution, type C test items (Table 6)."""
    return named_task("cggc_id_test_typeC", options)


@task
def cggc_ood_test_typeC(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, type C test items (Table 6)."""
    return named_task("cggc_ood_test_typeC", options)


@task
def cggc_ood_d13(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, primitives packed 1 & 3 (Fig. 4)."""
    return named_task("cggc_ood_d13", options)


@task
def cggc_ood_d22(**options: Unpack[CggcOptions]) -> Task:
    """CGGC compositional generalization, primitives packed 2 & 2 (Fig. 4)."""
    return named_task("cggc_ood_d22", options)


@task
def cggc_id_verified(**options: Unpack[VerifiedOptions]) -> Task:
    """CGGC in-distribution, relation verification by a judge."""
    return verified_task("cggc_id_verified", options)


@task
def cggc_ood_verified(**options: Unpack[VerifiedOptions]) -> Task:
    """CGGC compositional generalization, relation verification by a judge."""
    return verified_task("cggc_ood_verified", options)


@task
def cggc_ood_easy2hard_verified(**options: Unpack[VerifiedOptions]) -> Task:
    """CGGC compositional generalization, easy-to-hard demonstrations, relation verification."""
    return verified_task("cggc_ood_easy2hard_verified", options)


# Every task by name, from the functions above (a task missing its function fails here).
TASKS: dict[str, Callable[..., Task]] = {"cggc": cggc}
TASKS.update({spec.name: globals()[spec.name] for spec in [*all_specs(), *verified_specs()]})
