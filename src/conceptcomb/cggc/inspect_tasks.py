"""Inspect adapter for CGGC.

``inspect eval conceptcomb/cggc -T setting=ood -T order=easy_to_hard`` (options: setting
id|ood, order random|easy_to_hard|hard_to_easy, structure A|B|C, k, packaging 1&3|2&2,
test_type A|B|C, prompt_style paper|script, seed, data_dir, spice_jars), and the lm-eval
names as fixed tasks (``conceptcomb/cggc_ood_easy2hard`` ...).

Each sample's input is the chat the lm-eval multi-turn rendering gives: the instruction
as system message, each demonstration as a user block answered by its sentence, then the
item. Corpus metrics (BLEU, METEOR, CIDEr, SPICE) are computed over all samples from the
(prediction, reference) record each score carries.

``conceptcomb/cggc_id_verified`` and ``cggc_ood_verified`` add relation verification by a
judge (section 5.3; `conceptcomb.cggc.verification`): the judge options of CCPT (``-T
judge=...``, or ``--model-role grader=MODEL``), ``verified_share``, ``verifier_failures``
and every metric again on the verified items (``<metric>_verified``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Solver, TaskState, generate

from conceptcomb.cggc.data import CggcItem, load_dataset
from conceptcomb.cggc.metrics import METRICS, Scored, corpus_metric, item_metrics, spice
from conceptcomb.cggc.prompts import (
    MAX_NEW_TOKENS,
    PromptStyle,
    chat_turns,
    clean_prediction,
    style_named,
)
from conceptcomb.cggc.tasks import (
    TASK_VERSION,
    CggcTaskSpec,
    TaskOptions,
    all_specs,
    item_doc,
    task_pairs,
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
from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.inspect_judge import judge_preflight
from conceptcomb.scorers.inspect_verifier import InspectVerifierSessions
from conceptcomb.scorers.judge_settings import JudgeSettings

ORDER_ALIASES = {
    "random": "random",
    "none": "random",
    "easy_to_hard": "easy_to_hard",
    "easy2hard": "easy_to_hard",
    "hard_to_easy": "hard_to_easy",
    "hard2easy": "hard_to_easy",
}
_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def _table4_metric(name: str, spice_jars: str | None) -> Metric:
    @metric(name=name)
    def build() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            records = [Scored.from_record(s.score.metadata["record"]) for s in scores]  # type: ignore[index]
            if name == "spice":
                return spice(records, spice_jars)
            return corpus_metric(name, records)

        return compute

    return build()


def cggc_scorer(style: PromptStyle, spice_jars: str | None) -> Scorer:
    @scorer(metrics=[_table4_metric(info.name, spice_jars) for info in METRICS], name="cggc")
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            prediction = clean_prediction(state.output.completion, style)
            scored = Scored(
                str(state.sample_id),
                prediction,
                (target.text,),
                tuple(state.metadata["concepts"]),
            )
            values = {k: v for k, v in item_metrics(scored).items() if not math.isnan(v)}
            return Score(value=values, answer=prediction, metadata={"record": scored.as_record()})

        return score

    return build()


def _messages(
    item: CggcItem, demos: list[CggcItem], spec: CggcTaskSpec, seed: int
) -> list[ChatMessage]:
    turns = chat_turns(item, demos, spec.prompt_style, seed)
    return [_ROLES[role](content=text) for role, text in turns]


def cggc_dataset(spec: CggcTaskSpec, options: TaskOptions) -> MemoryDataset:
    """The Inspect dataset: one sample per test item, its demonstrations in the input."""
    sha256 = load_dataset(options.data_dir).sha256
    samples = [
        Sample(
            id=item.item_id,
            input=_messages(item, demos, spec, options.seed),
            target=item.target,
            metadata={**item_doc(item, demos, spec, options), "dataset_sha256": sha256},
        )
        for item, demos in task_pairs(spec, options)
    ]
    return MemoryDataset(samples, name=spec.name)


def cggc_task(
    spec: CggcTaskSpec,
    options: TaskOptions,
    scorer: Scorer | None = None,
    setup: Solver | None = None,
) -> Task:
    style = spec.prompt_style
    return Task(
        dataset=cggc_dataset(spec, options),
        setup=setup,
        solver=generate(),
        scorer=scorer or cggc_scorer(style, options.spice_jars),
        # Greedy, 20 new tokens (the authors' run-main.sh); override with --max-tokens etc.
        config=GenerateConfig(
            temperature=0.0, max_tokens=MAX_NEW_TOKENS, stop_seqs=list(style.until)
        ),
        version=TASK_VERSION,
        metadata={
            "benchmark": "cggc",
            "task": spec.name,
            "setting": spec.setting,
            "dataset_sha256": load_dataset(options.data_dir).sha256,
        },
    )


def _options(**values: object) -> TaskOptions:
    return TaskOptions.resolve({k: v for k, v in values.items() if v is not None})


@task(name="cggc")
def cggc(
    setting: str = "ood",
    order: str = "random",
    structure: str | None = None,
    k: int = 4,
    packaging: str | None = None,
    test_type: str | None = None,
    prompt_style: str = "paper",
    seed: int = 0,
    data_dir: str | None = None,
    spice_jars: str | None = None,
) -> Task:
    """CGGC with every option: -T setting=ood -T order=easy_to_hard ..."""
    if str(order).lower() not in ORDER_ALIASES:
        raise ConfigError(f"order={order!r}: use random, easy_to_hard or hard_to_easy.")
    style_named(prompt_style)  # a clear error for an unknown style
    spec = CggcTaskSpec(
        setting=str(setting).lower(),
        order=ORDER_ALIASES[str(order).lower()],
        structure=str(structure).upper() if structure else None,
        style=str(prompt_style),
    )
    options = _options(
        k=k, packaging=packaging, test_type=test_type, seed=seed, data_dir=data_dir,
        spice_jars=spice_jars,
    )  # fmt: skip
    return cggc_task(spec, options)


def _define(spec: CggcTaskSpec) -> Callable[..., Task]:
    def run(
        k: int = 4,
        packaging: str | None = None,
        test_type: str | None = None,
        seed: int = 0,
        data_dir: str | None = None,
        spice_jars: str | None = None,
    ) -> Task:
        options = _options(
            k=k, packaging=packaging, test_type=test_type, seed=seed, data_dir=data_dir,
            spice_jars=spice_jars,
        )  # fmt: skip
        return cggc_task(spec, options)

    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = f"{spec.description} (lm-eval's {spec.name})."
    return task(name=spec.name)(run)


def _verified_metric(name: str, spice_jars: str | None) -> Metric:
    """A Table 4 metric over the samples whose relations were all verified."""

    @metric(name=name + SUFFIX)
    def build() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            kept = [
                s
                for s in scores
                if (s.score.metadata or {}).get("verification", {}).get("verified")
            ]
            records = [Scored.from_record(s.score.metadata["record"]) for s in kept]  # type: ignore[index]
            if name == "spice":
                return spice(records, spice_jars) if records else math.nan
            return corpus_metric(name, records)

        return compute

    return build()


@metric(name=VERIFIED_SHARE)
def verified_share() -> Metric:
    """Percent of samples with every relation verified (failed verifications left out)."""

    def compute(scores: list[SampleScore]) -> float:
        verdicts = [
            (s.score.metadata or {}).get("verification", {}).get("verified") for s in scores
        ]
        known = [v for v in verdicts if v is not None]
        return 100.0 * sum(map(bool, known)) / len(known) if known else math.nan

    return compute


@metric(name=VERIFIER_FAILURES)
def verifier_failures() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return float(
            sum(
                bool((s.score.metadata or {}).get("verification", {}).get("failed")) for s in scores
            )
        )

    return compute


def cggc_verified_scorer(
    style: PromptStyle, spice_jars: str | None, sessions: InspectVerifierSessions
) -> Scorer:
    """The CGGC scorer plus the judge's per-edge verification of the sentence."""
    metrics = [_table4_metric(info.name, spice_jars) for info in METRICS]
    metrics += [_verified_metric(info.name, spice_jars) for info in METRICS]
    metrics += [verified_share(), verifier_failures()]

    @scorer(metrics=metrics, name="cggc_verified")
    def build() -> Scorer:
        base = cggc_scorer(style, spice_jars)

        async def score(state: TaskState, target: Target) -> Score:
            result = await base(state, target)
            item = CggcItem.from_doc(state.metadata, origin=f"sample {state.sample_id}")
            questions = edge_questions(item, str(result.answer or ""))
            session = sessions.session()
            replies = None
            if session is not None:
                replies = await session.rate_all([q.prompt for q in questions]) if questions else {}
            verification: Verification = verification_of(item, questions, replies)
            metadata = {**(result.metadata or {}), "verification": verification.to_json()}
            values = dict(result.value) if isinstance(result.value, dict) else {}
            values.update({k: v for k, v in verification.metrics().items() if not math.isnan(v)})
            return Score(value=values, answer=result.answer, metadata=metadata)

        return score

    return build()


def cggc_verified_task(spec: CggcTaskSpec, options: TaskOptions, settings: JudgeSettings) -> Task:
    sessions = InspectVerifierSessions(settings, spec.name)
    scorer = cggc_verified_scorer(spec.prompt_style, options.spice_jars, sessions)
    return cggc_task(spec, options, scorer, judge_preflight(sessions))


def _define_verified(spec: CggcTaskSpec) -> Callable[..., Task]:
    def run(
        k: int = 4,
        packaging: str | None = None,
        test_type: str | None = None,
        seed: int = 0,
        data_dir: str | None = None,
        spice_jars: str | None = None,
        judge: str | None = None,
        judge_model: str | None = None,
        judge_base_url: str | list[str] | None = None,
        judge_api_key_env: str | None = None,
        judge_concurrency: int | None = None,
        judge_cache: str | None = None,
    ) -> Task:
        options = _options(
            k=k, packaging=packaging, test_type=test_type, seed=seed, data_dir=data_dir,
            spice_jars=spice_jars,
        )  # fmt: skip
        judge_options = {
            "judge": judge,
            "judge_model": judge_model,
            "judge_base_url": judge_base_url,
            "judge_api_key_env": judge_api_key_env,
            "judge_concurrency": judge_concurrency,
            "judge_cache": judge_cache,
        }
        settings = JudgeSettings.resolve(judge_options)
        if any(value is not None for value in judge_options.values()):
            settings.check_credentials()  # an explicit judge choice is checked up front
        return cggc_verified_task(spec, options, settings)

    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = f"{spec.description} (lm-eval's {spec.name})."
    return task(name=spec.name)(run)


TASKS: dict[str, Callable[..., Task]] = {"cggc": cggc}
TASKS.update({spec.name: _define(spec) for spec in all_specs()})
TASKS.update({spec.name: _define_verified(spec) for spec in verified_specs()})
globals().update(TASKS)
