"""benchmarks/harness_overhead.py runs end to end (on a few items: the figures are the
script's to print, never a test's to assert)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "harness_overhead.py"


@pytest.mark.slow
@pytest.mark.shared_data  # the ccpt group reads the CCPT files
def test_harness_overhead_benchmark_runs() -> None:
    """The script with 3 items per task, once each: six framework processes (lm_eval and
    inspect eval, each bare, plugin with the judge off and plugin judged by a loopback judge
    process) on the four CCPT tasks against a server that answers at once, then a timed
    import of Inspect's entry point. With 3 items and no model, it is mostly the processes'
    starts (imports, the datasets); `--our-tasks-index` spares each lm_eval indexing
    lm-eval's ~14,000 task files. Alone with -n 0 on 2 cores (2026-12-06): 161 s, 48 s of
    CPU at load 9.5-15 (148 s, 64 s of CPU at load 9.5-10 indexing them)."""
    options = ["--limit", "3", "--repeats", "1", "--our-tasks-index"]
    done = subprocess.run([sys.executable, str(SCRIPT), *options],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "lm-eval runs index our tasks and the bare ones only" in done.stdout
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("summary, plugin / bare wall time: lm-eval judge off ")
    assert re.search(r"Inspect judge off \d+\.\d\d \(CPU \d+\.\d\d\)", last)
    assert "Inspect entry point, imported by every inspect eval" in done.stdout
