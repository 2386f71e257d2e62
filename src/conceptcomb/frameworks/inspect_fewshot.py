"""Inspect: ordered demonstrations for any ``@task`` (`ordered_fewshot`, `fewshot_pool`).

::

    from inspect_ai import Task, task
    from inspect_ai.solver import generate
    from conceptcomb.samplers import fewshot_pool, ordered_fewshot

    @task
    def my_task(order: str = "easy2hard", seed: int = 1234) -> Task:
        pool = fewshot_pool("train.jsonl", input="question", target="answer", difficulty="level")
        return Task(
            dataset=json_dataset("test.jsonl", FieldSpec(input="question", target="answer")),
            solver=[ordered_fewshot(pool, k=3, difficulty="level",
                                    levels="easy<medium<hard", order=order, seed=seed),
                    generate()],
            scorer=match(),
        )

Each sample's demonstrations are chosen for its id (`conceptcomb.common.demonstrations`:
spread over the levels, never the sample itself, seeded by (seed, sample id)) and put
before its question as user / assistant turns (lm-eval's ``--fewshot_as_multiturn``), or,
with ``template``, as text before the question. The seed defaults to lm-eval's few-shot
seed (1234), so both frameworks show an item the same demonstrations by default. The
chosen ids are in the sample's metadata (``fewshot_ids``). The pool is checked when the
solver is made, before any model is called.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conceptcomb.common.demonstrations import (
    EASY2HARD,
    Difficulty,
    Order,
    OrderedDemonstrations,
)
from conceptcomb.common.errors import ConfigError, DataFormatError, DataUnavailableError

LOGGED_IDS = "fewshot_ids"  # in each sample's metadata: the demonstrations shown, in order
LMEVAL_FEWSHOT_SEED = 1234  # lm-eval's default few-shot seed


@dataclass(frozen=True)
class FewshotPool(Sequence[Sample]):
    """Demonstration candidates; the eval log's plan records where they came from and how
    many there are, not every sample."""

    source: str
    size: int
    difficulty: str | None
    samples: tuple[Sample, ...] = field(repr=False, compare=False)

    def __getitem__(self, index: Any) -> Any:
        return self.samples[index]

    def __len__(self) -> int:
        return self.size


def fewshot_pool(
    source: str | Path | Iterable[Sample],
    *,
    input: str = "input",
    target: str = "target",
    id: str = "id",
    difficulty: str | None = "difficulty",
) -> FewshotPool:
    """Demonstration candidates: Samples with their difficulty in the metadata.

    ``source`` is a JSON Lines, JSON or CSV file of records (``input``, ``target`` and
    ``id`` name their fields; every other field goes to the metadata), or Samples already
    made (e.g. an Inspect dataset).
    """
    if not isinstance(source, str | Path):
        samples = list(source)
    else:
        path = Path(source)
        samples = [
            _record_sample(record, path, index, input, target, id)
            for index, record in enumerate(_records(path))
        ]
    if not samples:
        raise ConfigError(f"fewshot_pool: {source} holds no demonstrations.")
    for sample in samples:
        if difficulty and difficulty not in (sample.metadata or {}):
            raise ConfigError(
                f"fewshot_pool: sample {sample.id} of {source} has no difficulty field "
                f"{difficulty!r}; add it or name the field that holds the difficulty."
            )
    name = str(source) if isinstance(source, str | Path) else type(source).__name__
    return FewshotPool(name, len(samples), difficulty, tuple(samples))


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DataUnavailableError(f"fewshot_pool: {path} does not exist.")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".csv":
            return list(csv.DictReader(text.splitlines()))
        if path.suffix == ".json":
            loaded = json.loads(text)
            return loaded if isinstance(loaded, list) else [loaded]
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as err:
        raise DataFormatError(f"{path}: line {err.lineno}: not JSON ({err.msg}).") from err


def _record_sample(
    record: dict[str, Any], path: Path, index: int, input: str, target: str, id: str
) -> Sample:
    missing = [field for field in (input, target) if field not in record]
    if missing:
        raise DataFormatError(f"{path}: record {index} has no field {missing[0]!r}.")
    metadata = {k: v for k, v in record.items() if k not in (input, target)}
    return Sample(
        input=str(record[input]), target=record[target], id=record.get(id), metadata=metadata
    )


def pool_demonstrations(
    pool: Sequence[Sample],
    *,
    k: int,
    difficulty: str | None,
    levels: str | Sequence[str] | None,
    order: str,
    seed: Any,
) -> OrderedDemonstrations[Sample]:
    """The checked pool behind `ordered_fewshot` (every sample needs an id)."""
    samples = list(pool)
    for index, sample in enumerate(samples):
        if sample.id is None:
            raise ConfigError(
                f"ordered_fewshot: pool sample {index} has no id; give every sample an id "
                "(FieldSpec(id=...), or fewshot_pool's id field)."
            )
    if difficulty is None and Order.parse(order).kind != "random":
        raise ConfigError(f"ordered_fewshot: order={order!r} needs a difficulty field.")
    return OrderedDemonstrations(
        samples,
        k=k,
        order=order,
        difficulty=Difficulty.of(difficulty, levels),
        seed=seed,
        id_of=lambda sample: sample.id,
        value_of=lambda sample, field: (sample.metadata or {}).get(field),
        where=lambda index: f"ordered_fewshot: pool sample {samples[index].id}",
    )


@solver
def ordered_fewshot(
    pool: Sequence[Sample],
    k: int = 3,
    difficulty: str | None = "difficulty",
    levels: str | Sequence[str] | None = None,
    order: str = EASY2HARD,
    seed: int = LMEVAL_FEWSHOT_SEED,
    template: str | None = None,
) -> Solver:
    """Put k demonstrations from ``pool`` before each sample's question, ordered by
    difficulty (``order``: easy2hard, hard2easy, random or level=<x>).

    ``difficulty`` names the metadata field of each pool sample (a number, or a label whose
    order ``levels`` declares, easiest first: ``"A<B<C"`` or a list). ``template`` (e.g.
    ``"Q: {input}\\nA: {target}"``) renders the demonstrations as text before the question
    instead of chat turns.
    """
    demonstrations = pool_demonstrations(
        pool, k=k, difficulty=difficulty, levels=levels, order=order, seed=seed
    )
    if template is not None:  # a misspelt field fails here, not at the first sample
        try:
            _render(template, demonstrations.pool[0])
        except (KeyError, IndexError, ValueError) as err:
            raise ConfigError(f"ordered_fewshot: template={template!r}: {err!r}.") from err
    return demonstrations_solver(lambda state: demonstrations.choose(state.sample_id), template)


@solver
def demonstrations_solver(
    choose: Callable[[TaskState], Sequence[Sample] | None], template: str | None = None
) -> Solver:
    """A solver that shows each sample the demonstrations ``choose`` gives it, in that order
    (a benchmark's own rule, such as CGGC's, comes in through the core's `Selection`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = choose(state)
        if chosen is None:
            raise DataUnavailableError(
                f"sample {state.sample_id}: the pool holds no valid set of demonstrations for it."
            )
        state.metadata[LOGGED_IDS] = [sample.id for sample in chosen]
        state.messages = insert_demonstrations(state.messages, chosen, template)
        return state

    return solve


def _text(sample: Sample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    return "\n".join(message.text for message in sample.input if message.role == "user")


def _answer(sample: Sample) -> str:
    return sample.target if isinstance(sample.target, str) else sample.target[0]


def _render(template: str, sample: Sample) -> str:
    """A demonstration as text: ``{input}``, ``{target}`` and its metadata fields."""
    return template.format_map(
        {**(sample.metadata or {}), "input": _text(sample), "target": _answer(sample)}
    )


def insert_demonstrations(
    messages: list[ChatMessage], chosen: Sequence[Sample], template: str | None
) -> list[ChatMessage]:
    """The messages with the demonstrations after the leading system messages."""
    at = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    if template is None:
        turns: list[ChatMessage] = []
        for sample in chosen:
            turns += [
                ChatMessageUser(content=_text(sample)),
                ChatMessageAssistant(content=_answer(sample)),
            ]
        return [*messages[:at], *turns, *messages[at:]]
    shown = "\n\n".join(_render(template, sample) for sample in chosen)
    if at == len(messages):
        return [*messages, ChatMessageUser(content=shown)]
    question = messages[at]
    merged = question.model_copy(update={"content": f"{shown}\n\n{question.text}"})
    return [*messages[:at], merged, *messages[at + 1 :]]
