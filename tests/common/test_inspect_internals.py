"""Inspect's private names we read (`conceptcomb.common.inspect_internals`): each still where
we read it, doing what we rely on, on the installed Inspect; and no other module of the
package reads any. A failure here means an Inspect release moved one: fix that module."""

from __future__ import annotations

import ast
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


def test_the_public_fallbacks_answer_as_the_private_names(tmp_path: Path) -> None:
    """What answers on an Inspect that moved a private name: the same, on this one."""
    for model in (
        get_model("openai-api/judge/gpt-4o", base_url=URL, api_key="EMPTY"),
        get_model("openai/gpt-4o", base_url=URL, api_key="EMPTY"),
        get_model("openai/gpt-4o", base_url=URL, api_key="EMPTY", responses_api=True),
        get_model("mockllm/model"),
    ):
        public = inspect_internals._public_openai_chat_base_url(model)
        assert public == inspect_internals.openai_chat_base_url(model), str(model)
    assert inspect_internals._public_run_seed() is None  # outside a run
    seen: dict[str, object] = {}

    @solver
    def public_seed() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            seen["seed"] = inspect_internals._public_run_seed()
            return state

        return solve

    task = Task(dataset=[Sample(input="x")], solver=public_seed())
    [log] = inspect_eval(task, model="mockllm/model", seed=5, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and seen == {"seed": 5}


def test_the_supported_range_is_the_one_pyproject_pins() -> None:
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    pinned = re.search(r'^    "(inspect-ai[^"]*)",$', text, re.M)
    assert pinned and pinned[1] == inspect_internals.SUPPORTED_INSPECT


def _private_imports(source: str) -> list[str]:
    """The private Inspect names a module's source imports: ``inspect_ai._x``, a module path
    with a ``_``-prefixed part, a ``_``-prefixed name imported from a public module, or such
    a path spelled in a string (``importlib.import_module``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            paths = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            paths = [node.module, *names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            paths = [node.value]
        else:
            continue
        for path in paths:
            parts = path.split(".")
            if parts[0] == "inspect_ai" and any(part.startswith("_") for part in parts[1:]):
                found.append(f"line {node.lineno}: {path}")
                break
    return found


def test_the_private_import_check_finds_each_kind() -> None:
    assert _private_imports("from inspect_ai.model._model import active_model\n")
    assert _private_imports("import inspect_ai._util.registry\n")
    assert _private_imports("from inspect_ai.model import _private\n")
    assert _private_imports('importlib.import_module("inspect_ai._util.registry")\n')
    assert not _private_imports("from inspect_ai.model import get_model\n")
    assert not _private_imports('text = "inspect_ai: _ ok"\n')


def test_no_other_module_reads_inspect_private_names() -> None:
    package = Path(conceptcomb.__file__).parent
    examples = Path(__file__).parents[2] / "examples"
    found = [
        f"{path}: {where}"
        for path in sorted([*package.rglob("*.py"), *examples.rglob("*.py")])
        if path.name != "inspect_internals.py"
        for where in _private_imports(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "use conceptcomb.common.inspect_internals"


def test_a_moved_private_name_warns_once_and_falls_back(monkeypatch, caplog) -> None:
    """An Inspect without the private modules (None in sys.modules: importing them fails)."""
    import sys

    model = get_model("openai-api/judge/gpt-4o", base_url=URL, api_key="EMPTY")
    for name in (
        "inspect_ai.model._generate_config",
        "inspect_ai.model._providers.openai",
        "inspect_ai.model._providers.openai_compatible",
    ):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(inspect_internals, "_WARNED", set())
    with caplog.at_level("WARNING", logger="conceptcomb"):
        assert inspect_internals.run_seed() is None
        assert inspect_internals.run_seed() is None
        assert inspect_internals.openai_chat_base_url(model) == URL + "/"
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2, lines
    assert all(inspect_internals.SUPPORTED_INSPECT in line for line in lines)


def test_a_registered_scorer_keeps_the_metrics_it_was_built_with(monkeypatch, caplog) -> None:
    """`register_scorer`: what ``inspect score --scorer conceptcomb/NAME -S ...`` creates is
    the factory's scorer, named after the factory, with the metrics of the scorer it built;
    on an Inspect without `scorer_register`, the public decorator registers it (one line)."""
    import sys

    from inspect_ai._util.registry import create_registry_object, registry_info
    from inspect_ai.scorer import Score, Scorer, Target, accuracy, mean, scorer

    def build(kind: str) -> Scorer:
        @scorer(metrics=[mean()] if kind == "mean" else [accuracy()], name="inner")
        def inner() -> Scorer:
            async def score(state: TaskState, target: Target) -> Score:
                return Score(value=1.0)

            return score

        return inner()

    def metric_names(created: Scorer) -> list[str]:
        metrics = registry_info(created).metadata["metrics"]
        return [registry_info(metric).name for metric in metrics]

    inspect_internals.register_scorer(build, "internals_test_scorer")
    created = create_registry_object(
        "scorer", "conceptcomb/internals_test_scorer", {"kind": "mean"}
    )
    assert registry_info(created).name == "conceptcomb/internals_test_scorer"
    assert metric_names(created) == ["inspect_ai/mean"]

    monkeypatch.setitem(sys.modules, "inspect_ai.scorer._scorer", None)
    monkeypatch.setattr(inspect_internals, "_WARNED", set())
    with caplog.at_level("WARNING", logger="conceptcomb"):
        inspect_internals.register_scorer(build, "internals_fallback_scorer")
    assert [inspect_internals.SUPPORTED_INSPECT in r.getMessage() for r in caplog.records] == [True]
