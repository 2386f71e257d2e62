"""``conceptcomb plan``: what CCPT tasks will ask the judge, counted before anything runs.

The judge rates (concept, property) pairs, and in the generative tasks the model's reply
supplies the property (property induction) or the noun phrase and modifier (noun-phrase
completion). So:

* over saved replies (``--predictions``) the plan knows every question exactly: it parses
  each reply as the scorer does, forms the same judge prompts, removes repeats as the
  rating session does and looks up what the judge cache already holds;
* over the task alone it knows the items, the questions fixed before any reply (the head
  noun with the given property in noun-phrase completion), an upper bound (three
  questions per reply, the fixed ones counted once) and, for scale, how many distinct
  questions the dataset's own answers would raise.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.methods.oracle import ORACLE_N, base_spec
from conceptcomb.ccpt.scoring import plan_item
from conceptcomb.ccpt.tasks import (
    GROUP_NAME,
    NPC_EMERGENT,
    TYPE_PREDICTION,
    CcptTaskSpec,
    all_specs,
    default_specs,
    method_specs,
    spec_by_name,
)
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.predictions import read_predictions
from conceptcomb.scorers import judge_plan
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.relevance import RelevanceQuestion

# The answer a well-behaved judge gives; its length estimates the output tokens.
TYPICAL_JUDGE_ANSWER = '{"relevance": 10}'
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_\d{4}-\d{2}-\d{2}T[\d\-.]+\.jsonl$")


@dataclass
class TaskPlan:
    """One task's judge questions: exact (from saved replies) or bounded (from the items)."""

    task: str
    items: int
    replies: int
    judged: bool
    source: str | None = None  # the predictions file; None: estimated from the items
    # exact: every distinct question; estimate: the questions fixed before any reply
    questions: dict[str, RelevanceQuestion] = field(default_factory=dict)
    upper_bound: int = 0  # distinct questions at most (exact: their number)
    with_dataset_answers: int = 0  # estimate: distinct questions if replies were the answers
    # estimate: prompts of the reply-dependent questions the dataset's answers would raise,
    # whose mean length stands for the unknown ones
    sample_prompts: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return self.source is not None

    @property
    def unknown(self) -> int:
        """Questions the replies will decide (at most): not yet known, not in any cache."""
        return 0 if self.exact else self.upper_bound - len(self.questions)


def dataset_answer(spec: CcptTaskSpec, item: CcptItem) -> str:
    """The item's own answer in the dictionary format the task asks the model for."""
    if spec.kind == TYPE_PREDICTION:
        return json.dumps({"property_type": item.label})
    if spec.kind == NPC_EMERGENT:
        return json.dumps({"combination": item.combination, "modifier": item.modifier})
    return json.dumps({"property": item.property})


def _questions(spec: CcptTaskSpec, items: Sequence[CcptItem], replies: Sequence[str]) -> dict:
    """Distinct judge questions of these replies, by prompt, in the order they are asked."""
    found: dict[str, RelevanceQuestion] = {}
    for item, reply in zip(items, replies, strict=True):
        for question in plan_item(spec, item, reply).questions.values():
            found.setdefault(question.prompt, question)
    return found


def plan_from_items(
    spec: CcptTaskSpec, items: Sequence[CcptItem], replies_per_item: int = 1
) -> TaskPlan:
    """Bounds for a task not run yet (``replies_per_item``: N for the multi-oracle)."""
    replies = len(items) * replies_per_item
    if not spec.generative:
        return TaskPlan(spec.name, len(items), replies, judged=False)
    scoring = base_spec(spec) if spec.oracle else spec
    fixed: dict[str, RelevanceQuestion] = {}
    if spec.kind == NPC_EMERGENT:  # the head with the given property: known now
        for item in items:
            question = RelevanceQuestion(item.root, item.property)
            fixed.setdefault(question.prompt, question)
    per_reply = 3 - (1 if fixed else 0)
    answers = _questions(scoring, items, [dataset_answer(spec, item) for item in items])
    return TaskPlan(
        spec.name,
        len(items),
        replies,
        judged=True,
        questions=fixed,
        upper_bound=per_reply * replies + len(fixed),
        with_dataset_answers=len(answers),
        sample_prompts=[prompt for prompt in answers if prompt not in fixed],
    )


def plan_from_predictions(spec: CcptTaskSpec, path: Path) -> TaskPlan:
    """The exact questions the judge will be asked about the replies saved in ``path``."""
    if spec.oracle:
        from conceptcomb.ccpt.methods.oracle_rescore import read_oracle_predictions

        docs, _, named = read_oracle_predictions(path)
    else:
        predictions = read_predictions(path)
        named = predictions.task
        docs = [(p.doc, [p.response], p.origin) for p in predictions.items]
    if named and named != spec.name:
        raise ConfigError(f"{path} holds replies of {named}, not {spec.name}.")
    items = [CcptItem.from_doc(doc, origin=origin) for doc, _, origin in docs]
    flat_items = [item for item, (_, replies, _) in zip(items, docs, strict=True) for _ in replies]
    flat_replies = [reply for _, replies, _ in docs for reply in replies]
    if not spec.generative:
        return TaskPlan(spec.name, len(items), len(flat_replies), False, str(path))
    scoring = base_spec(spec) if spec.oracle else spec
    questions = _questions(scoring, flat_items, flat_replies)
    return TaskPlan(
        spec.name,
        len(items),
        len(flat_replies),
        judged=True,
        source=str(path),
        questions=questions,
        upper_bound=len(questions),
    )


# --- which tasks, which files -----------------------------------------------------------
def resolve_tasks(names: Iterable[str]) -> list[CcptTaskSpec]:
    """Task names (comma- or space-separated; ``ccpt`` is the group) -> their specs."""
    specs: list[CcptTaskSpec] = []
    for name in (part.strip() for chunk in names for part in chunk.split(",")):
        if not name:
            continue
        try:
            found = default_specs() if name == GROUP_NAME else [spec_by_name(name)]
        except KeyError as err:
            known = ", ".join([GROUP_NAME, *(s.name for s in [*all_specs(), *method_specs()])])
            raise ConfigError(f"{name}: `conceptcomb plan` knows the CCPT tasks: {known}.") from err
        specs += [spec for spec in found if spec not in specs]
    if not specs:
        raise ConfigError("Name at least one task, e.g. `conceptcomb plan ccpt`.")
    return specs


def _task_of_file(path: Path) -> str | None:
    """The task a predictions file says it holds (lm-eval file name, Inspect log header)."""
    match = _SAMPLES_NAME.match(path.name)
    if match:
        return match["task"]
    if path.suffix == ".eval":
        from inspect_ai.log import read_eval_log

        try:
            return read_eval_log(str(path), header_only=True).eval.task.rsplit("/", 1)[-1]
        except Exception:  # not a log we can read: not a predictions file of ours
            return None
    return None


def find_predictions(paths: Sequence[Path], specs: Sequence[CcptTaskSpec]) -> dict[str, Path]:
    """Task -> predictions file. A folder is searched for lm-eval ``samples_<task>_*.jsonl``
    and Inspect ``.eval`` logs of the planned tasks (the newest file of a task wins); a
    file belongs to the task it names, or to the only task planned."""
    wanted = {spec.name for spec in specs}
    found: dict[str, Path] = {}
    for path in paths:
        if path.is_dir():
            candidates = [*path.rglob("samples_*.jsonl"), *path.rglob("*.eval")]
            for file in sorted(candidates, key=lambda f: f.stat().st_mtime):
                task = _task_of_file(file)
                if task in wanted:
                    found[task] = file  # sorted by time: the newest stays
            continue
        if not path.is_file():
            raise ConfigError(f"--predictions {path}: no such file or folder.")
        task = _task_of_file(path) or (next(iter(wanted)) if len(wanted) == 1 else None)
        if task is None:
            raise ConfigError(
                f"--predictions {path}: the file does not say which task its replies belong "
                "to; plan one task with it (conceptcomb plan TASK --predictions FILE)."
            )
        if task not in wanted:
            raise ConfigError(f"--predictions {path} holds replies of {task}, not planned here.")
        found[task] = path
    return found


# --- the report ------------------------------------------------------------------------
@dataclass
class TaskRow:
    task: str
    items: int
    replies: int
    exact: bool
    source: str | None
    questions: int  # distinct (exact), or at most (estimate)
    with_dataset_answers: int | None
    in_cache: int
    to_ask: int  # exact, or at most
    input_tokens: int
    output_tokens: int


@dataclass
class PlanReport:
    judge: str | None  # the judge identity; None when the judge is off
    judge_model: str
    cache: str | None
    rows: list[TaskRow]
    to_ask: int  # requests of the whole run (repeats across tasks answered by the cache)
    exact: bool
    input_tokens: int
    output_tokens: int
    price: judge_plan.Price | None
    # task -> the exact questions its run will send (a question two tasks share is listed
    # under the first when the cache is on: the second finds it answered)
    questions: dict[str, list[RelevanceQuestion]]

    @property
    def cost(self) -> float | None:
        if self.price is None:
            return None
        return (self.input_tokens * self.price.input + self.output_tokens * self.price.output) / 1e6

    def table(self) -> str:
        bound = "" if self.exact else "at most "
        lines = [
            f"judge: {self.judge or 'off (nothing will be asked)'}",
            f"judge cache: {self.cache or 'off'}",
            "",
            "| task | items | replies | judge questions | in cache | to ask | input tokens "
            "| output tokens | from |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for row in self.rows:
            questions = _at_most(row.questions, row.exact)
            if row.with_dataset_answers is not None:
                questions += f" ({row.with_dataset_answers:,} with the dataset's answers)"
            lines.append(
                f"| {row.task} | {row.items} | {row.replies} | {questions} | {row.in_cache} | "
                f"{_at_most(row.to_ask, row.exact)} | {_at_most(row.input_tokens, row.exact)} | "
                f"{_at_most(row.output_tokens, row.exact)} | "
                f"{row.source or 'task items (estimate)'} |"
            )
        lines.append("")
        if self.judge is None:
            lines.append("total: no judge requests (the judge is off)")
        else:
            lines.append(
                f"total: {bound}{self.to_ask:,} judge requests, {bound}{self.input_tokens:,} "
                f"input and {bound}{self.output_tokens:,} output tokens (o200k_base; one "
                "request per question, more if a malformed answer is asked again)"
            )
        if self.judge is not None and self.price is None:
            lines.append(
                f"cost: no price known for {self.judge_model} (prices are listed for "
                f"{', '.join(sorted(judge_plan.PRICES))} at OpenAI's endpoint)"
            )
        elif self.judge is not None:
            lines.append(
                f"cost: {bound}{_dollars(self.cost or 0.0)} with {self.judge_model} at "
                f"${self.price.input:.2f} / ${self.price.output:.2f} per million input / "
                f"output tokens ({judge_plan.PRICES_SOURCE})"
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "judge_model": self.judge_model,
            "judge_cache": self.cache,
            "exact": self.exact,
            "tasks": [row.__dict__ for row in self.rows],
            "judge_requests": self.to_ask,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "price_per_million_tokens": None if self.price is None else self.price.__dict__,
            "prices_as_of": judge_plan.PRICES_AS_OF,
            "cost_usd": self.cost,
        }

    def write_questions(self, path: Path) -> None:
        """The exact questions still to ask, one JSON line each."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            for task, questions in self.questions.items():
                for question in questions:
                    line = {"task": task, "concept": question.concept,
                            "property": question.prop, "prompt": question.prompt}  # fmt: skip
                    handle.write(json.dumps(line) + "\n")


def _at_most(value: int, exact: bool) -> str:
    return f"{'' if exact or not value else '≤ '}{value:,}"


def _dollars(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 0.1 else f"${amount:.4f}"


def _uses_openai_prices(settings: JudgeSettings) -> bool:
    url = (settings.judge_base_url or "").lower()
    return settings.judge == "openai" and (not url or "api.openai.com" in url)


def build_report(plans: Sequence[TaskPlan], settings: JudgeSettings) -> PlanReport:
    """Cache lookups, token counts and price over the plans of the tasks of one run."""
    judged = settings.enabled
    identity = judge_plan.judge_identity(settings) if judged else None
    cache = judge_plan.cache_path(settings) if judged else None
    known = {prompt for plan in plans for prompt in plan.questions}
    held = judge_plan.cached(settings, identity, known) if identity else set()
    tokens = {prompt: judge_plan.input_tokens(prompt) for prompt in known - held}
    answer_tokens = judge_plan.output_tokens(TYPICAL_JUDGE_ANSWER)
    rows, questions = [], {}
    # With the cache on, a question two tasks share is asked once (the later task finds
    # it cached); with the cache off each task's run asks its own.
    asked_earlier: set[str] = set()
    run_requests = run_tokens = 0
    for plan in plans:
        ask = [q for prompt, q in plan.questions.items() if prompt not in held] if judged else []
        unknown = plan.unknown if judged else 0
        guess = math.ceil(unknown * _mean_tokens(plan.sample_prompts)) if unknown else 0
        rows.append(
            TaskRow(
                task=plan.task,
                items=plan.items,
                replies=plan.replies,
                exact=plan.exact or not plan.judged,
                source=plan.source or (None if plan.judged else "no judge"),
                questions=plan.upper_bound,
                with_dataset_answers=None
                if plan.exact or not plan.judged
                else plan.with_dataset_answers,
                in_cache=len(set(plan.questions) & held),
                to_ask=len(ask) + unknown,
                input_tokens=sum(tokens[q.prompt] for q in ask) + guess,
                output_tokens=(len(ask) + unknown) * answer_tokens,
            )
        )
        fresh = [q for q in ask if cache is None or q.prompt not in asked_earlier]
        asked_earlier.update(q.prompt for q in fresh)
        if plan.exact:
            questions[plan.task] = fresh
        run_requests += len(fresh) + unknown
        run_tokens += sum(tokens[q.prompt] for q in fresh) + guess
    return PlanReport(
        judge=identity,
        judge_model=settings.model_name,
        cache=str(cache) if cache else None,
        rows=rows,
        to_ask=run_requests,
        exact=all(row.exact for row in rows),
        input_tokens=run_tokens,
        output_tokens=run_requests * answer_tokens,
        price=judge_plan.price_of(settings.model_name) if _uses_openai_prices(settings) else None,
        questions=questions,
    )


def _mean_tokens(prompts: Sequence[str]) -> float:
    if not prompts:
        return 0.0
    return sum(judge_plan.input_tokens(p) for p in prompts) / len(prompts)


def plan_tasks(
    names: Sequence[str],
    settings: JudgeSettings,
    predictions: Sequence[Path] = (),
    limit: int | None = None,
    data_dir: str | None = None,
    oracle_n: int = ORACLE_N,
) -> PlanReport:
    """The plan of a run of ``names`` (tasks or the ``ccpt`` group)."""
    specs = resolve_tasks(names)
    if limit is not None and limit < 1:
        raise ConfigError("--limit must be at least 1.")
    files = find_predictions(predictions, specs)
    plans = []
    for spec in specs:
        if spec.name in files:
            plans.append(plan_from_predictions(spec, files[spec.name]))
            continue
        items = load_items(spec, data_dir)[:limit]
        plans.append(plan_from_items(spec, items, oracle_n if spec.oracle else 1))
    return build_report(plans, settings)
