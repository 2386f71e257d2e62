"""scripts/ci_durations.py's tables and file times, and the suite's order from those times
(tests/conftest.py: files longest first, each file's tests and untimed files as shuffled)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest
from tests.conftest import REPO

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a" name="test_one" time="3.5"/>
<testcase classname="tests.test_a" name="test_two" time="1.0"/>
<testcase classname="tests.sub.test_b" name="test_three" time="120.2"><skipped/></testcase>
<testcase classname="tests.test_c" name="test_four" time="0.01"/>
</testsuite></testsuites>
"""


def test_the_tables_and_the_file_times(tmp_path: Path) -> None:
    report = tmp_path / "run.xml"
    report.write_text(REPORT, encoding="utf-8")
    times = tmp_path / "file_times.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "ci_durations.py"), str(report), "--top", "2",
         "--file-times", str(times)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("4 tests, 125 s of test time")
    assert "| `tests/sub/test_b.py::test_three` (skipped) | 120 |" in done.stdout
    assert "| `tests/test_a.py` | 4 |" in done.stdout
    assert json.loads(times.read_text()) == {
        "tests/sub/test_b.py": 120, "tests/test_a.py": 4, "tests/test_c.py": 0,
    }  # fmt: skip


def test_files_run_longest_first_and_keep_their_shuffled_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    times = tmp_path / "file_times.json"
    times.write_text(json.dumps({"tests/test_long.py": 300, "tests/test_mid.py": 40}))
    monkeypatch.setattr(conftest, "FILE_TIMES", times)
    shuffled = ["tests/test_new.py::test_b", "tests/test_mid.py::test_2", "tests/test_x.py::t",
                "tests/test_long.py::test_z", "tests/test_long.py::test_a",
                "tests/test_mid.py::test_1", "tests/test_new.py::test_a"]  # fmt: skip
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in shuffled]
    conftest.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        "tests/test_long.py::test_z", "tests/test_long.py::test_a",
        "tests/test_mid.py::test_2", "tests/test_mid.py::test_1",
        "tests/test_new.py::test_b", "tests/test_x.py::t", "tests/test_new.py::test_a",
    ]  # fmt: skip


def test_the_recorded_times_are_the_suites_files() -> None:
    """tests/file_times.json names test files, most of which are still there (a renamed file
    only loses its place until the times are written again)."""
    times = json.loads(conftest.FILE_TIMES.read_text(encoding="utf-8"))
    assert times and all(name.startswith("tests/") and name.endswith(".py") for name in times)
    here = [name for name in times if (REPO / name).is_file()]
    assert len(here) >= 0.9 * len(times), sorted(set(times) - set(here))


def test_files_waiting_for_a_background_install_start_after_the_headstart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """test_vllm.py, second longest, would start at once and wait minutes for vLLM's
    environment (.ci/run makes it while the suite runs): it goes after HEADSTART_S of other
    files while its install has not ended, and in its place once it has."""
    times = tmp_path / "file_times.json"
    times.write_text(json.dumps({"tests/a.py": 500, "tests/vllm.py": 400, "tests/b.py": 300,
                                 "tests/c.py": 200, "tests/d.py": 100}))  # fmt: skip
    monkeypatch.setattr(conftest, "FILE_TIMES", times)
    monkeypatch.setattr(conftest, "HEADSTART_S", 700)
    done = tmp_path / "vllm.done"
    monkeypatch.setenv(f"{conftest.VLLM_PYTHON_ENV}_DONE", str(done))

    def order() -> list[str]:
        items = [SimpleNamespace(nodeid=f"tests/{name}.py::t", fixturenames=fixtures)
                 for name, fixtures in (("d", []), ("vllm", ["vllm_python"]), ("c", []),
                                        ("a", []), ("b", []))]  # fmt: skip
        conftest.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
        return [item.nodeid.split(".py")[0].removeprefix("tests/") for item in items]

    assert order() == ["a", "b", "vllm", "c", "d"]  # after 500 + 300 s of other files
    done.write_text("0\n")
    assert order() == ["a", "vllm", "b", "c", "d"]  # made: longest first
