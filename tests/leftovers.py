"""A pytest plugin: the session fails when its tests leave something behind (issue 53).

At session start it notes what is there (threads, event loops), gives the session a temporary
folder of its own (``TMPDIR``; pytest's ``tmp_path`` folders stay where they were) and marks
its environment with ``CONCEPTCOMB_TEST_OWNER``, which every process the tests start inherits.
At session end, after every fixture's teardown, it lists what is left:

* processes: its own descendants, and any process still carrying its mark (one whose parent
  exited, a member of a process group whose leader is gone): named, then killed;
* threads and event loops not there at start (not closed: ``loop.close()`` never called);
* files and folders left in the session's temporary folder (then removed).

Anything left makes the exit status 1, and the terminal summary says what. Under pytest-xdist
each worker checks itself and sends its list to the controller, which reports them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

MARK = "CONCEPTCOMB_TEST_OWNER"
# The machine's temporary folder, as the outermost session found it (for locks shared by
# sessions and workers, e.g. one vLLM at a time: see tests/conftest.py's vllm_turn).
SYSTEM_TMP = "CONCEPTCOMB_SYSTEM_TMPDIR"
WORKER_KEY = "conceptcomb_leftovers"
# Processes that outlive the tests by design, each with why.
ALLOWED_PROCESSES = {
    # multiprocessing starts one per process on first use of its semaphores or shared
    # memory (torch, datasets); it exits with the process that started it.
    "multiprocessing.resource_tracker": "lives as long as the test process",
    # pytest-xdist's workers (execnet's bootstrap): the controller stops them at its end.
    "exec(eval(sys.stdin.readline()))": "a worker of this session, exiting",
}
# Threads that libraries start once per process and keep (name prefixes), each with why.
ALLOWED_THREADS = {
    # tqdm's monitor of slow progress bars (daemon): started by the first bar of a process,
    # kept for the next ones (lm-eval, datasets and transformers show bars).
    "tqdm_monitor": "one per process and tqdm class, by design",
}
# Entries a library writes into the temporary folder as a cache (name prefixes), each with why.
ALLOWED_TEMP = {
    # torch's compiler cache (/tmp/torchinductor_<user>), made when torch loads its compiler.
    "torchinductor_": "a cache, removed with the session's temporary folder",
    # pytest's own tmp_path root of a pytest run that a test starts with an environment of
    # its own (tmp_path folders are kept by design); removed with the session's folder.
    "pytest-of-": "an inner pytest session's tmp_path folders",
}
GRACE_SECONDS = 3.0  # for processes and threads already on their way out


def system_tempdir() -> Path:
    """The machine's temporary folder, not the session's own (which is removed at its end)."""
    return Path(os.environ.get(SYSTEM_TMP) or tempfile.gettempdir())


@contextlib.contextmanager
def temporary_folder_of_own(prefix: str) -> Iterator[Path]:
    """TMPDIR, for this process and what it starts, a short folder of its own, removed at
    the end: for libraries that leave files in it (vLLM's IPC sockets and file store,
    torchelastic's folders), whose socket paths must stay under 108 characters."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=system_tempdir()))
    saved, saved_tempdir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(folder), str(folder)
    try:
        yield folder
    finally:
        if saved is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved
        tempfile.tempdir = saved_tempdir
        shutil.rmtree(folder, ignore_errors=True)


class Leftovers:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.found: list[str] = []
        self.mark = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.threads: set[int | None] = set()
        self.loops: set[int] = set()
        self.tmp: Path | None = None
        self.saved_env: dict[str, str | None] = {}

    # --- session start ---------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        system = system_tempdir()
        # pytest's own folders (tmp_path) stay in the machine's folder: kept for a look after.
        for key, value in {SYSTEM_TMP: str(system), "PYTEST_DEBUG_TEMPROOT": str(system)}.items():
            if key not in os.environ:
                self._setenv(key, value)
        # In the machine's folder, not nested in an outer session's or a worker's: Chromium's
        # socket path there must stay under 108 characters.
        self.tmp = Path(tempfile.mkdtemp(prefix="cc-tests-", dir=system))
        self._setenv("TMPDIR", str(self.tmp))
        self._setenv(MARK, self.mark)
        tempfile.tempdir = str(self.tmp)
        self.threads = {thread.ident for thread in threading.enumerate()}
        self.loops = {id(loop) for loop in _open_loops()}

    def _setenv(self, key: str, value: str) -> None:
        self.saved_env.setdefault(key, os.environ.get(key))
        os.environ[key] = value

    # --- session end -----------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        found = [*self._processes(), *self._threads(), *self._loops(), *self._temp_files()]
        self._restore()
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reports
            workeroutput[WORKER_KEY] = found
            return
        self.found += found
        if self.found and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        name = node.gateway.id
        self.found += [f"[{name}] {line}" for line in node.workeroutput.get(WORKER_KEY, [])]

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.found:
            return
        terminalreporter.section("left behind by the tests", sep="=", red=True, bold=True)
        for line in self.found:
            terminalreporter.line(line)
        terminalreporter.line(
            "tests must stop what they start (processes, threads, event loops) and write "
            "temporary files under tmp_path (tests/leftovers.py)"
        )

    def _processes(self) -> list[str]:
        deadline = time.monotonic() + GRACE_SECONDS
        while (left := self._left_processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        lines = []
        for process in left:
            lines.append(f"process {_describe(process)}")
            _kill(process)
        return lines

    def _left_processes(self) -> list[psutil.Process]:
        me = psutil.Process()
        left = {p.pid: p for p in me.children(recursive=True)}
        for process in psutil.process_iter():
            if process.pid != me.pid and process.pid not in left and self._marked(process):
                left[process.pid] = process
        return [p for p in left.values() if _running(p) and not _allowed(p)]

    def _marked(self, process: psutil.Process) -> bool:
        try:
            return process.environ().get(MARK) == self.mark
        except (psutil.Error, OSError):
            return False  # another user's, or gone

    def _threads(self) -> list[str]:
        def extra() -> list[threading.Thread]:
            return [
                t
                for t in threading.enumerate()
                if t.ident not in self.threads
                and not any(t.name.startswith(name) for name in ALLOWED_THREADS)
            ]

        deadline = time.monotonic() + GRACE_SECONDS
        while extra() and time.monotonic() < deadline:
            time.sleep(0.1)
        return [
            f"thread {t.name!r} ({'daemon' if t.daemon else 'not daemon'}, target {_target(t)})"
            for t in extra()
        ]

    def _loops(self) -> list[str]:
        lines = []
        for loop in _open_loops():
            if id(loop) not in self.loops:
                state = "running" if loop.is_running() else "not closed"
                lines.append(f"event loop {type(loop).__name__} at {id(loop):#x} ({state})")
        return lines

    def _temp_files(self) -> list[str]:
        if self.tmp is None or not self.tmp.is_dir():
            return []
        lines = [
            f"temporary file {path}{'/' if path.is_dir() else ''}"
            for path in sorted(self.tmp.iterdir())
            if not any(path.name.startswith(name) for name in ALLOWED_TEMP)
        ]
        shutil.rmtree(self.tmp, ignore_errors=True)
        return lines

    def _restore(self) -> None:
        for key, value in self.saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        tempfile.tempdir = None


@pytest.fixture(autouse=True)
def collector_as_found() -> Iterator[None]:
    """Each test leaves Python's garbage collector as it found it (on or off, frozen objects,
    thresholds): a test that turned it off once made later tests in the same worker fail,
    depending on the order of files (tests/scorers/test_rating_collector.py after
    tests/leaderboard/explore/test_collector.py). The settings are restored, and the test
    that changed them fails, naming what it left."""
    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    yield
    after = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    if after == before:
        return
    gc.unfreeze()
    gc.set_threshold(*before[1])
    (gc.enable if before[0] else gc.disable)()
    pytest.fail(
        "the test left the garbage collector changed: (enabled, threshold, frozen objects) "
        f"{before} before, {after} after; restore it in a fixture",
        pytrace=False,
    )


def _open_loops() -> list[asyncio.AbstractEventLoop]:
    gc.collect()
    return [
        o
        for o in gc.get_objects()
        if isinstance(o, asyncio.AbstractEventLoop) and not o.is_closed()
    ]


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _allowed(process: psutil.Process) -> bool:
    try:
        command = " ".join(process.cmdline())
    except psutil.Error:
        return True  # gone meanwhile
    return any(name in command for name in ALLOWED_PROCESSES)


def _describe(process: psutil.Process) -> str:
    try:
        command = " ".join(process.cmdline())[:200] or process.name()
        group = os.getpgid(process.pid)
        return f"{process.pid} (process group {group}, parent {process.ppid()}): {command}"
    except (psutil.Error, OSError):
        return f"{process.pid} (exited while being listed)"


def _kill(process: psutil.Process) -> None:
    """Stop a leftover so that it burdens no later test or session (after naming it)."""
    with contextlib.suppress(OSError):
        os.kill(process.pid, signal.SIGKILL)


def _target(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    if target is None:
        return type(thread).__qualname__
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', target)}"
