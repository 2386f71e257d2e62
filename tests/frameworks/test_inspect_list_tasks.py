"""`inspect list tasks` prints what it printed before the benchmarks exported their tasks
(issue 47): the recording, `inspect_list_tasks.txt`, was taken on the tree before that
change. A new task adds its line there (`inspect list tasks src/conceptcomb`)."""

from __future__ import annotations

import subprocess

from conceptcomb.benchmarks import benchmarks
from tests.conftest import REPO

RECORDED = REPO / "tests" / "frameworks" / "inspect_list_tasks.txt"


def test_inspect_list_tasks_is_unchanged() -> None:
    done = subprocess.run(
        ["inspect", "list", "tasks", "src/conceptcomb"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == RECORDED.read_text(encoding="utf-8").splitlines()


def test_every_listed_task_is_exported_by_its_benchmark() -> None:
    """Each benchmark's package exports (`__all__`) exactly the tasks listed from it."""
    import importlib

    listed = RECORDED.read_text(encoding="utf-8").splitlines()
    for benchmark in benchmarks():
        package = importlib.import_module(benchmark.inspect_tasks.rpartition(".")[0])
        folder = package.__name__.split(".")[-1]
        names = [line.split("@")[1] for line in listed if f"/{folder}/" in line]
        assert sorted(package.__all__) == sorted(names)
        assert all(callable(getattr(package, name)) for name in names)
