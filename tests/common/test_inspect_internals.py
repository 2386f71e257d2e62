"""Inspect's private names we read (`conceptcomb.common.inspect_internals`): each still where
we read it, doing what we rely on, on the installed Inspect; and no other module of the
package reads any. A failure here means an Inspect release moved one: fix that module."""

from __future__ import annotations

import re
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

import conceptcomb
from conceptcomb.common import inspect_internals

URL = "http://127.0.0.1:9/v1"  # never contacted: building a model sends nothing


def test_openai_chat_models_are_known_with_their_endpoint() -> None:
    compatible = get_model("openai-api/judge/gpt-4o", base_url=URL, api_key="EMPTY")
    openai = get_model("openai/gpt-4o", base_url=URL, api_key="EMPTY")
    assert inspect_internals.openai_chat_base_url(compatible).rstrip("/") == URL
    assert inspect_internals.openai_chat_base_url(openai).rstrip("/") == URL
    responses = get_model("openai/gpt-4o", base_url=URL, api_key="EMPTY", responses_api=True)
    assert inspect_internals.openai_chat_base_url(responses) is None
    assert inspect_internals.openai_chat_base_url(get_model("mockllm/model")) is None


@solver
def _record(seen: dict[str, object]) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seen["seed"] = inspect_internals.run_seed()
        seen["in_eval"] = inspect_internals.in_eval()
        return state

    return solve


def test_the_run_seed_and_whether_an_eval_runs(tmp_path: Path) -> None:
    assert inspect_internals.run_seed() is None
    assert inspect_internals.in_eval() is False
    seen: dict[str, object] = {}
    task = Task(dataset=[Sample(input="x")], solver=_record(seen))
    [log] = inspect_eval(task, model="mockllm/model", seed=7, log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    assert seen == {"seed": 7, "in_eval": True}


def test_no_other_module_reads_inspect_private_names() -> None:
    package = Path(conceptcomb.__file__).parent
    private = re.compile(r"\binspect_ai(?:\.\w+)*\._\w+")
    found = [
        f"{path.relative_to(package)}:{number}: {line.strip()}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "inspect_internals.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if private.search(line)
    ]
    assert found == [], "use conceptcomb.common.inspect_internals"
