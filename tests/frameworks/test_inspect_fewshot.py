"""`demonstrations_solver` in a real Inspect eval: each sample sees the demonstrations its
rule chooses, in that order, as answered user turns after the system message; a sample the
rule has none for fails with a message naming it."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import TaskState, chain, generate

from conceptcomb.frameworks.inspect_fewshot import LOGGED_IDS, demonstrations_solver

DEMOS = {
    "q1": [
        Sample(id="d2", input="2 + 2?", target="4"),
        Sample(id="d1", input="1 + 1?", target="2"),
    ],
}


def choose(state: TaskState) -> list[Sample] | None:
    return DEMOS.get(str(state.sample_id))


def run(sample_id: str, tmp_path: Path):
    sample = Sample(
        id=sample_id,
        input=[ChatMessageSystem(content="Add."), ChatMessageUser(content="3 + 3?")],
        target="6",
    )
    task = Task(dataset=[sample], solver=chain(demonstrations_solver(choose), generate()))
    (log,) = inspect_eval(task, model="mockllm/model", display="none", log_dir=str(tmp_path))
    return log


def test_demonstrations_come_in_the_chosen_order(tiktoken_offline: None, tmp_path: Path) -> None:
    log = run("q1", tmp_path)
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    turns = [(m.role, m.text) for m in sample.messages]
    assert turns[:6] == [
        ("system", "Add."),
        ("user", "2 + 2?"),
        ("assistant", "4"),
        ("user", "1 + 1?"),
        ("assistant", "2"),
        ("user", "3 + 3?"),
    ]
    assert sample.metadata[LOGGED_IDS] == ["d2", "d1"]


def test_a_sample_without_demonstrations_fails_naming_it(
    tiktoken_offline: None, tmp_path: Path
) -> None:
    log = run("q9", tmp_path)
    assert log.status == "error"
    assert "sample q9" in str(log.error) and "no valid set of demonstrations" in str(log.error)
