"""A task of ours whose model cannot start says so (issue 54): ``inspect eval ... --model
vllm/...`` without vLLM's ``vllm`` command on PATH stops before any sample, in one line,
exit 1 (Inspect alone: every sample fails, "Task interrupted (no samples completed)", exit
0); any task of ours that completed no sample names the error that stopped it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from conceptcomb.ccpt.inspect_tasks import TASKS

pytestmark = pytest.mark.shared_data

BIN = str(Path(sys.executable).parent)
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_a_vllm_model_without_the_vllm_command_stops_in_one_line(tmp_path: Path) -> None:
    path = os.pathsep.join([BIN, "/usr/bin", "/bin"])
    assert shutil.which("vllm", path=path) is None  # as in a venv that was not activated
    command = ["inspect", "eval", "conceptcomb/ccpt_tp", "--model", f"vllm/{MODEL}",
               "--limit", "1", "--log-dir", str(tmp_path), "--display", "plain"]  # fmt: skip
    env = {**os.environ, "PATH": path}
    env.pop("VLLM_BASE_URL", None)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    printed = done.stdout + done.stderr
    assert done.returncode == 1, printed[-3000:]
    assert [line for line in printed.splitlines() if "not on PATH" in line] == [
        "conceptcomb: error: --model vllm/HuggingFaceTB/SmolLM2-135M-Instruct: Inspect starts "
        "the model's server with the `vllm` command, which is not on PATH (is vLLM's "
        "environment activated?): run with PATH=/path/to/vllm-venv/bin:$PATH, or give a "
        "running server with --model-base-url http://HOST:PORT/v1."
    ]
    assert "Traceback" not in printed and not list(tmp_path.glob("*.eval"))  # nothing ran


def test_a_task_that_completed_no_sample_names_the_cause(tmp_path: Path, capfd) -> None:
    """A model that fails on every call (as one whose server never started): Inspect ends
    the task in error with no sample completed; our last line names that error."""

    def fails(*args: object) -> None:
        raise RuntimeError("the model's server did not start")

    model = get_model("mockllm/model", custom_outputs=fails)
    [log] = inspect_eval(
        TASKS["ccpt_tp"](), model=model, limit=2, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "error" and log.results is None
    said = [line for line in capfd.readouterr().err.splitlines() if "no sample completed" in line]
    assert said == [
        "[conceptcomb] ccpt_tp: no sample completed (error): RuntimeError(\"the model's "
        f'server did not start"); log: {log.location}'
    ]

    capfd.readouterr()  # a run that completes its samples says nothing of the kind
    [log] = inspect_eval(
        TASKS["ccpt_tp"](), model="mockllm/model", limit=1, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success"
    assert "no sample completed" not in capfd.readouterr().err
