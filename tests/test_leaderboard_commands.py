"""benchmarks/leaderboard_commands.py and benchmarks/lm_eval_batch_size.py run end to end
(on a few items: the figures are the scripts' to print, never a test's to assert)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
TIME = r"\d+\.\d\d s wall +\d+\.\d\d s CPU"


def _run(script: str, *options: str) -> list[str]:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *options],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    return [line for line in lines if not line.startswith("figure: ")]  # benchmarks/against.py's


@pytest.mark.slow  # METEOR's JVM starts in every command that checks: ~1 min
def test_leaderboard_commands_benchmark_runs() -> None:
    """The script with 3 items, 2 bundles, once each: two cggc_ood bundles made (the CGGC
    data parsed into a fresh cache, METEOR's JVM), then six fresh `conceptcomb` commands
    timed (validate-bundle of one and of both; export --to eee, export --to hf and report
    of the validated bundle; export --to eee --recheck: `--recheck-once`, as the three
    commands check a bundle through the same code, and tests/leaderboard/checks/
    test_verdicts.py rechecks through export and report). Each command that checks a bundle
    starts METEOR's JVM: 93 s alone with -n 0 on 2 cores at load 5-7 (246 s at load 6-14
    with --recheck for all three; 2026-12-06)."""
    lines = _run("leaderboard_commands.py", "--items", "3", "--bundles", "2", "--repeats", "1",
                 "--recheck-once")  # fmt: skip
    assert re.search(rf"^validate-bundle, one bundle +{TIME}; ratio to 8 s ", lines[2])
    assert lines[3].strip().startswith("cggc_ood: partial (3 of the 15985 test items")
    reused = [line for line in lines if "(verdict reused)" in line]
    assert len(reused) == 3 and all(re.search(rf"{TIME}; ratio to 2 s ", r) for r in reused)
    (again,) = [line for line in lines if "--recheck (checked again)" in line]
    assert again.startswith("export --to eee --recheck") and re.search(TIME, again)
    assert re.search(r"ratio to 2 x one: wall \d+\.\d{3} .*CPU \d+\.\d{3}", lines[-2])
    assert lines[-1].startswith("load after: ")


@pytest.mark.slow  # the packaged SmolLM2 generates (one lm_eval run: the script's loop is
def test_lm_eval_batch_size_benchmark_runs() -> None:  # the same for each batch size)
    """One lm_eval process at batch size 2, with the task index of our tasks only
    (`--our-tasks-index`): lm-eval's start, SmolLM2 loaded, the cggc_ood task built (every
    test item's demonstrations), 2 items generated and scored (METEOR's JVM). 60 s alone
    with -n 0 on 2 cores at load 5-7 (81 s at load 6-14 indexing lm-eval's ~14,000 task
    files first; 2026-12-06)."""
    lines = _run("lm_eval_batch_size.py", "--limit", "2", "--batch-sizes", "2", "--our-tasks-index")
    assert lines[0].startswith("cggc_ood, 2 items, SmolLM2-135M-Instruct on cpu")
    assert lines[0].endswith("; our tasks indexed only")
    assert re.match(r"--batch_size 2 +\d+\.\d s +ratio to batch size 1 1\.00 ", lines[1])
    assert lines[1].endswith("replies as batch size 1: 2/2") and lines[2].startswith("load after")
