"""Real runs for the leaderboard tests: a framework's command run to success, and both runs
of a task made into their bundles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conceptcomb.testing.commands import OUR_LM_EVAL, model_run_env
from tests.leaderboard.eee_support import run_cli


def run_ok(command: list[str], timeout: int = 900) -> None:
    """``lm_eval ...`` or ``inspect eval ...``, which must exit 0 (its output's tail if not);
    its threads wait passively (`model_run_env`)."""
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=model_run_env()
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


# One process running `lm_eval_our_tasks.main` on each argument list of argv[1] in turn.
_IN_TURN = """import json, sys
from conceptcomb.frameworks.lm_eval_our_tasks import main
for argv in json.loads(sys.argv[1]):
    if main(argv) != 0:
        sys.exit(f"lm_eval {' '.join(argv)} failed")
"""


def run_ok_in_one_process(commands: list[list[str]], timeout: int = 900) -> None:
    """``commands.OUR_LM_EVAL`` command lines run one after another in one process, each as
    its own ``lm_eval`` would (lm-eval's parser, a fresh task index, its own outputs), which
    must all succeed: the imports (lm-eval, torch), the data our tasks read and METEOR's JVM
    are then paid once rather than once per run."""
    words = list(OUR_LM_EVAL)
    assert all(command[: len(words)] == words for command in commands), commands
    argvs = [command[len(words) :] for command in commands]
    run_ok([sys.executable, "-c", _IN_TURN, json.dumps(argvs)], timeout)


def bundles_of(runs: list[Path], out: Path, *options: str) -> dict[str, Path]:
    """``submit-bundle`` of the runs (one lm-eval, one Inspect), both valid: framework -> bundle."""
    code, printed = run_cli("submit-bundle", *map(str, runs), "--out", str(out), *options)
    assert code == 0 and printed.count("(valid)") == 2, printed
    return {path.name.split("_")[-1].split(".")[0]: path for path in out.glob("*.bundle.json")}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
