"""The session-end check of tests/leftovers.py, on small generated test files run by pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

from tests.conftest import REPO

CONFTEST = """
from tests.leftovers import Leftovers

def pytest_configure(config):
    config.pluginmanager.register(Leftovers(config), "conceptcomb-leftovers")
"""

LEAKS = """
import asyncio, subprocess, sys, tempfile, threading, time

KEPT = []

def test_a_process():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(67)"])

def test_a_process_group_whose_leader_exited():
    subprocess.run(["sh", "-c", "sleep 68 &"], start_new_session=True, check=True)

def test_a_thread():
    threading.Thread(target=time.sleep, args=(69,), name="leaky", daemon=True).start()

def test_an_event_loop():
    KEPT.append(asyncio.new_event_loop())

def test_a_temporary_file():
    tempfile.mkstemp(prefix="leaky-")
"""

CLEAN = """
import asyncio, pathlib, subprocess, sys, tempfile, threading

def test_what_it_starts_it_stops(tmp_path):
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    asyncio.run(asyncio.sleep(0))
    (tmp_path / "kept.txt").write_text("in tmp_path")
    with tempfile.TemporaryDirectory() as folder:
        pathlib.Path(folder, "x").write_text("x")
"""


def run_pytest(folder: Path, source: str, *options: str) -> subprocess.CompletedProcess:
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (folder / "test_generated.py").write_text(source, encoding="utf-8")
    path = os.pathsep.join([str(REPO), str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "pytest", "-p", "xdist", "-p", "no:cacheprovider", "-q",
               *options, "test_generated.py"]  # fmt: skip
    # Only the plugins these runs need: loading every installed one takes 10 s of CPU.
    env = {**os.environ, "PYTHONPATH": path, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def sleepers(seconds: tuple[str, ...]) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or [])
        if any(f"sleep({s})" in command or command == f"sleep {s}" for s in seconds):
            found.append(process)
    return found


def test_each_kind_of_leftover_fails_the_session_and_is_named(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, LEAKS, "-n", "0")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-3000:]
    assert "5 passed" in output, output[-3000:]
    summary = output.split("left behind by the tests")[1]
    assert "process " in summary and "time.sleep(67)" in summary, summary
    assert "sleep 68" in summary and "process group" in summary, summary
    assert "thread 'leaky' (daemon, target time.sleep)" in summary, summary
    assert "event loop" in summary and "not closed" in summary, summary
    assert "temporary file " in summary and "leaky-" in summary, summary
    assert not sleepers(("67", "68")), "the check stops the processes it names"


def test_a_worker_s_leftover_fails_the_distributed_session(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, LEAKS.split("def test_a_process_group")[0], "-n", "1")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-3000:]
    summary = output.split("left behind by the tests")[1]
    assert "[gw0] process " in summary and "time.sleep(67)" in summary, summary
    assert not sleepers(("67",))


def test_a_clean_session_passes(tmp_path: Path) -> None:
    for options in (["-n", "0"], ["-n", "1"]):
        done = run_pytest(tmp_path, CLEAN, *options)
        output = done.stdout + done.stderr
        assert done.returncode == 0, output[-3000:]
        assert "left behind" not in output


COLLECTOR = """
import gc

def test_turns_the_collector_off():
    gc.disable()

def test_finds_it_on():
    assert gc.isenabled()
"""


def test_a_test_that_leaves_the_collector_off_fails_and_the_next_finds_it_on(
    tmp_path: Path,
) -> None:
    (tmp_path / "conftest.py").write_text(
        "from tests.leftovers import collector_as_found  # noqa: F401\n", encoding="utf-8"
    )
    (tmp_path / "test_generated.py").write_text(COLLECTOR, encoding="utf-8")
    path = os.pathsep.join([str(REPO), str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
               "-q", "test_generated.py"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": path, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-3000:]
    assert "2 passed, 1 error" in output, output[-3000:]
    assert "ERROR at teardown of test_turns_the_collector_off" in output, output[-3000:]
    assert "the test left the garbage collector changed" in output, output[-3000:]
    assert ", 0) before, (False, (" in output, output[-3000:]
