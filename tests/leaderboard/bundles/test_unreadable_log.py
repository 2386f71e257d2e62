"""An Inspect log that Inspect's own reader refuses (a lone surrogate's escape in a reply, as
an edited or cut file has): `submit-bundle`, `compare` and `explore` end in one line naming
the file, exit 2, no traceback. The log is a real run's (the README's offline smoke test),
McRae's on Inspect's mock model, its model renamed as an API model's run names it (a mock
model's run is left out)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conceptcomb.testing.commands import inspect_eval_command
from tests.conftest import SHARED_DATA
from tests.leaderboard.eee_support import run_cli

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def unreadable_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logs = tmp_path_factory.mktemp("unreadable")
    command = inspect_eval_command(
        "conceptcomb/mcrae_all", model="mockllm/model", limit=2, log_format="json",
        log_dir=logs, display="none", task_args={"data_dir": SHARED_DATA / "mcrae"},
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    log = next(logs.glob("*.json"))
    text = log.read_text(encoding="utf-8").replace('"mockllm/model"', '"openai/some-model"')
    reply = "Default output from mockllm/model"
    assert reply in text
    log.write_text(text.replace(reply, "Default output \\ud800", 1), encoding="utf-8")
    return logs


@pytest.mark.parametrize(
    "command",
    [["submit-bundle", "--out", "OUT"], ["compare"], ["explore", "--out", "OUT"]],
    ids=["submit-bundle", "compare", "explore"],
)
def test_one_line_naming_the_log(unreadable_log: Path, tmp_path: Path, command: list) -> None:
    args = [str(tmp_path) if arg == "OUT" else arg for arg in command]
    code, printed = run_cli(args[0], str(unreadable_log), *args[1:])
    assert code == 2, printed
    assert "Traceback" not in printed, printed
    line = printed.strip().splitlines()[-1]
    assert line.startswith("conceptcomb: error: ") and str(unreadable_log) in line, printed
    assert "Inspect cannot read this log's samples" in line, line
