"""The capitals task in Inspect: the items of capitals_qa.yaml, scored by the answer's end."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate, system_message

HERE = Path(__file__).parent  # inspect eval runs a task file from its own folder


@task
def capitals(data: str = str(HERE / "capitals.jsonl"), system: str = "") -> Task:
    """``-T system=...``: a system message before each question (none by default)."""
    fields = FieldSpec(input="question", target="capital", id="id", metadata=["region"])
    solver = [system_message(system)] if system else []
    # match() compares the end of the reply: "The capital of France is Paris." is right.
    return Task(dataset=json_dataset(data, fields), solver=[*solver, generate()], scorer=match())
