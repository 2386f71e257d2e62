"""Inspect adapter for CGGC.

Here: builders, datasets, scorers; the `@task` functions: `conceptcomb.cggc.inspect_tasks`,
written from ``INSPECT`` (below) by ``python -m conceptcomb.frameworks.task_files``.

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
verified items (``<metric>_verified``). ``inspect score LOG --scorer conceptcomb/cggc_judge
--model-role grader=MODEL`` re-scores a CGGC log with that scorer, its verifier the
``grader`` role only (`cggc_judge`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TypedDict

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Solver, TaskState, chain, generate

from conceptcomb.cggc.analysis.per_item import PER_ITEM
from conceptcomb.cggc.data import CggcItem, load_dataset
from conceptcomb.cggc.demos import order_name
from conceptcomb.cggc.docs import (
    dataset_fields,
    demonstration_source,
    item_doc,
    prime_questions,
    task_pairs,
)
from conceptcomb.cggc.metrics import (
    METRICS,
    Scored,
    check_libraries,
    item_metrics,
    start_meteor,
)
from conceptcomb.cggc.prompts import MAX_NEW_TOKENS, chat_turns, question, style_named
from conceptcomb.cggc.scoring import epochs_score, score_doc
from conceptcomb.cggc.tasks import (
    CggcTaskSpec,
    TaskOptions,
    all_specs,
    spec_by_name,
    task_version,
    verified_specs,
)
from conceptcomb.cggc.verification import (
    SUFFIX,
    VERIFIED_SHARE,
    VERIFIER_FAILURES,
    Verification,
    edge_questions,
    verification_of,
)
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.evalcard import card_headline
from conceptcomb.common.inspect_internals import register_scorer
from conceptcomb.common.results import sem
from conceptcomb.frameworks.inspect_fewshot import demonstrations_solver
from conceptcomb.frameworks.inspect_tasks import (
    JudgeOptions,
    SampleColumns,
    build_task,
    chat,
    check_options,
    judge_settings,
    score_metadata,
)
from conceptcomb.frameworks.task_files import InspectTasks, TaskStub
from conceptcomb.scorers.inspect_judge import chosen_options, preflight_setup
from conceptcomb.scorers.inspect_verifier import InspectVerifierSessions
from conceptcomb.scorers.judge_settings import JudgeSettings


class CggcOptions(TypedDict, total=False):
    """The ``-T`` options of every named CGGC task (`conceptcomb.cggc.tasks.TaskOptions`)."""

    k: int
    """Demonstrations per item (4)."""
    packaging: str | None
    """``1&3`` or ``2&2``: how the demonstrations' structures are packed (Fig. 4; ood only)."""
    test_type: str | None
    """``A``, ``B`` or ``C``: only the test items of that structure (Table 6)."""
    seed: int
    """Seed of the demonstrations and of the edge order (0)."""
    data_dir: str | None
    """The built CGGC dataset folder (default: the packaged one)."""
    spice_jars: str | None
    """Folder with SPICE's Stanford CoreNLP jars (SPICE is NaN without them)."""


class VerifiedOptions(CggcOptions, JudgeOptions, total=False):
    """The options of a task with relation verification: CGGC's and the judge's."""


# The score's metadata key of the epoch it was scored in (the Table 4 metrics group by it).
EPOCH = "epoch"


def _table4_metric(name: str, spice_jars: str | None, verified: bool = False) -> Metric:
    """A Table 4 metric over all samples' records, or over those whose relations were all
    verified (``<name>_verified``), computed per epoch and averaged over the epochs
    (`conceptcomb.cggc.scoring.epochs_score`): every epoch's score, not the reduced one,
    whose record is only the first epoch's."""

    shown = name + SUFFIX if verified else name

    @metric(name=shown, scores="unreduced")
    def build() -> Metric:
        def compute(scores: list[SampleScore]) -> float | dict[str, float]:
            if verified:
                scores = [s for s in scores if _verification(s).get("verified")]
            epochs = _by_epoch(scores)
            value = epochs_score(name, epochs, spice_jars)
            if name not in PER_ITEM:
                return value
            # A mean over items: its standard error beside it (``NAME_stderr``, as lm-eval
            # reports one), which reports and bundles read (a user missed it in the report).
            error = sem(_item_means(name, epochs))
            return {shown: value, f"{shown}_stderr": math.nan if error is None else error}

        return compute

    return build()


def _item_means(name: str, epochs: dict[int, list[Scored]]) -> list[float]:
    """Each item's per-item metric, averaged over the epochs that answered it (one epoch:
    the item's value), NaN items left out: the units of the standard error."""
    values: list[list[float]] = []
    for records in epochs.values():
        for index, record in enumerate(records):
            if index == len(values):
                values.append([])
            value = item_metrics(record)[name]
            if not math.isnan(value):
                values[index].append(value)
    return [sum(item) / len(item) for item in values if item]


def _by_epoch(scores: list[SampleScore]) -> dict[int, list[Scored]]:
    """The records of each epoch: each sample's scores in the order of the epoch they were
    scored in (`EPOCH`), its k-th in the k-th epoch (a score without one: epoch 1)."""
    samples: dict[object, list[tuple[int, Scored]]] = {}
    for s in scores:
        meta = s.score.metadata or {}
        key = id(s) if s.sample_id is None else s.sample_id
        record = Scored.from_record(meta["record"])
        samples.setdefault(key, []).append((int(meta.get(EPOCH, 1)), record))
    epochs: dict[int, list[Scored]] = {}
    for answers in samples.values():
        answers.sort(key=lambda answer: answer[0])
        for index, (_, record) in enumerate(answers):
            epochs.setdefault(index, []).append(record)
    return epochs


def cggc_scorer(spice_jars: str | None) -> Scorer:
    @scorer(metrics=[_table4_metric(info.name, spice_jars) for info in METRICS], name="cggc")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            result = score_doc(state.metadata, state.output.completion)
            return Score(
                value=result.defined_values(),
                answer=result.prediction,
                metadata=score_metadata({"record": result.scored.as_record(), EPOCH: state.epoch}),
            )

        return score

    return build()


def cggc_dataset(spec: CggcTaskSpec, options: TaskOptions) -> MemoryDataset:
    """The Inspect dataset: one sample per test item, its demonstrations in the input."""
    return MemoryDataset(_samples(spec, options), name=spec.name)


def _samples(spec: CggcTaskSpec, options: TaskOptions) -> list[Sample]:
    """One sample per test item the pool can serve (its demonstrations come from
    `demonstrations_solver`)."""
    dataset = load_dataset(options.data_dir)
    prime_questions(dataset, "test", spec.prompt_style, options.seed)
    where = dataset_fields(dataset)
    with collector_paused():  # ~16k samples (common.collector)
        return [
            Sample(
                id=item.item_id,
                input=chat(chat_turns(item, [], spec.prompt_style, options.seed)),
                target=item.target,
                metadata={**item_doc(item, demos, spec, options), **where},
            )
            for item, demos in task_pairs(spec, options)
        ]


def cggc_fewshot(spec: CggcTaskSpec, options: TaskOptions) -> Solver:
    """The shared few-shot solver with CGGC's rule: each item's demonstrations as blocks."""
    dataset = load_dataset(options.data_dir)
    source = demonstration_source(dataset, options.demo_spec(spec))
    style, seed = spec.prompt_style, options.seed

    def choose(state: TaskState) -> list[Sample] | None:
        item = CggcItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
        chosen = source.choose(item.item_id, item)
        if chosen is None:
            return None
        return [
            Sample(id=x.item_id, input=question(x, style, seed), target=x.target) for x in chosen
        ]

    return demonstrations_solver(choose)


def sample_columns(verified: bool = False) -> SampleColumns:
    """CGGC in Inspect View's sample list: the item (its id), the prompt, the reference
    sentence, the sentence scored, its ROUGE-2, ROUGE-L and concept coverage (the concept set
    and structure type: the sample's metadata, ``concepts`` and ``structure_type``)."""
    infos = {info.name: info for info in METRICS}
    return SampleColumns(
        "cggc_verified" if verified else "cggc",
        [infos.get(name, name) for name in PER_ITEM],
    )


def cggc_task(
    spec: CggcTaskSpec,
    options: TaskOptions,
    scorer: Scorer | None = None,
    setup: Solver | None = None,
) -> Task:
    check_libraries()  # the cggc extra, before any model generates
    load_dataset(options.data_dir)  # checked first: a bad folder ends the run here
    # METEOR's JVM loads its paraphrase tables (~6 s) while the samples are built and the
    # model generates, not when the first reply is scored.
    start_meteor()
    style = spec.prompt_style
    return build_task(
        spec.name,
        _samples(spec, options),
        scorer or cggc_scorer(options.spice_jars),
        # Greedy, 20 new tokens (the authors' run-main.sh).
        GenerateConfig(temperature=0.0, max_tokens=MAX_NEW_TOKENS, stop_seqs=list(style.until)),
        task_version(),
        {
            "benchmark": "cggc",
            "task": spec.name,
            "setting": spec.setting,
            "dataset_sha256": load_dataset(options.data_dir).sha256,
        },
        solver=chain(cggc_fewshot(spec, options), generate()),
        setup=setup,
        headline=_headline(spec.name),
        columns=sample_columns(verified=scorer is not None),
    )


def _headline(task: str) -> HeadlineMetric | None:
    """The card's headline, a corpus metric of the scorer (every Table 4 metric is)."""
    name = card_headline("conceptcomb.cggc", task)
    return HeadlineMetric(metric=name) if name else None


def options_of(values: Mapping[str, object]) -> TaskOptions:
    return TaskOptions.resolve({k: v for k, v in values.items() if v is not None})


class AnyCggcOptions(CggcOptions, total=False):
    """The options of ``conceptcomb/cggc``: every named task's, and what the names fix."""

    setting: str
    """``ood`` (default) or ``id``."""
    order: str
    """``random`` (default), ``easy_to_hard`` or ``hard_to_easy`` (or easy2hard, hard2easy)."""
    structure: str | None
    """``A``, ``B`` or ``C``: demonstrations of one structure type (Table 7 "level")."""
    prompt_style: str
    """``paper`` (default) or ``script`` (the authors' released layout)."""


# conceptcomb/cggc's options that a named task's name fixes, with the spec field each sets.
NAMED_BY = {
    "setting": "setting",
    "order": "order",
    "structure": "structure",
    "prompt_style": "style",
}


def check_named_options(name: str, options: Mapping[str, object], accepted: type) -> None:
    """`check_options`, where an option the task's name fixes (``cggc_ood -T order=...``)
    is refused with the command that takes it: ``conceptcomb/cggc -T setting=ood -T
    order=...``, and the named task that runs it where there is one."""
    fixed = [option for option in NAMED_BY if option in options]
    if fixed:
        raise ConfigError(_fixed_by_name(name, {k: options[k] for k in fixed}))
    check_options(name, options, accepted)


def _fixed_by_name(name: str, given: Mapping[str, object]) -> str:
    spec = spec_by_name(name)
    shown = ", ".join(f"{k}={v}" for k, v in given.items())
    named = _named_task(spec, given)
    them = "them" if len(given) > 1 else "it"
    message = f"{name} has no option {', '.join(given)} (-T): its name fixes {them}; "
    message += f"for {shown} run "
    if spec.verify:  # conceptcomb/cggc has no relation verification
        return message + (f"conceptcomb/{named}." if named else "conceptcomb/cggc (unverified).")
    fields = {"setting": spec.setting, **given}
    options = " ".join(f"-T {k}={v}" for k, v in fields.items())
    also = f" (or conceptcomb/{named})" if named else ""
    return message + f"conceptcomb/cggc {options}{also}."


def _named_task(spec: CggcTaskSpec, given: Mapping[str, object]) -> str | None:
    """The named task that is ``spec`` with the options that names fix replaced, if any."""
    values = {NAMED_BY[k]: str(v) for k, v in given.items()}
    try:
        if "order" in values:
            values["order"] = order_name(values["order"])
        if "structure" in values:
            values["structure"] = values["structure"].upper()
        return spec_by_name(dataclasses.replace(spec, **values).name).name
    except ConfigError:  # a value no task has, or no named task for that combination
        return None


def named_task(name: str, options: CggcOptions) -> Task:
    """One of lm-eval's CGGC tasks, by name."""
    check_named_options(name, options, CggcOptions)
    return cggc_task(spec_by_name(name), options_of(options))


def _verification(score: SampleScore) -> dict:
    return (score.score.metadata or {}).get("verification", {})


@metric(name=VERIFIED_SHARE, scores="unreduced")
def verified_share() -> Metric:
    """Percent of replies with every relation verified, over every epoch's reply (failed
    verifications left out): equal epochs give one epoch's share."""

    def compute(scores: list[SampleScore]) -> float:
        known = [v for v in (_verification(s).get("verified") for s in scores) if v is not None]
        return 100.0 * sum(map(bool, known)) / len(known) if known else math.nan

    return compute


@metric(name=VERIFIER_FAILURES, scores="unreduced")
def verifier_failures() -> Metric:
    """Failed verifications per epoch: each sample's failures averaged over its epochs,
    summed (as `conceptcomb.common.inspect_metrics.totals` counts)."""

    def compute(scores: list[SampleScore]) -> float:
        samples: dict[object, list[bool]] = {}
        for s in scores:
            key = id(s) if s.sample_id is None else s.sample_id
            samples.setdefault(key, []).append(bool(_verification(s).get("failed")))
        return float(sum(sum(failed) / len(failed) for failed in samples.values()))

    return compute


def cggc_verified_scorer(spice_jars: str | None, sessions: InspectVerifierSessions) -> Scorer:
    """The CGGC scorer plus the judge's per-edge verification of the sentence."""
    metrics = [_table4_metric(info.name, spice_jars) for info in METRICS]
    metrics += [_table4_metric(info.name, spice_jars, verified=True) for info in METRICS]
    metrics += [verified_share(), verifier_failures()]

    @scorer(metrics=metrics, name="cggc_verified")
    def build() -> Scorer:
        base = cggc_scorer(spice_jars)

        async def score(state: TaskState, target: Target) -> Score:
            session = sessions.session()  # first: a judge that cannot be had stops all work
            result = await base(state, target)
            item = CggcItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
            questions = edge_questions(item, str(result.answer or ""))
            replies = None
            if session is not None:
                replies = await session.rate_all([q.prompt for q in questions]) if questions else {}
            verification: Verification = verification_of(item, questions, replies)
            metadata = {**(result.metadata or {}), "verification": verification.to_json()}
            values = dict(result.value) if isinstance(result.value, dict) else {}
            values.update({k: v for k, v in verification.metrics().items() if not math.isnan(v)})
            return Score(value=values, answer=result.answer, metadata=score_metadata(metadata))

        return score

    return build()


RESCORER = "cggc_judge"


def cggc_judge(task: str | None = None, spice_jars: str | None = None) -> Scorer:
    """``inspect score LOG --scorer conceptcomb/cggc_judge --model-role grader=MODEL``: the
    scorer of a CGGC task with relation verification (its metrics too), whose verifier is
    the ``grader`` role only (``--model-role grader``, or the log's own): the same verdicts
    and metrics as ``conceptcomb score`` of that log with that judge. Any CGGC log will do
    (its samples carry the items); ``-S task=`` a ``*_verified`` task, checked, is optional;
    ``-S spice_jars=DIR`` as the task's option."""
    if task is not None and not spec_by_name(task).verify:
        verified = ", ".join(spec.name for spec in verified_specs())
        raise ConfigError(
            f"{task} verifies no relations: -S task= names one that does ({verified}), "
            "or leave it out."
        )
    check_libraries()  # the cggc extra, before the judge is asked anything
    settings = JudgeSettings.resolve({})  # the cache and decoding options (CONCEPTCOMB_JUDGE_*)
    sessions = InspectVerifierSessions(settings, required=f"conceptcomb/{RESCORER}")
    return cggc_verified_scorer(spice_jars, sessions)


register_scorer(cggc_judge, RESCORER)


def verified_task(name: str, options: VerifiedOptions) -> Task:
    """One of the CGGC tasks with relation verification by a judge, by name."""
    check_named_options(name, options, VerifiedOptions)
    task_options = options_of(options)  # TaskOptions reads its own options only
    check_libraries()  # before the judge's checks, which may load a model
    sessions = InspectVerifierSessions(judge_settings(options), name, chosen_options(options))
    scorer = cggc_verified_scorer(task_options.spice_jars, sessions)
    return cggc_task(spec_by_name(name), task_options, scorer, preflight_setup(sessions))


def any_task(options: AnyCggcOptions) -> Task:
    """``conceptcomb/cggc``: the task its options describe (setting, order, structure,
    prompt style and the named tasks' options)."""
    check_options("cggc", options, AnyCggcOptions)
    values = dict(options)
    style = str(values.pop("prompt_style", None) or "paper")
    style_named(style)  # a clear error for an unknown style
    structure = values.pop("structure", None)
    spec = CggcTaskSpec(
        setting=str(values.pop("setting", None) or "ood").lower(),
        order=order_name(str(values.pop("order", None) or "random")),
        structure=str(structure).upper() if structure else None,
        style=style,
    )
    return cggc_task(spec, options_of(values))


def _stub(spec: CggcTaskSpec) -> TaskStub:
    """A named task's ``@task`` function (relation verification: its own builder)."""
    if spec.verify:
        return TaskStub(spec.name, spec.describe() + ".", verified_task, VerifiedOptions)
    return TaskStub(spec.name, spec.describe() + ".", named_task, CggcOptions)


# The parametric task: no spec of its own, but a written-out @task as well (what ``inspect
# list tasks`` reads).
ANY_TASK = TaskStub(
    "cggc",
    "CGGC with every option: -T setting=ood -T order=easy_to_hard ... (a misspelt option\n"
    "is refused, as by the named tasks).",
    any_task,
    AnyCggcOptions,
    named=False,
    registered_as="cggc",
)
# `conceptcomb.cggc.inspect_tasks`: written by `python -m conceptcomb.frameworks.task_files`.
INSPECT = InspectTasks(lambda: [_stub(s) for s in [*all_specs(), *verified_specs()]], (ANY_TASK,))
