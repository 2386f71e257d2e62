"""Real runs for the leaderboard tests: a framework's command run to success, and both runs
of a task made into their bundles."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conceptcomb.testing.commands import model_run_env
from tests.leaderboard.eee_support import run_cli


def run_ok(command: list[str], timeout: int = 900) -> None:
    """``lm_eval ...`` or ``inspect eval ...``, which must exit 0 (its output's tail if not);
    its threads wait passively (`model_run_env`)."""
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=model_run_env()
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def bundles_of(runs: list[Path], out: Path, *options: str) -> dict[str, Path]:
    """``submit-bundle`` of the runs (one lm-eval, one Inspect), both valid: framework -> bundle."""
    code, printed = run_cli("submit-bundle", *map(str, runs), "--out", str(out), *options)
    assert code == 0 and printed.count("(valid)") == 2, printed
    return {path.name.split("_")[-1].split(".")[0]: path for path in out.glob("*.bundle.json")}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
