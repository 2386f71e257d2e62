"""The generated task files (each benchmark's lm-eval ``task_yaml/`` and Inspect
``inspect_tasks.py``) are what ``python -m conceptcomb.frameworks.task_files`` writes from
the specs, and that command writes and checks them."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from conceptcomb.benchmarks import benchmarks
from conceptcomb.frameworks.task_files import TaskFiles, main, registered

KEYS = [benchmark.key for benchmark in benchmarks()]


@pytest.mark.parametrize("key", KEYS)
def test_the_generated_task_files_are_up_to_date(key: str) -> None:
    (files,) = registered([key])
    stale = [str(path) for path in files.stale()]
    assert stale == [], "run: python -m conceptcomb.frameworks.task_files"


@pytest.mark.parametrize("key", KEYS)
def test_every_task_function_is_a_written_out_task_that_inspect_list_reads(key: str) -> None:
    """``inspect list tasks`` lists the module-level ``@task`` functions of the file it parses:
    the generated file holds one per name of TASKS, in order."""
    (files,) = registered([key])
    tree = ast.parse(files.inspect_path.read_text(encoding="utf-8"))
    decorated = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(ast.unparse(d).split("(")[0] == "task" for d in node.decorator_list)
    ]
    tasks = importlib.import_module(f"{files.package}.inspect_tasks").TASKS
    assert decorated == list(tasks)


def test_check_lists_the_stale_files_and_writing_makes_them_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Against empty folders: --check lists every file and exits 1, writing them gives the
    committed files (the test above holds those up to date), then --check is clean."""
    (committed,) = registered(["mcrae"])
    yaml_dir, inspect_path = committed.yaml_dir, committed.inspect_path
    monkeypatch.setattr(TaskFiles, "yaml_dir", property(lambda _: tmp_path / "task_yaml"))
    monkeypatch.setattr(TaskFiles, "inspect_path", property(lambda _: tmp_path / "tasks.py"))
    (tmp_path / "task_yaml").mkdir()
    (tmp_path / "task_yaml" / "left_over.yaml").write_text("task: gone\n", encoding="utf-8")

    assert main(["--check", "mcrae"]) == 1
    out = capsys.readouterr().out
    expected = sorted(path.name for path in yaml_dir.iterdir() if path.suffix != ".py")
    for name in [*expected, "left_over.yaml", "tasks.py"]:
        assert f"{name} (run: python -m conceptcomb.frameworks.task_files)" in out, name

    assert main(["mcrae"]) == 0
    written = sorted(path.name for path in (tmp_path / "task_yaml").iterdir())
    assert written == expected  # the left-over file is gone
    for name in expected:
        assert (tmp_path / "task_yaml" / name).read_bytes() == (yaml_dir / name).read_bytes()
    assert (tmp_path / "tasks.py").read_bytes() == inspect_path.read_bytes()
    assert main(["--check", "mcrae"]) == 0
    assert capsys.readouterr().out == ""


def test_an_unknown_benchmark_is_refused_with_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["--check", "mcrea"])
    assert raised.value.code == 2
    assert "mcrea: not a benchmark of this package (known: ccpt, cggc" in capsys.readouterr().err
