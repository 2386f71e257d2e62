"""A fifth benchmark plugs in through the contract alone: its own folder and one registry line.

A copy of the package gets the toy benchmark of examples/toy_benchmark/ (its `toy/` folder:
data, prompt, docs, scoring, the lm-eval declaration, the Inspect adapter, its table; and
the files generated from its specs) and one more line in `conceptcomb.benchmarks.REGISTRY`,
nothing else, as the example's README tells a newcomer. The wheel built from that copy
carries its YAML where lm-eval finds it and, installed, lm-eval runs its task, Inspect runs
``conceptcomb/toy_echo`` (the entry point iterates the registry) and ``conceptcomb report``
shows its table from both results. A task variant is one spec line in ``toy/tasks.py`` and
the generator: both frameworks then find it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import conceptcomb
from conceptcomb.testing.commands import inspect_eval_command, lm_eval_command
from conceptcomb.testing.model_server import ModelServer
from scripts.toy_example import GENERATED, package_with_toy, run

pytestmark = pytest.mark.slow

PACKAGE = Path(conceptcomb.__file__).parent  # the package as installed, copied
GENERATOR = "conceptcomb.frameworks.task_files"


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with the example's toy benchmark added: its folder and one registry line."""
    root = tmp_path_factory.mktemp("fifth") / "project"
    package_with_toy(root, PACKAGE)
    return root


def install(project: Path, out: Path) -> tuple[Path, Path]:
    """(the wheel built from ``project``, as a user's ``pip install`` builds it; that wheel
    installed into a site-packages folder of its own, put before this environment's:
    Inspect prefixes ``conceptcomb/`` only to tasks of an installed package)."""
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(project)]
    done = subprocess.run(build, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = out.glob("conceptcomb-*.whl")
    site = out / "site-packages"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
               str(wheel)]  # fmt: skip
    done = subprocess.run(install, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return wheel, site


@pytest.fixture(scope="module")
def installed(copy: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return install(copy, tmp_path_factory.mktemp("wheel"))


def test_the_examples_generated_files_are_what_the_generator_writes(copy: Path) -> None:
    done = run(copy, sys.executable, "-m", GENERATOR, "--check", "toy")
    assert done.returncode == 0, done.stdout + done.stderr + "\nrun: python scripts/toy_example.py"


def test_lm_eval_and_inspect_run_it_and_the_report_shows_it(
    copy: Path, installed: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both frameworks' API runners against a loopback model server (the report leaves runs
    of the frameworks' mock models out, so the runs are of a served model)."""
    site = installed[1]
    task_yaml = site / "lm_eval" / "tasks" / "conceptcomb" / "toy"  # where the wheel put it
    with ModelServer({}, default="apple") as server:
        monkeypatch.setenv("LOOPBACK_API_KEY", "x")  # Inspect's openai-api/loopback provider
        monkeypatch.setenv("LOOPBACK_BASE_URL", server.base_url)
        lm_eval_line = lm_eval_command(
            "toy_echo", model="local-chat-completions",
            model_args=f"model=toy-echo,base_url={server.base_url}/chat/completions,max_retries=1",
            include_path=task_yaml, apply_chat_template=True, output_path="lm_eval_out",
        )  # fmt: skip
        lm_eval = run(copy, *lm_eval_line, path=site)
        assert lm_eval.returncode == 0, lm_eval.stderr[-3000:]
        assert "toy_echo" in lm_eval.stdout and "exact_match" in lm_eval.stdout
        inspect_line = inspect_eval_command(
            "conceptcomb/toy_echo", model="openai-api/loopback/toy-echo", log_dir="inspect_logs"
        )
        inspect = run(copy, *inspect_line, path=site)
        assert inspect.returncode == 0, inspect.stderr[-3000:]
        assert server.asked > 0
    report = run(copy, sys.executable, "-m", "conceptcomb.cli", "report", "lm_eval_out",
                 "inspect_logs", "--out", "report", "--no-plots", path=site)  # fmt: skip
    assert report.returncode == 0, report.stdout[-2000:] + report.stderr[-3000:]
    page = (copy / "report" / "toy.md").read_text(encoding="utf-8")
    assert "Toy: repeat a word" in page
    assert "lm-eval" in page and "inspect" in page  # a row from each framework
    assert (copy / "report" / "toy.csv").is_file()


def test_the_wheel_carries_its_yaml_where_lm_eval_finds_it(installed: tuple[Path, Path]) -> None:
    names = set(zipfile.ZipFile(installed[0]).namelist())
    assert "lm_eval/tasks/conceptcomb/toy/toy_echo.yaml" in names
    assert "lm_eval/tasks/conceptcomb/toy/_toy_yaml" in names
    assert "conceptcomb/toy/benchmark.py" in names


def file_hashes(root: Path) -> dict[Path, str]:
    """Every file of the project (Python's byte-code caches aside) -> its sha256."""
    return {
        path.relative_to(root): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


LM_EVAL_FINDS = """
import json, sys
from lm_eval.tasks import TaskManager, get_task_dict
manager = TaskManager(include_path=sys.argv[1], include_defaults=False)
task = get_task_dict([sys.argv[2]], manager)[sys.argv[2]]
doc = list(task.eval_docs)[0]
print(json.dumps({"index": sorted(manager.task_index), "prompt": task.doc_to_text(doc),
                  "target": task.doc_to_target(doc)}))
"""
INSPECT_FINDS = """
import json
from inspect_ai._util.entrypoints import ensure_entry_points
from inspect_ai._util.registry import registry_find, registry_info
ensure_entry_points()
found = registry_find(lambda info: info.type == "task")
print(json.dumps({registry_info(fn).name: fn.__doc__ for fn in found}))
"""


def test_a_task_variant_is_one_spec_line_and_both_frameworks_find_it(tmp_path: Path) -> None:
    """The acceptance of a variant in two places: one line in ``toy/tasks.py``, then
    ``python -m conceptcomb.frameworks.task_files``; every other changed file is generated."""
    root = tmp_path / "project"
    toy = package_with_toy(root, PACKAGE)
    before = file_hashes(root)
    specs = toy / "tasks.py"
    text = specs.read_text(encoding="utf-8")
    assert text.count("    ToySpec(),\n") == 1
    variant = text.replace("    ToySpec(),\n", "    ToySpec(),\n    ToySpec(times=3),\n")
    specs.write_text(variant, encoding="utf-8")
    done = run(root, sys.executable, "-m", GENERATOR, "toy")
    assert done.returncode == 0, done.stderr[-3000:]

    after = file_hashes(root)
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    folder = toy.relative_to(root)
    generated = {path for path in changed if path.relative_to(folder).parts[0] in GENERATED}
    edited = changed - generated
    assert edited == {folder / "tasks.py"} and len(edited) <= 2
    assert generated == {
        folder / "inspect_tasks.py",
        folder / "__init__.py",  # its exports (`__all__`), below its docstring
        folder / "task_yaml" / "toy_echo_x3.yaml",
    }

    # lm-eval's own index of the task folder, and the task it builds from it.
    found = run(root, sys.executable, "-c", LM_EVAL_FINDS, str(toy / "task_yaml"), "toy_echo_x3")
    assert found.returncode == 0, found.stderr[-3000:]
    lm_eval = json.loads(found.stdout.strip().splitlines()[-1])
    assert {"toy_echo", "toy_echo_x3"} <= set(lm_eval["index"])
    assert lm_eval["prompt"] == "Repeat the word apple 3 times."
    assert lm_eval["target"] == "apple apple apple"

    # What `inspect list tasks` reads (the source files), and Inspect's registry once installed.
    listed = run(root, "inspect", "list", "tasks", "src/conceptcomb/toy")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "src/conceptcomb/toy/inspect_tasks.py@toy_echo_x3" in listed.stdout.split()
    site = install(root, tmp_path / "wheel")[1]
    registry = run(root, sys.executable, "-c", INSPECT_FINDS, path=site)
    assert registry.returncode == 0, registry.stderr[-3000:]
    tasks = json.loads(registry.stdout.strip().splitlines()[-1])
    assert tasks["conceptcomb/toy_echo_x3"] == "Toy: repeat a word 3 times."
    assert "conceptcomb/toy_echo" in tasks and "conceptcomb/ccpt_pi_emergent" in tasks
    line = inspect_eval_command(
        "conceptcomb/toy_echo_x3", model="mockllm/model", log_dir="variant_logs"
    )
    ran = run(root, *line, path=site)
    assert ran.returncode == 0, ran.stderr[-3000:]
