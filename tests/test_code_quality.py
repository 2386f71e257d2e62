"""ruff is part of the test suite, so CI enforces it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=" ".join)
def test_ruff(command: list[str]) -> None:
    ruff = shutil.which("ruff")
    assert ruff, "pip install '.[test]'"
    done = subprocess.run(
        [ruff, *command, "src", "tests", "benchmarks", "examples", "scripts"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
