"""The easy-to-hard example as Inspect tasks (the same items and demonstrations as lm-eval's)."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from conceptcomb.samplers import fewshot_pool, ordered_fewshot

HERE = Path(__file__).parent


@task
def arith_easy2hard(order: str = "easy2hard", k: int = 3, seed: int = 1234) -> Task:
    """Sums at three levels; k demonstrations from train.jsonl per question, ordered."""
    pool = fewshot_pool(HERE / "train.jsonl", input="question", target="answer", difficulty="level")
    return Task(
        dataset=json_dataset(
            str(HERE / "test.jsonl"),
            FieldSpec(input="question", target="answer", id="id", metadata=["level"]),
        ),
        solver=[
            ordered_fewshot(
                pool, k=k, difficulty="level", levels="easy<medium<hard", order=order, seed=seed
            ),
            generate(),
        ],
        scorer=match(numeric=True),
    )


@task
def arith_hard2easy(k: int = 3, seed: int = 1234) -> Task:
    """The same demonstrations, hardest first."""
    return arith_easy2hard(order="hard2easy", k=k, seed=seed)
