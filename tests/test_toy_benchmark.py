"""A fifth benchmark plugs in through the contract alone: its own folder and one registry line.

A copy of the package gets a toy benchmark (`toy/`, written below: data, prompt, scoring,
the lm-eval declaration, the Inspect task, its table) and one more line in
`conceptcomb.benchmarks.REGISTRY`, nothing else. The wheel built from that copy carries
its YAML where lm-eval finds it and, installed, lm-eval runs its task (the YAML written by
the shared renderer), Inspect runs ``conceptcomb/toy_echo`` (the entry point iterates the
registry) and ``conceptcomb report`` shows its table from both results.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import conceptcomb
from conceptcomb.testing.model_server import ModelServer
from tests.conftest import REPO

pytestmark = pytest.mark.slow

TOY = {
    "__init__.py": '"""A toy benchmark: repeat a word."""\n',
    "items.py": """
WORDS = ("apple", "river", "stone")


def prompt(word: str) -> str:
    return f"Repeat the word {word}."


def score(reply: str, word: str) -> float:
    return float(reply.strip().lower() == word)
""",
    "benchmark.py": """
from conceptcomb.common.contract import Benchmark, MetricInfo


def tasks():
    return {"toy_echo": [MetricInfo("exact_match", True, "mean", "EM")]}


def datasets():
    return {}


BENCHMARK = Benchmark(key="toy", title="Toy: repeat a word", paper="nobody (2026)")
""",
    "lm_eval_hooks.py": """
import datasets

from conceptcomb.toy.items import WORDS, prompt, score


def load_dataset(toy_task, **_):
    rows = [{"prompt": prompt(word), "target": word} for word in WORDS]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def process_results(doc, results):
    return {"exact_match": score(results[0], doc["target"])}
""",
    "lm_eval_yaml.py": '''
"""The toy's lm-eval YAML."""

import sys
from pathlib import Path

from conceptcomb.frameworks import lm_eval_yaml
from conceptcomb.frameworks.lm_eval_yaml import Function, Leaf, TaskYaml, Template
from conceptcomb.toy.benchmark import tasks

YAML_DIR = Path(__file__).parent / "task_yaml"
HOOKS = "conceptcomb.toy.lm_eval_hooks"


def declaration():
    keys = {
        "custom_dataset": Function(f"{HOOKS}.load_dataset"),
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_text": "prompt",
        "doc_to_target": "target",
        "process_results": Function(f"{HOOKS}.process_results"),
        "generation_kwargs": {"until": ["\\\\n"], "max_gen_toks": 8, "do_sample": False},
        "metric_list": lm_eval_yaml.metric_list(tasks()["toy_echo"]),
        "metadata": {"version": 1.0},
    }
    template = Template("_toy_yaml", keys)
    return TaskYaml("conceptcomb.toy.lm_eval_yaml", [template], [Leaf("toy_echo", "_toy_yaml")],
                    "toy_task")


main = lm_eval_yaml.Commands(declaration, YAML_DIR).main

if __name__ == "__main__":
    sys.exit(main())
''',
    "inspect_tasks.py": """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import scorer

from conceptcomb.frameworks.inspect_tasks import ItemMetrics, build_task, chat
from conceptcomb.toy.benchmark import tasks
from conceptcomb.toy.items import WORDS, prompt, score

ITEMS = ItemMetrics(tasks()["toy_echo"])


@scorer(metrics=ITEMS.metrics(), name="toy")
def toy_scorer():
    async def run(state, target):
        return ITEMS.score({"exact_match": score(state.output.completion, target.text)})

    return run


@task
def toy_echo() -> Task:
    samples = [Sample(id=w, input=chat([("user", prompt(w))]), target=w) for w in WORDS]
    config = GenerateConfig(temperature=0.0, max_tokens=8)
    return build_task("toy_echo", samples, toy_scorer(), config, "1.0", {"benchmark": "toy"})
""",
    "tables.py": """
from conceptcomb.common.tables import Column, Table, collect, our_row


def tables(runs):
    table = Table("toy", "toy", "Toy: repeat a word", [Column("exact_match", "EM", "", True)])
    for run in runs:
        found, cells = collect(run, {"toy_echo": ("", ["exact_match"])})
        if found:
            table.rows.append(our_row(run, "Base", found, cells))
    return [table]


def plots():
    return {}
""",
    "published.py": "def published():\n    return []\n",
    "templates.py": """
from conceptcomb.toy.items import prompt


def templates():
    return {"toy/user": prompt("<word>")}
""",
}
REGISTRY_LINE = '    "conceptcomb.toy.benchmark",\n'


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with the toy benchmark added: its folder and one registry line."""
    root = tmp_path_factory.mktemp("fifth") / "project"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(conceptcomb.__file__).parent, root / "src" / "conceptcomb", ignore=ignore)
    for name in ("pyproject.toml", "hatch_build.py", "README.md"):
        shutil.copy(REPO / name, root / name)
    folder = root / "src" / "conceptcomb" / "toy"
    folder.mkdir()
    for name, text in TOY.items():
        (folder / name).write_text(text.lstrip("\n"), encoding="utf-8")
    registry = root / "src" / "conceptcomb" / "benchmarks.py"
    before = registry.read_text(encoding="utf-8")
    last = '    "conceptcomb.mcrae.benchmark",\n'
    after = before.replace(last, last + REGISTRY_LINE)
    registry.write_text(after, encoding="utf-8")
    added = [line for line in difflib.ndiff(before.splitlines(True), after.splitlines(True))
             if line.startswith(("+ ", "- "))]  # fmt: skip
    assert added == ["+ " + REGISTRY_LINE]
    done = run(root, sys.executable, "-m", "conceptcomb.toy.lm_eval_yaml")
    assert done.returncode == 0, done.stderr
    return root


def run(root: Path, *args: str, path: Path | None = None) -> subprocess.CompletedProcess:
    """``args`` in ``root`` with the package imported from ``path`` (default: the copy's src)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONCEPTCOMB_")}
    env["PYTHONPATH"] = str(path or root / "src")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=root)


@pytest.fixture(scope="module")
def wheel(copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the copy, as a user's ``pip install`` builds it."""
    out = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(copy)]
    done = subprocess.run(build, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = out.glob("conceptcomb-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """That wheel installed into a site-packages folder of its own, put before this
    environment's: Inspect prefixes ``conceptcomb/`` only to tasks of an installed package."""
    site = tmp_path_factory.mktemp("toy") / "site-packages"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
               str(wheel)]  # fmt: skip
    done = subprocess.run(install, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return site


def test_lm_eval_and_inspect_run_it_and_the_report_shows_it(
    copy: Path, installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both frameworks' API runners against a loopback model server (the report leaves runs
    of the frameworks' mock models out, so the runs are of a served model)."""
    task_yaml = installed / "lm_eval" / "tasks" / "conceptcomb" / "toy"  # where the wheel put it
    with ModelServer({}, default="apple") as server:
        monkeypatch.setenv("LOOPBACK_API_KEY", "x")  # Inspect's openai-api/loopback provider
        monkeypatch.setenv("LOOPBACK_BASE_URL", server.base_url)
        lm_eval = run(copy, "lm_eval", "--model", "local-chat-completions", "--model_args",
                      f"model=toy-echo,base_url={server.base_url}/chat/completions,max_retries=1",
                      "--apply_chat_template", "--tasks", "toy_echo", "--include_path",
                      str(task_yaml), "--output_path", "lm_eval_out", path=installed)  # fmt: skip
        assert lm_eval.returncode == 0, lm_eval.stderr[-3000:]
        assert "toy_echo" in lm_eval.stdout and "exact_match" in lm_eval.stdout
        inspect = run(copy, "inspect", "eval", "conceptcomb/toy_echo", "--model",
                      "openai-api/loopback/toy-echo", "--log-dir", "inspect_logs",
                      path=installed)  # fmt: skip
        assert inspect.returncode == 0, inspect.stderr[-3000:]
        assert server.asked > 0
    report = run(copy, sys.executable, "-m", "conceptcomb.cli", "report", "lm_eval_out",
                 "inspect_logs", "--out", "report", "--no-plots", path=installed)  # fmt: skip
    assert report.returncode == 0, report.stdout[-2000:] + report.stderr[-3000:]
    page = (copy / "report" / "toy.md").read_text(encoding="utf-8")
    assert "Toy: repeat a word" in page
    assert "lm-eval" in page and "inspect" in page  # a row from each framework
    assert (copy / "report" / "toy.csv").is_file()


def test_the_wheel_carries_its_yaml_where_lm_eval_finds_it(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "lm_eval/tasks/conceptcomb/toy/toy_echo.yaml" in names
    assert "lm_eval/tasks/conceptcomb/toy/_toy_yaml" in names
    assert "conceptcomb/toy/benchmark.py" in names
