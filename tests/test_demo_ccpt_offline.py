"""The demo without CCPT's files and without internet (issue 54): its line says how to get
the files onto such a machine (where `conceptcomb data fetch ccpt` puts them, the variable
that names them, the docs' section), and that section exists."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from conceptcomb import demo
from tests.conftest import REPO


def test_the_demo_says_how_to_bring_ccpt_to_an_offline_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(self: socket.socket, address: object) -> None:
        raise OSError("network refused by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR", raising=False)
    monkeypatch.setenv("CONCEPTCOMB_CACHE_DIR", str(tmp_path / "cache"))
    tasks, notes = demo.available_tasks(None)
    assert tasks == [demo.CGGC_TASK]
    (line,) = [note for note in notes if note.startswith("CCPT: skipped")]
    assert str(tmp_path / "cache" / "data" / "ccpt") in line
    assert "CONCEPTCOMB_DATA_DIR" in line and "docs/install.md" in line
    section = "CCPT's files on a machine without internet"
    assert section in line
    assert f"## {section}" in (REPO / "docs" / "install.md").read_text(encoding="utf-8")
